"""Launching kernels: the @jit object, grids, and the interpreter's launcher."""
