"""freeze tasks."""
