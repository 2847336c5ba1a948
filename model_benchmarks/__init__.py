"""Benchmarks: kernel micro-benchmarks and compile times (model speedup runs to come)."""
