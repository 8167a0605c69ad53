"""program selectors."""
