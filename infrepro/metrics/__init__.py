"""infrepro.metrics."""
