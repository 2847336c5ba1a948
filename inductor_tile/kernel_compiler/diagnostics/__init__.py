"""Diagnostics the compiler gives about a kernel it compiled (performance warnings)."""
