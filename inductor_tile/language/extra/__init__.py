"""Extra tile-language modules, as in Triton: `from inductor_tile.language.extra import libdevice`."""

from . import libdevice

__all__ = ["libdevice"]
