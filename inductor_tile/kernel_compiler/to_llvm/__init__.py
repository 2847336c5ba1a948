"""TTGIR -> LLVM IR with llvmlite: the shared lowering and the targets."""
