"""program models."""
