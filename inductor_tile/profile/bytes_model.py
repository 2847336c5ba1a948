"""How many bytes a generated kernel moves per call: what its loads and stores can touch.

Counted at compile time from the fused group's scheduler nodes (Inductor's memory dependencies),
per buffer the kernel reads from or writes to memory (buffers produced and consumed inside the
group stay in registers and are not counted; a buffer the group writes is not read back):

- a direct access (``MemoryDep`` whose index uses only loop variables) touches the product of
  the ranges of the variables in its index: a broadcast input (a bias read for every row) counts
  once, a slice counts its own elements.  Exact for the affine, one-to-one indexing Inductor gives.
- an indirect access (a gather: the index uses a loaded value, ``tmp3``) touches at most one
  element per iteration of its loops: the product of all its ranges (the embedding rows a batch
  looks up, not the whole table).  An upper bound.
- a ``StarDep`` (the whole buffer) counts the buffer; several different accesses of one buffer
  add up (they may overlap): upper bounds too, unless one direct access alone covers the buffer
  (a layernorm reads its input for the statistics and again to normalize): then the buffer, exactly.
Every buffer's count is at most its size.  The sizes are the graph's size hints: with symbolic
shapes the model has no number (``None``) and the launch's tensor arguments bound it instead.
"""

from __future__ import annotations


def group_bytes(snodes) -> tuple[int | None, bool]:
    """(bytes per call of a kernel running the scheduler nodes ``snodes``, whether that number is
    only an upper bound); (None, True) when the model cannot tell (symbolic sizes, unknown buffers)."""
    import sympy
    from torch._inductor.dependencies import MemoryDep, StarDep
    from torch._inductor.virtualized import V

    nodes = [sub for snode in snodes for sub in (snode.get_nodes() if hasattr(snode, "get_nodes") else [snode])]
    members = {node.get_name() for node in nodes}
    written, accesses, writes = set(), {}, {}
    for node in nodes:  # in order: a buffer an earlier node of the group wrote is not read from memory
        for dep in node.read_writes.reads:
            if dep.name not in written:
                accesses.setdefault(dep.name, set()).add(dep)
        for dep in node.read_writes.writes:
            written.add(dep.name)
            writes.setdefault(dep.name, set()).add(dep)
    outputs = set(V.graph.get_output_names())
    for name, deps in writes.items():
        if name in outputs or _used_outside(nodes[0].scheduler, name, members):
            accesses.setdefault(("written", name), set()).update(deps)
    total, bound = 0, False
    for name, deps in accesses.items():
        name = name[1] if isinstance(name, tuple) else name  # read and written (in place): both count
        deps = [d for d in deps if isinstance(d, (MemoryDep, StarDep))]
        if not deps:
            continue
        try:
            numel = sympy.sympify(V.graph.get_numel(name))
            itemsize = V.graph.get_dtype(name).itemsize
        except (KeyError, NotImplementedError, AttributeError):
            return None, True
        counts = []  # (elements, exact) per access
        for dep in deps:
            if isinstance(dep, StarDep):
                counts.append((numel, False))
            elif dep.is_indirect():
                counts.append((sympy.Mul(*dep.size), False))
            else:
                used = dep.index.free_symbols
                counts.append((sympy.Mul(*[size for var, size in zip(dep.var_names, dep.size) if var in used]), True))
        whole = [n for n, exact in counts if exact and (sympy.sympify(n) - numel).is_nonnegative]
        if whole:  # one direct access covers the buffer: the buffer, exactly, whatever the others read
            elements = numel
        else:
            elements = sympy.Add(*[n for n, _ in counts])
            bound = bound or len(counts) > 1 or not counts[0][1]
        counted = sympy.Min(elements, numel)
        if counted.free_symbols:
            return None, True
        total += int(counted) * itemsize
    return total, bound


def _used_outside(scheduler, name: str, members: set[str]) -> bool:
    """Whether buffer ``name`` has a user outside the group (then it is written to memory)."""
    buffer = getattr(scheduler, "name_to_buf", {}).get(name)
    if buffer is None or not buffer.users:
        return True
    return any(not hasattr(user.node, "get_name") or user.node.get_name() not in members for user in buffer.users)
