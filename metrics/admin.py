"""metrics admin."""
