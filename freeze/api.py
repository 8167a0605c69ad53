"""freeze API (DRF)."""
