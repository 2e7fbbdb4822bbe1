"""Benchmarks: each prints figures as ratios to a reference measured in the same run."""
