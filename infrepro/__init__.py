"""infrepro: inferential reproducibility analyses of ML experiments."""

__version__ = "0.1.0"
