"""metrics selectors."""
