"""plumbing."""
