"""What the profiler knows about each kernel, recorded while the backend generates code.

The scheduling class calls ``record_kernel`` for every fused group that becomes a tile kernel
(a kernel shared by identical groups, a model's repeated layers, gets one entry per group),
``record_fallback`` for every node handed to Inductor's own codegen, and ``record_externs``
for the aten/extern calls (matmuls, convolutions) of the graph it schedules.  Each record names
the FX nodes and the user's source lines (``file.py:123``) they came from, read from the FX
nodes' ``meta["stack_trace"]``.

Recording is a few dictionary writes per kernel at compile time; launches are untouched.
Tile kernels are keyed like the module ``codegen.runtime.load_kernel`` defines them in
(``<name>_<source hash>``): two graphs may give different kernels one name, never one key.
Extern calls and fallbacks carry the id of the graph they belong to, so that a profile shows
the sites of the graphs that ran in it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_TORCH_DIR = None


@dataclass(frozen=True)
class SourceLine:
    """A line of the user's code: ``file`` (absolute path) and ``line`` number."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


@dataclass
class Site:
    """One fused group (or fallback node, or extern call) and where in the user's code it came from."""

    nodes: list[str]  # FX node names (aten level), in order
    lines: list[SourceLine]  # distinct, in order of first appearance
    line_weights: dict[SourceLine, int]  # how many of the FX nodes came from each line
    graph: int = 0  # the graph it belongs to (``graph_id``)
    bytes: int | None = None  # tile kernels: bytes moved per call (``bytes_model``; None: unknown)
    bytes_bound: bool = True  # ``bytes`` is only an upper bound


@dataclass
class KernelInfo:
    name: str
    kind: str  # "tile" (generated), "fallback", "extern"
    sites: list[Site] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # fallbacks: why

    @property
    def nodes(self) -> list[str]:
        seen: dict[str, None] = {}
        for site in self.sites:
            seen.update(dict.fromkeys(site.nodes))
        return list(seen)

    @property
    def lines(self) -> list[SourceLine]:
        seen: dict[SourceLine, None] = {}
        for site in self.sites:
            seen.update(dict.fromkeys(site.lines))
        return list(seen)

    @property
    def bytes_per_call(self) -> int | None:
        """The byte model's count per call (the largest of its sites'), None if a site has none."""
        counts = [site.bytes for site in self.sites]
        return max(counts) if counts and None not in counts else None

    @property
    def bytes_bound(self) -> bool:
        """Whether ``bytes_per_call`` is only an upper bound (a site's is, or the sites differ)."""
        return any(site.bytes_bound for site in self.sites) or len({site.bytes for site in self.sites}) > 1

    def in_graphs(self, graphs: set[int]) -> "KernelInfo":
        """The same record with only the sites of ``graphs`` (all of them if none is there)."""
        sites = [s for s in self.sites if s.graph in graphs]
        return KernelInfo(self.name, self.kind, sites or list(self.sites), list(self.reasons))

    def line_shares(self) -> dict[SourceLine | None, float]:
        """How the kernel's time divides among source lines: equally among its sites (one launch
        each), and within a site by the number of FX nodes from each line."""
        shares: dict[SourceLine | None, float] = {}
        sites = self.sites or [Site([], [], {})]
        for site in sites:
            total = sum(site.line_weights.values())
            if not total:
                shares[None] = shares.get(None, 0.0) + 1 / len(sites)
                continue
            for line, weight in site.line_weights.items():
                shares[line] = shares.get(line, 0.0) + weight / total / len(sites)
        return shares


kernels: dict[str, KernelInfo] = {}  # tile kernel key (``kernel_key``) -> info
fallbacks: list[KernelInfo] = []  # one per node handed to Inductor (name: the scheduler node)
externs: dict[str, KernelInfo] = {}  # aten op name ("aten::addmm") -> info


last_graph_id = 0  # the number given to the latest graph


def kernel_key(name: str, source: str) -> str:
    """The key of a generated kernel: the tail of its module's name (see ``codegen.runtime``)."""
    return f"{name}_{hashlib.sha256(source.encode()).hexdigest()[:24]}"


def graph_id() -> int:
    """A number for the graph being compiled (Inductor's ``V.graph``), the same for all its records."""
    from torch._inductor.virtualized import V

    global last_graph_id
    graph = V.graph
    number = getattr(graph, "_tile_profile_graph_id", None)
    if number is None:
        last_graph_id += 1
        number = graph._tile_profile_graph_id = last_graph_id
    return number


