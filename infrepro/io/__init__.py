"""infrepro.io."""
