"""metrics services."""