def reset() -> None:
    kernels.clear()
    fallbacks.clear()
    externs.clear()


def _torch_dir() -> str:
    global _TORCH_DIR
    if _TORCH_DIR is None:
        import torch

        _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    return _TORCH_DIR


def user_line(stack_trace: str | None) -> SourceLine | None:
    """The innermost frame of a stack trace that is not in torch's own sources."""
    if not stack_trace:
        return None
    frames = [m for m in _FRAME.finditer(stack_trace)]
    torch_dir = _torch_dir()
    for match in reversed(frames):
        path = os.path.abspath(match["file"])
        if not path.startswith(torch_dir):
            return SourceLine(path, int(match["line"]))
    return SourceLine(os.path.abspath(frames[-1]["file"]), int(frames[-1]["line"])) if frames else None


def site_of(fx_nodes, graph: int = 0) -> Site:
    """The site of a group made from these FX nodes (Inductor's ``origins``)."""
    names, weights = [], {}
    for node in sorted(fx_nodes, key=lambda n: n.name):
        if getattr(node, "op", None) != "call_function":
            continue
        names.append(node.name)
        line = user_line(node.meta.get("stack_trace"))
        if line is not None:
            weights[line] = weights.get(line, 0) + 1
    return Site(names, list(weights), weights, graph)


def _never_raises(fn):
    """A recording bug must not fail a compilation: log it and go on."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the profiler then lacks this record, nothing else
            log.debug("inductor_tile.profile: %s failed", fn.__name__, exc_info=True)

    return wrapper


def _origins(snodes) -> list:
    found = []
    for snode in snodes:
        for sub in snode.get_nodes() if hasattr(snode, "get_nodes") else [snode]:
            found.extend(getattr(sub.node, "origins", None) or ())
    return found


@_never_raises
def record_kernel(name: str, source: str, snodes) -> None:
    """The tile kernel ``name`` (defined by ``source``) now also runs the fused group ``snodes``."""
    from .bytes_model import group_bytes

    info = kernels.setdefault(kernel_key(name, source), KernelInfo(name, "tile"))
    site = site_of(_origins(snodes), graph_id())
    try:
        site.bytes, site.bytes_bound = group_bytes(snodes)
    except Exception:  # noqa: BLE001 - the launch's tensor arguments bound the bytes instead
        log.debug("inductor_tile.profile: no byte model for %s", name, exc_info=True)
    info.sites.append(site)


@_never_raises
def record_fallback(snode, reason: str) -> None:
    """Scheduler node ``snode`` runs as Inductor's own kernel, because of ``reason``."""
    info = KernelInfo(snode.get_name(), "fallback", [site_of(_origins([snode]), graph_id())], [reason])
    fallbacks.append(info)


def aten_name(kernel_node) -> str | None:
    """``aten::addmm`` for an extern kernel IR node (``extern_kernels.addmm``, ``aten.addmm.default``)."""
    op = getattr(kernel_node, "op_overload", None)
    schema = getattr(op, "_schema", None)
    if schema is not None:
        return schema.name
    python_name = getattr(kernel_node, "python_kernel_name", None) or ""
    if python_name.startswith(("extern_kernels.", "aten.", "torch.ops.aten.")):
        return "aten::" + python_name.split(".")[-1 if python_name.startswith("extern_kernels.") else -2]
    return None


@_never_raises
def record_externs(scheduler) -> None:
    """The aten/extern calls among ``scheduler``'s nodes (matmuls, convolutions), by aten op name."""
    from torch._inductor.scheduler import ExternKernelSchedulerNode

    for snode in getattr(scheduler, "nodes", None) or ():
        if not isinstance(snode, ExternKernelSchedulerNode):
            continue
        name = aten_name(snode.node)
        if name is None:
            continue
        origins = getattr(snode.node, "origins", None) or ()
        # the origins also name the producers inlined into its inputs: keep the op's own nodes
        own = [n for n in origins if getattr(getattr(n, "target", None), "_schema", None) is not None
               and n.target._schema.name == name]
        site = site_of(own or origins, graph_id())
        info = externs.setdefault(name, KernelInfo(name, "extern"))
        if site not in info.sites:
            info.sites.append(site)
