"""program API (DRF)."""
