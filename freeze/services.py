"""freeze services."""
