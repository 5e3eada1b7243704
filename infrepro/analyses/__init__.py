"""infrepro.analyses."""
