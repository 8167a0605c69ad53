"""freeze forms."""
