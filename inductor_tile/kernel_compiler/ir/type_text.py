"""Printing IR with each type's text made once: `print_module(module)`.

A kernel's TTIR and TTGIR print the same few tensor types (with their layouts) thousands of times, and
xdsl prints a type element by element each time: types were half of the printing time.  A type's text
depends on the type alone, so `TypeTextPrinter` keeps it per type (a bounded table shared by the process)
and writes it in one piece: the same text (tests/test_type_text.py compares it with xdsl's printer; the
TTIR and TTGIR of the small models' 155 NVIDIA kernels are byte-identical), printing 0.77 -> 0.52 CPU s.
"""

from __future__ import annotations

import threading
from io import StringIO

from xdsl.ir import Attribute, Operation, TypeAttribute
from xdsl.printer import Printer

_texts: dict[Attribute, str] = {}
_lock = threading.Lock()
MAX_TYPES = 4096  # the table starts over beyond this many types


class TypeTextPrinter(Printer):
    """xdsl's printer, writing each type from a table of their texts."""

    def print_attribute(self, attribute: Attribute) -> None:
        if not isinstance(attribute, TypeAttribute):
            super().print_attribute(attribute)
            return
        text = _texts.get(attribute)
        if text is None:
            out = StringIO()
            Printer(stream=out).print_attribute(attribute)
            text = out.getvalue()
            if "\n" in text:  # laid out over lines: the printer's indentation applies, so print in place
                super().print_attribute(attribute)
                return
            with _lock:
                if len(_texts) >= MAX_TYPES:
                    _texts.clear()
                _texts[attribute] = text
        self.print_string(text)


def print_module(op: Operation) -> str:
    """`str(op)`, faster."""
    out = StringIO()
    TypeTextPrinter(stream=out).print_op(op)
    return out.getvalue()
