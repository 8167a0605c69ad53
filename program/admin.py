"""program admin."""
