"""Validation of the analyses on simulated experiments with known truth: the simulator
(`simulate`) and the analyses' tests re-composed for calibration (`calibration`). Used by the
benchmarks and the tests; nothing else in the package imports it."""
