"""infrepro.lmm."""
