"""program services."""
