"""decision."""
