"""program forms."""
