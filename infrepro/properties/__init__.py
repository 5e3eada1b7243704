"""infrepro.properties."""
