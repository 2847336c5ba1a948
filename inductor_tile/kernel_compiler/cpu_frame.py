"""The one argument a CPU kernel's entry takes: a frame of 8-byte slots, one per user argument,
then the grid and the range of programs to run. Written by `runtime/cpu_launcher.py`, read by the
entry that `to_llvm/targets/cpu.py` builds; this module is their shared layout (and imports nothing,
so that launching cached kernels does not load the compiler)."""

#: bytes per user argument in the frame
FRAME_SLOT = 8
