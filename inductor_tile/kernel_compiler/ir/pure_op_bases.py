"""Bases of the pure `tt` ops that write their properties in the attribute dictionary, as Triton's text
does (`tt.flip %x {axis = 1 : i32} : ...`): what `tt_permute.py` and `tt_dot.py` would otherwise repeat
in every op."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, operand_def, result_def, traits_def
from xdsl.traits import Pure


class PureOpWithProperties(IRDLOperation):
    """A pure op (no memory effect, speculatable) whose properties read and print as attributes."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)


class PureTensorMapOp(PureOpWithProperties):
    """One tensor to one tensor, `$src {properties} : srcType -> resultType` (tt.trans, tt.flip, tt.sort)."""

    src = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"
