"""Helpers of benchmarks/paper_scale.py: the synthetic experiment and the job monitor."""
