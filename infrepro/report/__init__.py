"""infrepro.report."""
