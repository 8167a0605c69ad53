"""freeze models."""
