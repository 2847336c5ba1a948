"""Python AST of a @jit function -> TTIR."""
