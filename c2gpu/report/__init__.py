"""Reports: JSON (stable, versioned schema) and text."""
