"""metrics forms."""
