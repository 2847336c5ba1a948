"""The sanitizer's run-time side (TILE_SANITIZE=1 or `inductor_tile.config.sanitize = True`).

A kernel compiled sanitized (passes/sanitize.py) takes hidden arguments after its own: per
pointer argument the byte bounds of the tensor's whole storage, [untyped_storage().data_ptr(),
+ nbytes) (so views with storage offsets, negative strides and broadcasts pass), then an int64
error record on the launch's device. `SanitizedRunner` wraps the target's launcher: it appends
those arguments, launches, reads the record (synchronizing on GPUs) and raises `SanitizerError`
naming the kernel line, the program id, the element offset and the tensor.

Record words: 0: site + 1 of the first violation (0: none), 1-3: program id, 4: the element
offset from the argument's data pointer (the byte address where the pointer could not be traced
to one argument; the element index in the tile for a division by zero).
"""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

from ...language import dtypes as T
from ...language.dtypes import pointer_type
from ..errors import format_location
from ..frontend.specialization import ArgSpec

RECORD_WORDS = 8
_ACCESS_WORDS = {"load": ("out-of-bounds load", "loaded"), "store": ("out-of-bounds store", "stored"),
                 "atomic_rmw": ("out-of-bounds atomic", "updated"), "atomic_cas": ("out-of-bounds atomic", "updated")}
_DIVISION_WORDS = {"div": "integer division by zero", "rem": "integer remainder by zero"}


class SanitizerError(RuntimeError):
    """A sanitized kernel accessed memory outside a tensor argument's storage, or divided an integer by zero."""

    __module__ = "inductor_tile"  # shown as inductor_tile.SanitizerError, where users catch it


def sites_of(module: Any) -> list[dict[str, Any]]:
    """The checks of a sanitized TTIR module, indexed by site id: kind, loc, arg, tile shape."""
    from ..ir.tt_sanitize import SanitizerReportOp
    from ..ir.tt_types import shape_of

    sites: dict[int, dict[str, Any]] = {}
    for op in module.walk():
        if isinstance(op, SanitizerReportOp):
            sites[op.site.value.data] = {"kind": op.kind.data, "loc": op.loc.data, "arg": op.arg.value.data,
                                         "shape": list(shape_of(op.bad.type))}
    return [sites.get(i, {"kind": "?", "loc": "", "arg": -1, "shape": []}) for i in range(max(sites, default=-1) + 1)]


def hidden_specs(specs: list[ArgSpec]) -> list[ArgSpec]:
    """The hidden parameters a sanitized kernel takes after `specs` (see the module docstring)."""
    hidden = []
    for spec in specs:
        if spec.kind == "pointer":
            hidden += [ArgSpec(f"{spec.name}.storage_lo", "scalar", T.int64),
                       ArgSpec(f"{spec.name}.storage_hi", "scalar", T.int64)]
    return hidden + [ArgSpec("sanitizer.record", "pointer", pointer_type(T.int64))]


class SanitizedRunner:
    """Launches a sanitized kernel through `inner` (CPUKernel, CUDARunner) and checks its record."""

    def __init__(self, inner: Any, name: str, specs: list[ArgSpec], sites: list[dict[str, Any]], target: str):
        self.inner = inner
        self.name = name
        self.specs = specs
        self.sites = sites
        self.device = "cpu" if target.split(":")[0] == "cpu" else "cuda"
        self.pointers = [i for i, spec in enumerate(specs) if spec.kind == "pointer"]
        self.records: dict[Any, torch.Tensor] = {}

    def _record(self, device: torch.device) -> torch.Tensor:
        import torch  # imported when used: a compile worker imports no torch (tests/test_cold_start.py)

        record = self.records.get(device)
        if record is None:
            record = self.records[device] = torch.zeros(RECORD_WORDS, dtype=torch.int64, device=device)
        return record

    def launch(self, values: tuple, grid: tuple[int, int, int]) -> None:
        import torch

        bounds: list[int] = []
        device = None
        for position in self.pointers:
            storage = values[position].untyped_storage()
            bounds += [storage.data_ptr(), storage.data_ptr() + storage.nbytes()]
            device = device or values[position].device
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device()) if self.device == "cuda" else torch.device("cpu")
        record = self._record(device)
        self.inner.launch(tuple(values) + tuple(bounds) + (record,), grid)
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return  # a CUDA graph being captured cannot be waited for; its replays are not checked
        words = record.tolist()  # waits for the kernel on GPUs
        if words[0]:
            record.zero_()
            raise SanitizerError(self.message(words, values))

    def message(self, words: list[int], values: tuple) -> str:
        site = self.sites[words[0] - 1] if 0 < words[0] <= len(self.sites) else {"kind": "?", "loc": "", "arg": -1}
        kind, pid, value = site["kind"], tuple(words[1:4]), words[4]
        if kind in _DIVISION_WORDS:
            title = _DIVISION_WORDS[kind]
            detail = f"program id {pid}: the divisor is 0 at element {_tile_position(value, site.get('shape', []))} of the tile"
        else:
            title, verb = _ACCESS_WORDS.get(kind, ("out-of-bounds access", "accessed"))
            detail = f"program id {pid} {verb} {self._describe_address(value, site['arg'], values)}"
        return f"{title} {_where(self.name, site['loc'])}{detail}"

    def _describe_address(self, value: int, arg: int, values: tuple) -> str:
        if arg < 0:
            names = ", ".join(f"'{self.specs[p].name}'" for p in self.pointers) or "none"
            return (f"address {value:#x}, outside the storage of every tensor argument ({names}); the pointer "
                    "could not be traced to one argument")
        position = self.pointers[arg]
        tensor = values[position]
        storage_elements = tensor.untyped_storage().nbytes() // tensor.element_size()
        return (f"element offset {value} of argument '{self.specs[position].name}' (a {str(tensor.dtype).replace('torch.', '')} "
                f"tensor of shape {tuple(tensor.shape)}; its storage holds {storage_elements} elements, the view "
                f"starts at element {tensor.storage_offset()})")


def _tile_position(index: int, shape: list[int]) -> str:
    if len(shape) <= 1:
        return str(index)
    position = []
    for size in reversed(shape):
        position.append(index % size)
        index //= size
    return str(tuple(reversed(position)))


def _where(kernel: str, loc: str) -> str:
    """`in kernel `k`, file:line:col:` and the source line with a caret, as compile errors show them."""
    if not loc:
        return f"in kernel `{kernel}`:\n"
    filename, line, col = loc.rsplit(":", 2)
    raw = linecache.getline(filename, int(line)).rstrip()
    text = raw.lstrip()
    column = int(col) - 1
    return format_location(kernel, filename, int(line), column, text, max(0, column - (len(raw) - len(text))))
