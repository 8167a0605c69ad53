"""metrics tasks."""
