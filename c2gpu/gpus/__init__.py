"""GPU catalog data files."""
