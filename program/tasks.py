"""program tasks."""
