"""Extra tile-language modules, as in Triton: `from inductor_tile.language.extra import libdevice`.

`reductions` is this project's own (not Triton API): reductions Triton builds with `tl.reduce`.
"""

from . import cuda, libdevice, reductions

__all__ = ["cuda", "libdevice", "reductions"]
