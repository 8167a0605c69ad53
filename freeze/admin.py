"""freeze admin."""
