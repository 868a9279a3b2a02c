"""C expressions: the base of the emitter, with the state it keeps while it writes.

``ExpressionEmitter`` turns a typed ``ir.Expr`` into C text with the least parentheses C's
precedences allow, and spells types, casts, literals, element accesses, math calls, warp
intrinsics, tuples and the helper functions that stand in for an operator C lacks.  The
statement emitter (``codegen.emitter``) and the tables and atomics beside it build on it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CompileError
from ..frontend.checks import describe_divergence, warp_divergence
from ..frontend.passes import is_nonnegative
from ..ir import nodes as ir
from ..semantics import ops
from ..semantics.warp import WARP_OPS
from ..types import (
    BarrierType,
    RecordType,
    ScalarType,
    TupleType,
    bool_,
    complex128,
    component,
    compute_type,
    float64,
    int32,
    int64,
    uint32,
)
from .dialect import DYNAMIC_BYTES, Dialect

# C computes + - * << on 8- and 16-bit integers in int (the integer promotions): those results
# are written in unsigned int (no signed overflow) and converted back to the type, which wraps
# as NumPy's do; the other operators' results stay in the type's range.
_NARROW_WRAPS = frozenset({"+", "-", "*", "<<"})
_HELPER_NAME = re.compile(r"\bgk_\w+")


# C's binding strengths of the binary operators, of a unary one, of an atom and of ?: -- an operand
# binding more loosely than its place needs is written in parentheses (``expr``)
PREC = {
    "||": 4,
    "&&": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "==": 9,
    "!=": 9,
    "<": 10,
    "<=": 10,
    ">": 10,
    ">=": 10,
    "<<": 11,
    ">>": 11,
    "+": 12,
    "-": 12,
    "*": 13,
    "/": 13,
    "%": 13,
}
UNARY, ATOM, TERNARY = 14, 16, 3


class ExpressionEmitter:
    """Renders expressions as C in one dialect, keeping what the program needs besides
    (helper functions, headers, extensions, double precision)."""

    names: dict[str, str]  # Python name -> C name, in the function being written
    records: dict[RecordType, tuple[str, dict[str, str]]]  # record type -> struct name, member names
    record_arrays: dict[str, RecordType]  # the arrays of records the function reaches
    func_names: dict[int, str]  # id of a FuncDef -> its C name
    nonneg: set[str]  # the function's integer variables never negative

    def __init__(self, dialect: Dialect):
        self.d = dialect
        self.helpers: dict[str, str] = {}
        self.uses_fp64 = False
        self.extensions: dict[str, ir.Node] = {}  # language extension -> the first node needing it
        self.preambles: dict[str, None] = {}  # the headers of the types used (type_preamble), in order
        self.locations: dict[tuple[str, int], int] = {}  # (Python file, line) -> its index in the marks
        self.bits16: dict[str, ScalarType] = {}  # vloads of 16-bit elements (their bits): name -> element type

    def name(self, pyname: str) -> str:
        return self.names[pyname]

    def shape_name(self, array: ir.ArrayRef, d: int) -> str:
        return f"{self.names[array.name]}_shape{d}"

    # ------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, min_prec: int = 0) -> str:
        text, prec = getattr(self, f"expr_{type(e).__name__}")(e)
        return f"({text})" if prec < min_prec else text

    def type(self, t: ScalarType) -> str:
        if isinstance(t, TupleType):
            return self.tuple_struct(t)
        if t in (float64, complex128):
            self.uses_fp64 = True
        if t in self.d.type_preamble:
            self.preambles.setdefault(self.d.type_preamble[t])
        return self.d.types[t]

    def support(self, text: str) -> str:
        """``text``, having defined the dialect's support functions it calls (``helper_defs``)."""
        for name in _HELPER_NAME.findall(text):
            if name in self.d.helper_defs and name not in self.helpers:
                self.helpers[name] = f"{self.d.func_prefix}{self.d.helper_defs[name]}"
        return text

    def cast_text(self, src: ScalarType, dst: ScalarType, text: str) -> str | None:
        """A value of ``src`` written ``text`` converted to ``dst`` by the dialect's ``casts``, or None
        where C's own cast does it."""
        fmt = (
            self.d.casts.get((src.name, dst.name))
            or self.d.casts.get((src.name, "*"))
            or (self.d.casts.get(("*", dst.name)) if src != dst else None)
        )
        return None if fmt is None else self.support(fmt.format(text, T=self.type(dst)))

    def rounded(self, t: ScalarType, text: str) -> str:
        """A result computed in a register wider than ``t`` rounded to ``t`` (``rounding``), else as is."""
        fmt = self.d.rounding.get(t)
        return text if fmt is None else self.support(fmt.format(text))

    def narrow(self, t: ScalarType) -> bool:
        """An 8- or 16-bit integer, which C computes in int."""
        return t.is_int and t != bool_ and t.itemsize < 4

    def compound_ok(self, t: ScalarType) -> bool:
        """Whether ``x op= y`` means ``x = x op y`` as this emitter writes it (not where the result
        needs narrowing or rounding, nor where an operator of the type is a call)."""
        return not self.narrow(t) and t not in self.d.rounding and all(k[1] != t for k in self.d.operators)

    def unsigned(self, t: ScalarType) -> str:
        return self.d.unsigned_types[t.itemsize]

    def storage(self, t: ScalarType | RecordType) -> str:
        if isinstance(t, RecordType):
            return self.records[t][0]
        if t in (float64, complex128):
            self.uses_fp64 = True
        if t in self.d.type_preamble:
            self.preambles.setdefault(self.d.type_preamble[t])
        if isinstance(t, BarrierType):  # (a dialect without one refuses the declaration: stmt_DeclArray)
            return self.d.hopper["type"]
        stored = self.d.storage_types.get(t)
        return stored if stored is not None else self.d.types[t]

    def expr_Mbarrier(self, e: ir.Mbarrier) -> tuple[str, int]:
        table = self.hopper(e)  # type: ignore[attr-defined]
        args = [self.expr(a) for a in e.args]
        op = e.op + "_cluster" if e.op in ("wait", "try_wait") and getattr(self, "cluster_waits", False) else e.op
        return table[op].format(*args, b=f"&{self.element(e.bar, e.bar_indices)}"), 16

    def expr_Elect(self, e: ir.Elect) -> tuple[str, int]:
        return self.hopper(e)["elect"], 16  # type: ignore[attr-defined]

    def make_complex(self, t: ScalarType, re: str, im: str) -> str:
        return self.d.complex_make.format(re, im, T=self.type(t))

    def expr_Lit(self, e: ir.Lit) -> tuple[str, int]:
        t, v = e.type, e.value
        if t.is_complex:
            f = component(t)
            parts = (self.expr_Lit(ir.Lit(p, f))[0] for p in (complex(v).real, complex(v).imag))
            return self.make_complex(t, *parts), ATOM
        if t == bool_:
            return ("true" if v else "false"), ATOM
        if t.is_int:
            if t in (int32, int64) and v == np.iinfo(t.dtype).min:
                return f"({v + 1}{self.d.int_suffix.get(t, '')} - 1)", ATOM
            text = f"{v}{self.d.int_suffix.get(t, '')}"
            return text, (UNARY if v < 0 else ATOM)
        if t == float64:
            self.uses_fp64 = True
        if math.isnan(v) or math.isinf(v):
            spelled = self.d.float_specials[("nan" if math.isnan(v) else "inf", t)]
            return (f"-{spelled}", UNARY) if v < 0 else (spelled, ATOM)
        # the shortest decimal that reads back as the same value (float32: as a float32)
        single = t.itemsize <= 4  # a float16 value is written as the float32 of the same value
        text = str(np.float32(v)) if single else repr(float(v))
        if "e" not in text and "." not in text:
            text += ".0"
        text += "f" if single else ""
        if t in self.d.literals:
            self.type(t)
            return self.d.literals[t].format(text), ATOM
        return text, (UNARY if text.startswith("-") else ATOM)

    def expr_Var(self, e: ir.Var) -> tuple[str, int]:
        return self.name(e.name), ATOM

    def element(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        inner = len(array.field_shape)  # a sub-array field: the last indices are the C member's
        text = self._element(array, indices[: len(indices) - inner] if inner else indices)
        if array.record_field is not None:  # a field of a record array: the struct's member
            record = self.record_arrays[array.name]
            text += "." + self.records[record][1][array.record_field]
            text += "".join(f"[{self.expr(i)}]" for i in indices[len(indices) - inner :]) if inner else ""
        if array.peer is not None:  # the element in another block of the cluster
            text = self.hopper(array)["peer"].format(e=text, rank=self.expr(array.peer))  # type: ignore[attr-defined]
        return text

    def expr_ClusterInfo(self, e: ir.ClusterInfo) -> tuple[str, int]:
        return self.hopper(e)[e.what], ATOM  # type: ignore[attr-defined]

    def _element(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        name = self.name(array.name)
        if not indices:  # a 0-dimensional array: its one element (a constant table's declaration has [1])
            return f"{name}[0]"
        if array.type.space != "global" or array.type.ndim == 1:
            return name + "".join(f"[{self.expr(i)}]" for i in indices)
        # C-contiguous global array: flatten with the shape passed alongside the pointer
        flat = self.expr(indices[0], PREC["*"])
        for d in range(1, len(indices)):
            flat = f"{flat} * {self.shape_name(array, d)} + {self.expr(indices[d], PREC['+'] + 1)}"
            if d < len(indices) - 1:
                flat = f"({flat})"
        return f"{name}[{flat}]"

    def expr_Load(self, e: ir.Load) -> tuple[str, int]:
        fmt = self.d.element_loads.get(e.array.type.elem)
        if fmt is not None:
            q = self.d.pointer_spaces.get(e.array.type.space, "")
            return self.support(fmt.format(e=self.element(e.array, e.indices), q=q)), ATOM
        return self.element(e.array, e.indices), ATOM

    def infix(self, e: ir.BinOp) -> bool:
        """Whether C's own operator has the operation's meaning here (else a helper or math call)."""
        op = ops.BINARY[e.op]
        if e.type.is_complex:
            return False
        if e.type.is_float and op.float_math:
            return False
        return op.helper(e.type) is None or op.exact(e, self.nonnegative)

    def expr_BinOp(self, e: ir.BinOp) -> tuple[str, int]:
        op, t = ops.BINARY[e.op], e.type
        if t.is_complex:
            return self.complex_call(op.name, t, [e.left, e.right], op.complex_helper), ATOM
        if not self.infix(e):
            ct = compute_type(t)
            if ct != t:  # computed in the wider type, rounded back
                wide = ir.BinOp(e.op, ir.Cast(e.left, ct), ir.Cast(e.right, ct), ct, loc=e.loc)
                return self.cast_text(ct, t, self.expr(wide)) or f"({self.type(t)}){self.expr(wide, UNARY)}", ATOM
            if t.is_float and op.float_math:
                return self.math_text(op.float_math, t, [self.expr(e.left), self.expr(e.right)]), ATOM
            return self.helper_call(op.name, t, [e.left, e.right], op.helper(t)), ATOM
        c_op = op.c_operator
        p = PREC[c_op]
        if self.narrow(t) and c_op in _NARROW_WRAPS:
            U = self.d.unsigned_types[4]
            return f"({self.type(t)})(({U}){self.expr(e.left, UNARY)} {c_op} {self.expr(e.right, p + 1)})", UNARY
        call = self.d.operators.get((c_op, t))
        if call is not None:
            return call.format(self.expr(e.left), self.expr(e.right)), ATOM
        text = f"{self.expr(e.left, p)} {c_op} {self.expr(e.right, p + 1)}"
        if t in self.d.rounding:
            return self.rounded(t, text), ATOM
        return text, p

    def nonnegative(self, e: ir.Expr) -> bool:
        return is_nonnegative(e, self.nonneg)

    def expr_Compare(self, e: ir.Compare) -> tuple[str, int]:
        if e.left.type.is_complex:
            op = ops.COMPARE[e.op]
            return self.complex_call(op.name, e.left.type, [e.left, e.right], op.complex_helper, bool_), ATOM
        p = PREC[e.op]
        return f"{self.expr(e.left, p)} {e.op} {self.expr(e.right, p + 1)}", p

    def expr_Logic(self, e: ir.Logic) -> tuple[str, int]:
        op = "&&" if e.op == "and" else "||"
        p = PREC[op]
        return f"{self.expr(e.left, p)} {op} {self.expr(e.right, p + 1)}", p

    def expr_Unary(self, e: ir.Unary) -> tuple[str, int]:
        if e.type.is_complex:
            return self.complex_call("neg", e.type, [e.operand], ops.UNARY[e.op].complex_helper), ATOM
        op = ops.UNARY[e.op].c_symbol
        inner = self.expr(e.operand, UNARY)
        if op == "-" and inner.startswith("-"):
            inner = f"({inner})"
        if self.narrow(e.type):  # -x and ~x of a narrow integer are ints: back to the type, wrapping
            return f"({self.type(e.type)})({op}{inner})", UNARY
        return f"{op}{inner}", UNARY

    def expr_Cast(self, e: ir.Cast) -> tuple[str, int]:
        if e.type.is_complex:
            return self.complex_call(f"to_{e.type.name}", e.value.type, [e.value], ops.cx.c_cast(e.type), e.type), ATOM
        if isinstance(e.value, ir.Lit) and e.type != bool_ and e.value.type != bool_:
            with np.errstate(all="ignore"):
                value = np.array(e.value.value, e.value.type.dtype).astype(e.type.dtype).item()
            return self.expr_Lit(ir.Lit(value, e.type))
        if e.type == bool_:
            return f"{self.expr(e.value, PREC['!='] + 1)} != {self.zero(e.value.type)}", PREC["!="]
        special = self.cast_text(e.value.type, e.type, self.expr(e.value))
        if special is not None:
            return special, ATOM
        return f"({self.type(e.type)}){self.expr(e.value, UNARY)}", UNARY

    def zero(self, t: ScalarType) -> str:
        return self.expr_Lit(ir.Lit(0.0 if t.is_float else 0, t))[0] if t != bool_ else "false"

    def expr_Select(self, e: ir.Select) -> tuple[str, int]:
        c = self.expr(e.cond, TERNARY + 1)
        return f"{c} ? {self.expr(e.a, TERNARY + 1)} : {self.expr(e.b, TERNARY)}", TERNARY

    def expr_MathCall(self, e: ir.MathCall) -> tuple[str, int]:
        t, mf = e.args[0].type, ops.function(e.name)
        ct = compute_type(t)
        if ct != t and not isinstance(e.type, TupleType):  # computed in the wider type, rounded back
            # each operand widened, but one of a type of its own (ldexp's int exponent) stays as it is
            args = [a if mf.operand_dtype(k, None) is not None else ir.Cast(a, ct) for k, a in enumerate(e.args)]
            wide = ir.MathCall(e.name, args, e.type if mf.predicate else ct, loc=e.loc)
            if mf.predicate:  # (a predicate needs no rounding)
                return self.expr_MathCall(wide)
            return self.cast_text(ct, t, self.expr(wide)) or f"({self.type(t)}){self.expr(wide, UNARY)}", ATOM
        if isinstance(e.type, TupleType):  # several results: a helper filling the tuple's struct
            R, fill = self.type(e.type), mf.tuple_helper
            assert fill is not None
            body = lambda t, c: f"    {R} r;\n{fill(t, c)}\n    return r;"  # noqa: E731
            return self.helper_call(e.name, t, e.args, body, e.type), ATOM
        if mf.complex_helper is not None and (t.is_complex or mf.typing == "make"):
            return self.complex_call(e.name, t, e.args, mf.complex_helper, e.type), ATOM
        if mf.float_helper is not None and t.is_float:
            helper = mf.float_helper
            body = helper if callable(helper) else lambda t, c: helper
            return self.helper_call(e.name, t, e.args, body), ATOM
        if mf.int_helper is not None and (e.name, t.name) not in self.d.math and (e.name, "*") not in self.d.math:
            return self.helper_call(e.name, t, e.args, mf.int_helper, e.type), ATOM
        return self.math_text(e.name, t, [self.expr(a) for a in e.args]), ATOM

    def math_text(self, name: str, t: ScalarType, args: list[str]) -> str:
        fmt = (
            self.d.math.get((name, t.name))
            or self.d.math.get((name, "*"))
            or self.d.math.get(("*", t.name))
            or self.d.math[("*", "*")]
        )
        return fmt.format(*args, name=name, args=", ".join(args))

    def expr_Special(self, e: ir.Special) -> tuple[str, int]:
        if e.name in self.d.hoisted_specials:  # read at the function's top (``special_locals``)
            return self.special_local(e.name, e.dim), ATOM
        return self.special_text(e.name, e.dim), UNARY

    def special_text(self, name: str, dim: int) -> str:
        return f"(int){self.d.specials[name].format(d=dim, c='xyz'[dim])}"

    @staticmethod
    def special_local(name: str, dim: int) -> str:
        return f"gk_{name}_{'xyz'[dim]}"

    def special_locals(self, fd: ir.FuncDef) -> list[str]:
        """The declarations, at a function's top, of the specials the dialect reads once there."""
        used = sorted({(n.name, n.dim) for n in ir.walk_body(fd.body) if isinstance(n, ir.Special)})
        return [
            f"const int {self.special_local(name, dim)} = {self.special_text(name, dim)};"
            for name, dim in used
            if name in self.d.hoisted_specials
        ]

    def expr_Shape(self, e: ir.Shape) -> tuple[str, int]:
        if e.array.type.space == "shared":  # a dynamic_shared() array: its length is the launch's bytes
            return f"{DYNAMIC_BYTES} / {e.array.type.elem.itemsize}", PREC["/"]
        return self.shape_name(e.array, e.dim), ATOM

    def expr_Call(self, e: ir.Call) -> tuple[str, int]:
        args: list[str] = []
        for a in e.args:
            if isinstance(a, ir.ArrayRef):
                args.append(self.name(a.name))
                if a.type.space == "global":
                    args += [self.shape_name(a, d) for d in range(a.type.ndim)]
            else:
                args.append(self.expr(a))
        return f"{self.func_names[id(e.func)]}({', '.join(args)})", ATOM

    def expr_WarpOp(self, e: ir.WarpOp) -> tuple[str, int]:
        """A warp intrinsic as the dialect spells it (natively, or a call of its emulation)."""
        if self.d.warp_helpers:
            self.helpers.setdefault("gk_warp", self.d.warp_helpers)
        t = e.args[0].type if e.args else uint32
        to_bits, from_bits = self.d.bits.get(t, ("", ""))
        mask = e.mask
        # a constant mask reads best as the lanes' bits
        text = f"0x{mask.value:08X}u" if isinstance(mask, ir.Lit) else self.expr(mask) if mask is not None else ""
        fields = {"mask": text, "to": to_bits}
        if self.d.warp_live:  # an emulation: which lanes take part (frontend.predication)
            fields["live"] = self.d.warp_live if e.active is None else self.d.warp_active.format(self.expr(e.active))
        fields.update({"from": from_bits, "T": self.type(t), "U": self.d.unsigned_types.get(t.itemsize, "")})
        return self.support(self.d.warp[e.op].format(*(self.expr(a) for a in e.args), **fields)), ATOM

    def check_warp_emulation(self, fd: ir.FuncDef) -> None:
        """Warp ops emulated with work-group barriers must be in the kernel, where every thread of
        the block reaches them (the barrier-divergence analysis proves it), else a CompileError."""
        first = next(n for n in ir.walk_body(fd.body) if isinstance(n, ir.WarpOp))
        name = WARP_OPS[first.op].name
        lang = self.d.name
        hint = "run it on CUDA or the simulator, or restructure as the message says"
        if not fd.is_kernel:
            raise CompileError(
                f"{name}() in a @func cannot be compiled to {lang}: it needs {self.d.warp_emulation}, "
                "which works in the kernel's own body only",
                first.loc,
                "call it in the kernel; " + hint,
            )
        found = warp_divergence(fd)
        if found is not None:
            op, why = found
            raise CompileError(
                f"{WARP_OPS[op.op].name}() cannot be compiled to {lang} {describe_divergence(why)}: "
                f"it needs {self.d.warp_emulation}, so every thread of the block must reach it",
                op.loc,
                hint,
            )

    def expr_Lane(self, e: ir.Lane) -> tuple[str, int]:
        elem = self.bits16.get(e.vector)
        if elem is not None:  # an element of 16-bit bits: its half of a word, or its lane, made a value
            k, v = e.lane, self.name(e.vector)
            bits = self.d.bits16_lanes[k % 2 if self.d.bits16_words else 0].format(v=v, k=k, c="xyzw"[k // 2])
            return self.support(self.d.bits16_value[elem].format(bits)), UNARY
        return f"{self.name(e.vector)}.{'xyzw'[e.lane]}", ATOM

    # ------------------------------------------------------------ tuples
    def tuple_struct(self, t: TupleType) -> str:
        """The struct holding a tuple of these types (fields ``v0``, ``v1``...), declared on first use."""
        name = "gk_tuple_" + "_".join(item.name for item in t.items)
        if name not in self.helpers:
            fields = "".join(f"    {self.type(item)} v{k};\n" for k, item in enumerate(t.items))
            self.helpers[name] = f"typedef struct {{\n{fields}}} {name};"
        return name

    def expr_Item(self, e: ir.Item) -> tuple[str, int]:
        return f"{self.expr(e.tuple, ATOM)}.v{e.index}", ATOM

    def expr_MakeTuple(self, e: ir.MakeTuple) -> tuple[str, int]:
        items = ", ".join(self.expr(i) for i in e.items)
        return self.d.tuple_value.format(T=self.type(e.type), items=items), UNARY

    # ------------------------------------------------------------ helpers
    def helper(
        self,
        kind: str,
        t: ScalarType,
        nargs: int,
        body: Callable[[ScalarType, Any], str],
        ret: ScalarType | None = None,
    ) -> str:
        """The name of helper ``gk_<kind>_<type>`` of ``nargs`` operands returning ``ret`` (default
        ``t``), defined with ``body`` on first use (after the helpers its body itself asks for)."""
        name = f"gk_{kind}_{t.name}"
        if name not in self.helpers:
            T = self.type(t)
            params = ", ".join(f"{T} {p}" for p in "abc"[:nargs])
            R = self.type(ret or t)
            text = body(t, self)
            self.helpers[name] = f"{self.d.func_prefix}{R} {name}({params})\n{{\n{text}\n}}"
        return name

    def helper_call(
        self,
        kind: str,
        t: ScalarType,
        args: list[ir.Expr],
        body: Callable[[ScalarType, Any], str],
        ret: ScalarType | None = None,
    ) -> str:
        """A call of ``gk_<kind>_<type>(a[, b, c])`` returning ``ret`` (default ``t``)."""
        return f"{self.helper(kind, t, len(args), body, ret)}({', '.join(self.expr(a) for a in args)})"

    def complex_helper(self, kind: str, t: ScalarType, nargs: int, body: Any, ret: ScalarType | None = None) -> str:
        """The name of a helper of ``semantics.complex`` (``body``), in which the compiler may not fuse
        a product into an fma (the dialect's ``no_contract`` line), as NumPy computes the parts."""
        assert body is not None, f"no complex form of {kind}: the front end refuses it"
        if self.d.no_contract:
            return self.helper(kind, t, nargs, lambda t, c: f"{self.d.no_contract}\n{body(t, c)}", ret)
        return self.helper(kind, t, nargs, body, ret)

    def complex_call(
        self, kind: str, t: ScalarType, args: list[ir.Expr], body: Any, ret: ScalarType | None = None
    ) -> str:
        """A call of the ``semantics.complex`` helper ``body`` (see ``complex_helper``)."""
        return f"{self.complex_helper(kind, t, len(args), body, ret)}({', '.join(self.expr(a) for a in args)})"

    def nan(self, t: ScalarType) -> str:
        return self.expr_Lit(ir.Lit(math.nan, t))[0]
