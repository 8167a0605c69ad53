"""freeze selectors."""
