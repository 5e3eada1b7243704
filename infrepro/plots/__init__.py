"""infrepro.plots."""
