"""metrics models."""
