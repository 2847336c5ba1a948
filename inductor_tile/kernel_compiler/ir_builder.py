"""TTIRBuilder: the `Builder` protocol (`inductor_tile.language.builder`) emitting TTIR.

Handles are xdsl `SSAValue`s; the types passed in are language types, converted with
`to_ir_type`. Ops are inserted at `insertion_point`, which `create_function` places at
the end of the new kernel's body. Op names map to op classes through one table per
family (binary, unary, cast), one entry per op.

Hints (`create_hint`) are attributes named `tt.divisibility` / `tt.contiguity`:
- on a kernel argument: in the func's arg_attrs, `{tt.divisibility = 16 : i32}` (one
  value) or `array<i32: ...>` (several);
- on any other value: on its defining op, always `tt.divisibility = array<i32: 16>`.
Values that are neither (scf.for block arguments, multi-result ops) keep no hint.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, math, scf, ub
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from inductor_tile.language.dtypes import block_type, dtype

from .ir import arith_ext, math_ext, tt, tt_memory
from .ir.tt_types import PointerType, element_of
from .ir.types import to_ir_type, wrap_int
from .ir_builder_lang import LanguageOpsBuilder

LanguageType = dtype | block_type

BINARY_OPS: dict[str, type[Operation]] = {
    "addi": arith.AddiOp,
    "subi": arith.SubiOp,
    "muli": arith.MuliOp,
    "divsi": arith.DivSIOp,
    "divui": arith.DivUIOp,
    "remsi": arith_ext.RemSIOp,
    "remui": arith_ext.RemUIOp,
    "andi": arith.AndIOp,
    "ori": arith.OrIOp,
    "xori": arith.XOrIOp,
    "shli": arith.ShLIOp,
    "shrsi": arith.ShRSIOp,
    "shrui": arith.ShRUIOp,
    "maxsi": arith.MaxSIOp,
    "maxui": arith.MaxUIOp,
    "minsi": arith.MinSIOp,
    "minui": arith.MinUIOp,
    "mulhiui": tt.MulhiUIOp,
    "addf": arith.AddfOp,
    "subf": arith.SubfOp,
    "mulf": arith.MulfOp,
    "divf": arith.DivfOp,
    "remf": arith_ext.RemFOp,
    "maximumf": arith.MaximumfOp,
    "minimumf": arith.MinimumfOp,
    "maxnumf": arith.MaxnumfOp,  # NaN only if both are (tl.maximum's propagate_nan=NONE)
    "minnumf": arith.MinnumfOp,
    "powf": math.PowFOp,
    "atan2": math.Atan2Op,
    "copysign": math.CopySignOp,
    "hypot": math_ext.HypotOp,
    "nextafter": math_ext.NextafterOp,
    **{name: math_ext.SPECIAL_OPS[name] for name in math_ext.SPECIAL_BINARY},
}
UNARY_OPS: dict[str, type[Operation]] = {
    "exp": math.ExpOp,
    "exp2": math.Exp2Op,
    "log": math.LogOp,
    "log2": math.Log2Op,
    "sqrt": math.SqrtOp,
    "rsqrt": math.RsqrtOp,
    "sin": math.SinOp,
    "cos": math.CosOp,
    "erf": math.ErfOp,
    "floor": math.FloorOp,
    "ceil": math.CeilOp,
    "absf": math.AbsFOp,
    "absi": math.AbsIOp,
    "negf": arith.NegfOp,
    "tanh": math.TanhOp,
    "log1p": math.Log1pOp,
    "expm1": math.ExpM1Op,
    "log10": math.Log10Op,
    "tan": math.TanOp,
    "sinh": math.SinhOp,
    "cosh": math.CoshOp,
    "asin": math.AsinOp,
    "acos": math.AcosOp,
    "atan": math.AtanOp,
    "asinh": math.AsinhOp,
    "acosh": math.AcoshOp,
    "atanh": math.AtanhOp,
    "trunc": math.TruncOp,
    "roundeven": math.RoundEvenOp,
    "round": math.RoundOp,
    "erfc": math_ext.ErfcOp,
    "lgamma": math_ext.LgammaOp,
    "digamma": math_ext.DigammaOp,
    "erfinv": math_ext.ErfinvOp,
    "j0": math_ext.J0Op,
    "j1": math_ext.J1Op,
    "y0": math_ext.Y0Op,
    "y1": math_ext.Y1Op,
    "cyl_bessel_i0": math_ext.CylBesselI0Op,
    "cyl_bessel_i1": math_ext.CylBesselI1Op,
    "i0e": math_ext.I0eOp,
    "i1e": math_ext.I1eOp,
    **{name: math_ext.SPECIAL_OPS[name] for name in math_ext.SPECIAL_UNARY},
}
CAST_OPS: dict[str, type[Operation]] = {
    "extf": arith.ExtFOp,
    "truncf": arith.TruncFOp,
    "extsi": arith_ext.ExtSIOp,
    "extui": arith_ext.ExtUIOp,
    "trunci": arith_ext.TruncIOp,
    "sitofp": arith_ext.SIToFPOp,
    "uitofp": arith_ext.UIToFPOp,
    "fptosi": arith_ext.FPToSIOp,
    "fptoui": arith_ext.FPToUIOp,
    "bitcast": arith.BitcastOp,  # tt.bitcast when casting pointers
}


def _ir_type(ty: LanguageType | Attribute) -> Attribute:
    """Language types are converted; xdsl types pass through."""
    return ty if isinstance(ty, Attribute) else to_ir_type(ty)


def hint_attr(values: Sequence[int]) -> Attribute:
    """`16 : i32` for one value, `array<i32: ...>` for several (used for kernel arguments)."""
    return IntegerAttr(values[0], i32) if len(values) == 1 else DenseArrayBase.from_list(i32, list(values))


class TTIRBuilder(LanguageOpsBuilder):
    """Builds one `builtin.module` of TTIR kernels (`func.func`) op by op."""

    def __init__(self) -> None:
        self.module = ModuleOp([])
        self._insertion_point = InsertPoint.at_end(self.module.body.block)
        self.location: tuple[str, int, int] | None = None  # (file, line, column) the front end is at
        self._locations: dict[tuple[str, int, int], FileLineColLoc] = {}

    # --- structure: functions, blocks, loops ---------------------------------

    @property
    def insertion_point(self) -> InsertPoint:
        return self._insertion_point

    @insertion_point.setter
    def insertion_point(self, point: InsertPoint) -> None:
        self._insertion_point = point

    def _insert(self, op: Operation) -> Operation:
        Rewriter.insert_op(op, self._insertion_point)
        if self.location is not None:  # the user's source position, for diagnostics (not printed)
            loc = self._locations.get(self.location)
            if loc is None:
                loc = self._locations[self.location] = FileLineColLoc(StringAttr(self.location[0]), IntAttr(
                    self.location[1]), IntAttr(self.location[2]))
            op.location = loc
        return op

    def _value(self, op: Operation) -> SSAValue:
        return self._insert(op).results[0]

    def create_function(self, name: str, arg_types: list, arg_attrs: list[dict[str, int]]) -> list[SSAValue]:
        """Append a public `func.func @name` with no results; insert into its body from now on."""
        inputs = [_ir_type(t) for t in arg_types]
        attrs = [DictionaryAttr({k: IntegerAttr(v, i32) for k, v in d.items()}) for d in arg_attrs]
        attrs += [DictionaryAttr({})] * (len(inputs) - len(attrs))
        body = Block(arg_types=inputs)
        kernel = func.FuncOp(name, (inputs, []), Region(body), "public", arg_attrs=ArrayAttr(attrs))
        Rewriter.insert_op(kernel, InsertPoint.at_end(self.module.body.block))
        self._insertion_point = InsertPoint.at_end(body)
        return list(body.args)

    def create_return(self) -> None:
        self._insert(func.ReturnOp())

    def new_block(self, arg_types: list) -> Block:
        """A detached block whose arguments have `arg_types`."""
        return Block(arg_types=[_ir_type(t) for t in arg_types])

    def insert_for(self, lb: SSAValue, ub: SSAValue, step: SSAValue, init_values: list, body: Block) -> list[SSAValue]:
        """`scf.for` over `body` (args: induction variable, then iter args; ends with scf.yield)."""
        return list(self._insert(scf.ForOp(lb, ub, step, init_values, body)).results)

    def insert_if(self, cond: SSAValue, then_block: Block, else_block: Block | None, result_types: list) -> list[SSAValue]:
        """`scf.if` with the given blocks (each ending with scf.yield when there are results)."""
        types = [_ir_type(t) for t in result_types]
        else_region = Region(else_block) if else_block is not None else None
        return list(self._insert(scf.IfOp(cond, types, Region(then_block), else_region)).results)

    def insert_while(self, init_values: list, before: Block, after: Block) -> list[SSAValue]:
        """`scf.while`: `before` (args: the carried values) ends with scf.condition, forwarding
        its arguments to `after` (the body, same args) or, when false, to the results."""
        types = [v.type for v in init_values]
        return list(self._insert(scf.WhileOp(init_values, types, Region(before), Region(after))).results)

    def create_condition(self, cond: SSAValue, values: list) -> None:
        self._insert(scf.ConditionOp(cond, *values))

    def create_yield(self, values: list) -> None:
        self._insert(scf.YieldOp(*values))

    def type_of(self, handle: SSAValue) -> Attribute:
        return handle.type

    # --- constants and ids -----------------------------------------------------

    def get_constant(self, value: int | float | bool, ty: dtype) -> SSAValue:
        ir_type = to_ir_type(ty)
        if isinstance(ir_type, IntegerType):
            attr: Attribute = IntegerAttr(wrap_int(int(value), ir_type.width.data), ir_type)
        else:
            attr = FloatAttr(float(value), ir_type)
        return self._value(arith.ConstantOp(attr))

    def get_null_pointer(self, ty: dtype) -> SSAValue:
        zero = self._value(arith.ConstantOp(IntegerAttr(0, i64)))
        return self._value(tt.IntToPtrOp(zero, to_ir_type(ty)))

    def create_program_id(self, axis: int) -> SSAValue:
        return self._value(tt.GetProgramIdOp(axis))

    def create_num_programs(self, axis: int) -> SSAValue:
        return self._value(tt.GetNumProgramsOp(axis))

    # --- shapes ------------------------------------------------------------------

    def create_make_range(self, start: int, end: int, ty: block_type) -> SSAValue:
        return self._value(tt.MakeRangeOp(start, end))

    def create_poison(self, ty: dtype) -> SSAValue:
        """An undefined scalar (`ub.poison`): what a function path that returns nothing gives."""
        return self._value(ub.PoisonOp(to_ir_type(ty)))

    def create_splat(self, x: SSAValue, ty: block_type) -> SSAValue:
        return self._value(tt.SplatOp(x, to_ir_type(ty)))

    def create_broadcast(self, x: SSAValue, ty: block_type) -> SSAValue:
        return self._value(tt.BroadcastOp(x, to_ir_type(ty)))

    def create_expand_dims(self, x: SSAValue, axis: int, ty: block_type) -> SSAValue:
        return self._value(tt.ExpandDimsOp(x, axis, to_ir_type(ty)))

    def create_reshape(self, x: SSAValue, ty: block_type) -> SSAValue:
        return self._value(tt.ReshapeOp(x, to_ir_type(ty)))

    # --- arithmetic ----------------------------------------------------------------

    def create_binary(self, op: str, lhs: SSAValue, rhs: SSAValue, ty: LanguageType) -> SSAValue:
        assert lhs.type == rhs.type == to_ir_type(ty), f"{op}: operand types {lhs.type}, {rhs.type} differ from {ty}"
        if op == "divf_rn":  # correctly rounded division: a divf the targets must not approximate
            divide = arith.DivfOp(lhs, rhs)
            divide.attributes["tt.rounding"] = StringAttr("rn")
            return self._value(divide)
        return self._value(BINARY_OPS[op](lhs, rhs))

    def create_cmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue, ty: LanguageType) -> SSAValue:
        """arith.cmpf for float operands, arith.cmpi otherwise (`ult` etc. exist in both)."""
        cmp = arith_ext.CmpfOp if isinstance(element_of(lhs.type), AnyFloat) else arith_ext.CmpiOp
        return self._value(cmp(lhs, rhs, predicate))

    def create_select(self, cond: SSAValue, a: SSAValue, b: SSAValue, ty: LanguageType) -> SSAValue:
        return self._value(arith_ext.SelectOp(cond, a, b))

    def create_unary(self, op: str, x: SSAValue, ty: LanguageType) -> SSAValue:
        return self._value(UNARY_OPS[op](x))

    def create_fma(self, a: SSAValue, b: SSAValue, c: SSAValue, ty: LanguageType) -> SSAValue:
        return self._value(math.FmaOp(a, b, c))

    def create_cast(self, op: str, x: SSAValue, ty: LanguageType) -> SSAValue:
        target = to_ir_type(ty)
        if op == "bitcast" and isinstance(element_of(target), PointerType):
            return self._value(tt.BitcastOp(x, target))
        return self._value(CAST_OPS[op](x, target))

    # --- memory ----------------------------------------------------------------------

    def create_addptr(self, ptr: SSAValue, offset: SSAValue, ty: LanguageType) -> SSAValue:
        return self._value(tt.AddPtrOp(ptr, offset))

    def create_load(self, ptr: SSAValue, mask: SSAValue | None, other: SSAValue | None, ty: LanguageType,
                    cache: str = "", evict: str = "", volatile: bool = False) -> SSAValue:
        hints = tt_memory.AccessHints(cache, evict, volatile).attributes()
        return self._value(tt_memory.LoadOp(ptr, mask, other, to_ir_type(ty), hints))

    def create_store(self, ptr: SSAValue, value: SSAValue, mask: SSAValue | None, cache: str = "",
                     evict: str = "") -> None:
        self._insert(tt_memory.StoreOp(ptr, value, mask, tt_memory.AccessHints(cache, evict).attributes()))

    def create_atomic_rmw(self, kind: str, ptr: SSAValue, value: SSAValue, mask: SSAValue | None, sem: str,
                          scope: str, ty: LanguageType) -> SSAValue:
        return self._value(tt_memory.AtomicRMWOp(kind, ptr, value, mask, sem, scope))

    def create_atomic_cas(self, ptr: SSAValue, cmp: SSAValue, value: SSAValue, sem: str, scope: str,
                          ty: LanguageType) -> SSAValue:
        return self._value(tt_memory.AtomicCASOp(ptr, cmp, value, sem, scope))

    # --- matrix products -----------------------------------------------------------------

    def create_dot(self, a: SSAValue, b: SSAValue, acc: SSAValue, input_precision: str, ty: LanguageType) -> SSAValue:
        return self._value(tt.DotOp(a, b, acc, input_precision, to_ir_type(ty)))

    # --- reductions and hints ----------------------------------------------------------

    def create_reduce(self, x: SSAValue, axis: int, kind: str, ty: LanguageType) -> SSAValue:
        return self._value(tt.ReduceOp(x, axis, kind, to_ir_type(ty)))

    def create_hint(self, x: SSAValue, kind: str, values: tuple[int, ...]) -> SSAValue:
        """Record `tt.<kind>` (divisibility or contiguity) for `x`; see the module docstring."""
        name = f"tt.{kind}"
        if isinstance(x, BlockArgument) and isinstance(kernel := x.block.parent_op(), func.FuncOp):
            _set_arg_attr(kernel, x.index, name, hint_attr(values))
        elif isinstance(x, OpResult) and len(x.op.results) == 1:
            x.op.attributes[name] = DenseArrayBase.from_list(i32, list(values))
        return x


def _set_arg_attr(kernel: func.FuncOp, index: int, name: str, value: Attribute) -> None:
    count = len(kernel.body.block.args)
    dicts = list(kernel.arg_attrs.data) if kernel.arg_attrs is not None else [DictionaryAttr({})] * count
    dicts[index] = DictionaryAttr({**dicts[index].data, name: value})
    kernel.arg_attrs = ArrayAttr(dicts)
