"""The one C-style emitter behind CUDA C and OpenCL C.

The two languages differ only in spellings -- qualifiers, the barrier, index
intrinsics, atomics, type and math names -- so each backend is a ``Dialect``
table and this module turns the typed IR into readable C with it: the user's
names, one statement per line, and the Python source line as a trailing comment.
What an operator means, and the C helper that implements it where C's own operator does
not, comes from ``gpukern.ops``.  Adding a C-like backend means writing one more table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import ir, ops
from ..checks import warp_divergence
from ..errors import CompileError
from ..passes import is_nonnegative, nonnegative_vars
from ..types import ArrayType, ScalarType, bool_, float32, float64, int32, int64, uint32
from ..warp_ops import WARP_OPS

# Words that a Python identifier must not become in C, C++, CUDA or OpenCL C.
RESERVED = frozenset(
    """
    auto break case char const continue default do double else enum extern float for goto if inline int
    long register restrict return short signed sizeof static struct switch typedef union unsigned void
    volatile while _Bool _Complex _Imaginary bool true false alignas alignof and and_eq asm bitand bitor
    catch class compl const_cast constexpr decltype delete dynamic_cast explicit export friend mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public reinterpret_cast
    static_assert static_cast template this thread_local throw try typeid typename using virtual wchar_t
    xor xor_eq char16_t char32_t concept requires co_await co_return co_yield
    kernel __kernel global __global local __local constant __constant private __private read_only
    write_only read_write __read_only __write_only image2d_t image3d_t sampler_t event_t half double2
    uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t
    threadIdx blockIdx blockDim gridDim warpSize device host shared managed
    barrier get_global_id get_local_id get_group_id get_local_size get_num_groups get_global_size
    main printf malloc free memcpy memset assert INFINITY NAN HUGE_VALF HUGE_VAL MAXFLOAT
    abs fabs min max fmin fmax fdim pow pown powr rootn sqrt rsqrt cbrt exp exp2 exp10 expm1 log log2 log10
    log1p logb ilogb sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sinpi cospi tanpi
    asinpi acospi atanpi atan2pi sincos floor ceil trunc round rint nearbyint lround llround fmod remainder
    remquo modf frexp ldexp scalbn nextafter copysign hypot erf erfc tgamma lgamma lgamma_r nan fma mad
    isnan isinf isfinite isnormal signbit isequal isnotequal isgreater isgreaterequal isless islessequal
    islessgreater isordered isunordered any all bitselect select shuffle shuffle2
    clamp degrees radians mix sign smoothstep step cross dot distance length normalize fast_distance
    fast_length fast_normalize abs_diff add_sat sub_sat hadd rhadd clz ctz popcount rotate upsample mad_hi
    mad_sat mul_hi mad24 mul24 barrier mem_fence read_mem_fence write_mem_fence prefetch
    wait_group_events get_work_dim get_global_offset get_enqueued_local_size
    sqrtf expf logf sinf cosf tanf powf fabsf floorf ceilf fminf fmaxf fmodf truncf roundf rintf
    exp2f expm1f log2f log10f log1pf asinf acosf atanf atan2f sinhf coshf tanhf asinhf acoshf atanhf
    erff erfcf hypotf copysignf cbrtf rsqrtf llabs labs __syncthreads
    pipe complex imaginary NULL EOF MAXFLOAT CHAR_BIT
    """.split()
)
# Macros the C, CUDA and OpenCL headers predefine (M_PI, FLT_MAX, INT_MAX, CLK_LOCAL_MEM_FENCE...), and
# identifiers C reserves for itself (_Noreturn, anything starting with an underscore and a capital).
_MACRO = re.compile(
    r"^(M_[A-Z0-9_]+|(FLT|DBL|HALF|LDBL)_[A-Z0-9_]+|U?(CHAR|SCHAR|SHRT|INT|LONG|LLONG)_(MAX|MIN)|"
    r"(CLK|CL|FP|MEMORY|SIZE|PTRDIFF|INTPTR|UINTPTR)_[A-Z0-9_]+|HUGE_VALF?|_[A-Z].*)$"
)
_VECTOR = re.compile(
    r"^(u?(char|short|int|long)|float|double|half|bool)(2|3|4|8|16)$"
    r"|^(convert_|as_|vload|vstore|atomic_|atom_|native_|half_|get_|read_image|write_image|async_|sub_group|work_group)"
)


def c_identifier(name: str) -> str:
    """A Python name as a legal C identifier (words C, CUDA or OpenCL keep for themselves get a ``_``)."""
    cname = name
    if cname in RESERVED or _VECTOR.match(cname) or _MACRO.match(cname) or cname.startswith(("__", "gk_")):
        cname += "_"
    return cname


@dataclass(frozen=True)
class Dialect:
    """The spellings that make the C emitter produce one language."""

    name: str
    kernel_prefix: str  # before ``void name(...)`` of a kernel
    func_prefix: str  # before a device function
    types: dict[ScalarType, str]
    unsigned_types: dict[int, str]  # width in bytes -> the unsigned integer type (wrapping arithmetic)
    storage_types: dict[ScalarType, str]  # how an element is stored in arrays / passed to kernels
    global_ptr: str  # '{T}' '{name}' '{const}' formats for an array parameter
    qualifiers: dict[str, str]  # memory space -> declaration qualifier for arrays
    barrier: str
    specials: dict[str, str]  # 'thread_idx' etc. -> format with {d} (0..2) or {c} ('x'..'z')
    int_suffix: dict[ScalarType, str]
    float_specials: dict[tuple[str, ScalarType], str]  # ('inf'|'nan', type) -> spelling
    math: dict[tuple[str, str], str]  # (name, type name or '*') -> format with {0}, {1}
    native_atomics: dict[tuple[str, str], str]  # (op, type name) -> format with {p} {0} {1}
    bits: dict[ScalarType, tuple[str, str]]  # type -> (to-bits, from-bits) function names for CAS loops
    cas_bits: dict[int, str]  # width in bytes -> compare-and-swap of that unsigned integer, {p} {0} {1}
    fences: dict[str, str]  # scope ('block', 'device', 'system') -> the fence statement
    # (op, width in bytes) -> the language extension its native instruction needs ('cas': the CAS loop too)
    atomic_extensions: dict[tuple[str, int], str] = field(default_factory=dict)
    extension_pragma: str = ""  # '{name}': the line enabling an extension
    vector_types: dict[ScalarType, str] = field(default_factory=dict)  # element -> vector name stem ('float')
    vload: str = ""  # '{V}' vector type, '{n}' width, '{p}' address of the first element
    vstore: str = ""  # the same and '{values}'; a whole statement
    # inf and nan where float_specials are not constant expressions (a constant table's values)
    constant_specials: dict[tuple[str, ScalarType], str] = field(default_factory=dict)
    align: str = ""  # '{n}': prefix aligning a shared/local array declaration to n bytes
    launch_bounds: str = ""  # '{args}': between kernel prefix and 'void'; empty where the language has none
    unroll_pragma: str = ""  # before a loop of a few constant iterations, where the compiler needs telling
    preamble: tuple[str, ...] = ()
    fp64_preamble: tuple[str, ...] = ()
    pointer_spaces: dict[str, str] = field(default_factory=dict)  # space -> pointer qualifier for params
    # warp intrinsics: op (``warp_ops.WARP_OPS``) -> format with {mask}, {0} {1} (operands), {w} (width),
    # {T} the value's type, {U} its unsigned type, {to} {from} its bits functions
    warp: dict[str, str] = field(default_factory=dict)
    warp_helpers: str = ""  # C functions the warp formats call, written once where a warp op is used
    # where not empty, warp ops are emulated through this work-group scratch array (declared at the top
    # of the kernel; '{n}': its length, the most threads a block may have), with work-group barriers:
    # every thread of the block must reach each of them, and they cannot be in a @func
    warp_scratch: str = ""
    warp_group_max: int = 0  # the most threads per block the emulation holds
    warp_emulation: str = ""  # what the emulation stands in for, for its error messages


_PREC = {
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
_UNARY, _ATOM, _TERNARY = 14, 16, 3
_KIND = {
    ir.If: "an if",
    ir.For: "a for loop",
    ir.While: "a while loop",
    ir.Select: "a conditional expression",
    ir.Logic: "an and/or",
}


MAX_PRAGMA_UNROLL = 64


def _trip_count(s: ir.For) -> float:
    """Iterations of a loop whose bounds are literals (infinite when they are not)."""
    if not all(isinstance(e, ir.Lit) for e in (s.start, s.stop, s.step)) or s.step.value == 0:
        return math.inf
    return len(range(s.start.value, s.stop.value, s.step.value))


class Emitter:
    """Renders an ``ir.Program`` as C in one dialect."""

    def __init__(self, dialect: Dialect):
        self.d = dialect
        self.helpers: dict[str, str] = {}
        self.uses_fp64 = False
        self.extensions: dict[str, ir.Node] = {}  # language extension -> the first node needing it

    # ------------------------------------------------------------ program
    def program(self, prog: ir.Program) -> str:
        func_names = self._function_names(prog)
        # vector accesses (in the kernel or a helper it passes arrays to) need 16-byte aligned arrays
        self.vectorised = any(
            isinstance(n, (ir.VecLoad, ir.VecStore)) for fd in prog.funcs + [prog.kernel] for n in ir.walk_body(fd.body)
        )
        self.tables = self._table_names(prog, func_names)
        tables = [self.table(ref, data) for ref, data in prog.tables]
        bodies = [self.function(fd, func_names) for fd in prog.funcs + [prog.kernel]]
        k = prog.kernel
        where = f"{k.loc.filename}:{k.loc.lineno}" if k.loc is not None else k.name
        parts = ["\n".join([f"// Generated by gpukern from {where} ({k.description or k.name})", *self.d.preamble])]
        if self.uses_fp64 and self.d.fp64_preamble:
            parts.append("\n".join(self.d.fp64_preamble))
        if self.extensions:
            parts.append("\n".join(self.d.extension_pragma.format(name=x) for x in sorted(self.extensions)))
        parts += tables + list(self.helpers.values()) + bodies
        return "\n\n".join(p for p in parts if p) + "\n"

    @staticmethod
    def _table_names(prog: ir.Program, func_names: dict[int, str]) -> dict[str, str]:
        """C names of the constant tables, at file scope beside the functions."""
        used, out = set(func_names.values()), {}
        for ref, _ in prog.tables:
            cname = c_identifier(ref.name)
            while cname in used:
                cname += "_"
            used.add(cname)
            out[ref.name] = cname
        return out

    def table(self, ref: ir.ArrayRef, data: Any) -> str:
        """A constant table's declaration with its values (specials as constant expressions)."""
        t = ref.type.elem
        specials = {**self.d.float_specials, **self.d.constant_specials}
        values = []
        for v in data.reshape(-1).tolist():
            if t.is_float and not math.isfinite(v):
                spelled = specials[("nan" if math.isnan(v) else "inf", t)]
                values.append(f"-{spelled}" if math.copysign(1.0, v) < 0 else spelled)
            else:
                values.append(self.expr(ir.Lit(v, t)))
        dims = "".join(f"[{n}]" for n in ref.type.shape or ())
        rows = [", ".join(values[i : i + 8]) for i in range(0, len(values), 8)]
        body = ",\n    ".join(rows)
        where = f"  // a table of the module, first read at line {ref.loc.lineno}" if ref.loc is not None else ""
        head = f"{self.d.qualifiers['constant']}{self.storage(t)} {self.tables[ref.name]}{dims} = {{{where}"
        return f"{head}\n    {body}\n}};"

    def _function_names(self, prog: ir.Program) -> dict[int, str]:
        names: dict[int, str] = {}
        used = {c_identifier(prog.kernel.name)}
        for fd in prog.funcs:
            base = c_identifier(fd.name)
            cname, n = base, 1
            while cname in used:
                n += 1
                cname = f"{base}_{n}"
            used.add(cname)
            names[id(fd)] = cname
        names[id(prog.kernel)] = c_identifier(prog.kernel.name)
        return names

    # ------------------------------------------------------------ functions
    def function(self, fd: ir.FuncDef, func_names: dict[int, str]) -> str:
        self.func_names = func_names
        self.nonneg = nonnegative_vars(fd)
        self.names: dict[str, str] = {}
        self._reserve_names(fd)
        if fd.is_kernel:
            params = [self.kernel_param(p, fd) for p in fd.kernel_params]
            prefix = self.d.kernel_prefix
            if fd.launch_bounds and self.d.launch_bounds:
                prefix += " " + self.d.launch_bounds.format(args=", ".join(map(str, fd.launch_bounds)))
            head = f"{prefix} void {func_names[id(fd)]}({', '.join(params)})"
        else:
            params = []
            for p in fd.params:
                params += self.func_param(p, fd)
            ret = self.type(fd.ret) if fd.ret is not None else "void"
            head = f"{self.d.func_prefix}{ret} {func_names[id(fd)]}({', '.join(params) or 'void'})"
        lines = [head, "{"]
        if self.d.warp_scratch and any(isinstance(n, ir.WarpOp) for n in ir.walk_body(fd.body)):
            self.check_warp_emulation(fd)
            lines.append("    " + self.d.warp_scratch.format(n=self.d.warp_group_max))
        for v in fd.locals:
            lines.append(f"    {self.type(v.type)} {self.name(v.name)};")
        lines += self.block(fd.body, 1)
        lines.append("}")
        return "\n".join(lines)

    def _reserve_names(self, fd: ir.FuncDef) -> None:
        taken = set(self.func_names.values()) | set(self.tables.values())
        self.names.update(self.tables)
        pyname_nodes = [p for p in fd.params] + [
            n for n in ir.walk_body(fd.body) if isinstance(n, (ir.Var, ir.ArrayRef, ir.VecLoad))
        ]
        for node in pyname_nodes:
            if node.name in self.names:
                continue
            cname = c_identifier(node.name)
            while cname in taken:
                cname += "_"
            taken.add(cname)
            self.names[node.name] = cname
            if isinstance(node, ir.ArrayRef) and node.type.space == "global":
                for d in range(node.type.ndim):
                    taken.add(self.shape_name(node, d))

    def name(self, pyname: str) -> str:
        return self.names[pyname]

    def shape_name(self, array: ir.ArrayRef, d: int) -> str:
        return f"{self.names[array.name]}_shape{d}"

    def kernel_param(self, p: ir.KernelParam, fd: ir.FuncDef) -> str:
        if p.kind == "array":
            assert isinstance(p.type, ArrayType)
            const = "const " if p.name not in fd.written else ""
            return self.d.global_ptr.format(T=self.storage(p.type.elem), name=self.name(p.name), const=const)
        if p.kind == "shape":
            ref = ir.ArrayRef(p.name, p.type)  # type: ignore[arg-type]
            return f"{self.type(int64)} {self.shape_name(ref, p.dim)}"
        assert isinstance(p.type, ScalarType)
        return f"{self.storage(p.type)} {self.name(p.name)}"

    def func_param(self, p: ir.Var | ir.ArrayRef, fd: ir.FuncDef) -> list[str]:
        if isinstance(p, ir.Var):
            return [f"{self.type(p.type)} {self.name(p.name)}"]
        t = p.type
        if t.space == "global":
            const = "const " if p.name not in fd.written else ""
            out = [self.d.global_ptr.format(T=self.storage(t.elem), name=self.name(p.name), const=const)]
            return out + [f"{self.type(int64)} {self.shape_name(p, d)}" for d in range(t.ndim)]
        qual = self.d.pointer_spaces.get(t.space, "")
        dims = "".join(f"[{n}]" for n in t.shape or ())
        return [f"{qual}{self.storage(t.elem)} {self.name(p.name)}{dims}"]

    # ------------------------------------------------------------ statements
    def block(self, stmts: list[ir.Stmt], depth: int) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out += getattr(self, f"stmt_{type(s).__name__}")(s, depth)
        return out

    def line(self, depth: int, text: str, node: ir.Node) -> str:
        pad = "    " * depth
        src = node.loc.source_line().strip() if node.loc is not None else ""
        # a trailing backslash would continue the C comment onto the next line
        src = src.encode("ascii", "replace").decode().rstrip("\\ ")
        if src:
            return f"{pad}{text}  // {node.loc.lineno}: {src}"
        return f"{pad}{text}"

    def stmt_DeclArray(self, s: ir.DeclArray, depth: int) -> list[str]:
        t = s.array.type
        qual = self.d.qualifiers[t.space]
        if self.vectorised:
            qual += self.d.align.format(n=16)
        dims = "".join(f"[{n}]" for n in t.shape or ())
        return [self.line(depth, f"{qual}{self.storage(t.elem)} {self.name(s.array.name)}{dims};", s)]

    def stmt_Assign(self, s: ir.Assign, depth: int) -> list[str]:
        target, v = self.name(s.target.name), s.value
        if s.declare:
            return [self.line(depth, f"{self.type(s.target.type)} {target} = {self.expr(v)};", s)]
        if isinstance(v, ir.BinOp) and self.infix(v) and isinstance(v.left, ir.Var) and v.left.name == s.target.name:
            op = ops.BINARY[v.op].c_operator
            return [self.line(depth, f"{target} {op}= {self.expr(v.right)};", s)]  # x = x + y -> x += y
        return [self.line(depth, f"{target} = {self.expr(v)};", s)]

    def stmt_Store(self, s: ir.Store, depth: int) -> list[str]:
        target, v = self.element(s.array, s.indices), s.value
        if (
            isinstance(v, ir.BinOp)
            and self.infix(v)
            and isinstance(v.left, ir.Load)
            and v.left.array.name == s.array.name
            and self.expr(v.left) == target
        ):
            op = ops.BINARY[v.op].c_operator
            return [self.line(depth, f"{target} {op}= {self.expr(v.right)};", s)]  # a[i] = a[i] + y -> a[i] += y
        return [self.line(depth, f"{target} = {self.expr(v)};", s)]

    def vector_type(self, t: ScalarType, n: int) -> str:
        return f"{self.d.vector_types[t]}{n}"

    def stmt_VecLoad(self, s: ir.VecLoad, depth: int) -> list[str]:
        V = self.vector_type(s.array.type.elem, s.width)
        load = self.d.vload.format(V=V, n=s.width, p=f"&{self.element(s.array, s.indices)}")
        return [self.line(depth, f"const {V} {self.name(s.name)} = {load};", s)]

    def stmt_VecStore(self, s: ir.VecStore, depth: int) -> list[str]:
        values = ", ".join(self.expr(v) for v in s.values)
        V, p = self.vector_type(s.array.type.elem, s.width), f"&{self.element(s.array, s.indices)}"
        return [self.line(depth, self.d.vstore.format(V=V, n=s.width, p=p, values=values), s)]

    def expr_Lane(self, e: ir.Lane) -> tuple[str, int]:
        return f"{self.name(e.vector)}.{'xyzw'[e.lane]}", _ATOM

    def stmt_ExprStmt(self, s: ir.ExprStmt, depth: int) -> list[str]:
        return [self.line(depth, f"{self.expr(s.value)};", s)]

    def stmt_Barrier(self, s: ir.Barrier, depth: int) -> list[str]:
        return [self.line(depth, self.d.barrier, s)]

    def stmt_Fence(self, s: ir.Fence, depth: int) -> list[str]:
        return [self.line(depth, self.d.fences[s.scope], s)]

    def stmt_Break(self, s: ir.Break, depth: int) -> list[str]:
        return [self.line(depth, "break;", s)]

    def stmt_Continue(self, s: ir.Continue, depth: int) -> list[str]:
        return [self.line(depth, "continue;", s)]

    def stmt_Return(self, s: ir.Return, depth: int) -> list[str]:
        text = "return;" if s.value is None else f"return {self.expr(s.value)};"
        return [self.line(depth, text, s)]

    def stmt_If(self, s: ir.If, depth: int) -> list[str]:
        pad = "    " * depth
        out = [self.line(depth, f"if ({self.expr(s.cond)}) {{", s)]
        out += self.block(s.then, depth + 1)
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ir.If):  # elif chain
            inner = orelse[0]
            out.append(self.line(depth, f"}} else if ({self.expr(inner.cond)}) {{", inner))
            out += self.block(inner.then, depth + 1)
            orelse = inner.orelse
        if orelse:
            out.append(f"{pad}}} else {{")
            out += self.block(orelse, depth + 1)
        out.append(f"{pad}}}")
        return out

    def stmt_While(self, s: ir.While, depth: int) -> list[str]:
        out = [self.line(depth, f"while ({self.expr(s.cond)}) {{", s)]
        return out + self.block(s.body, depth + 1) + ["    " * depth + "}"]

    def stmt_For(self, s: ir.For, depth: int) -> list[str]:
        v = self.name(s.var.name)
        init = f"{self.type(s.var.type) + ' ' if s.declare else ''}{v} = {self.expr(s.start)}"
        stop = self.expr(s.stop, _PREC["<"] + 1)
        if s.step_sign > 0:
            cond = f"{v} < {stop}"
        elif s.step_sign < 0:
            cond = f"{v} > {stop}"
        else:
            step = self.expr(s.step, _PREC[">"] + 1)
            cond = f"({step} > 0 ? {v} < {stop} : {v} > {stop})"
        if isinstance(s.step, ir.Lit) and s.step.value in (1, -1):
            inc = f"{v}++" if s.step.value == 1 else f"{v}--"
        else:
            inc = f"{v} += {self.expr(s.step)}"
        out = [self.line(depth, f"for ({init}; {cond}; {inc}) {{", s)]
        if self.d.unroll_pragma and _trip_count(s) <= MAX_PRAGMA_UNROLL:
            out.insert(0, "    " * depth + self.d.unroll_pragma)
        return out + self.block(s.body, depth + 1) + ["    " * depth + "}"]

    # ------------------------------------------------------------ expressions
    def expr(self, e: ir.Expr, min_prec: int = 0) -> str:
        text, prec = getattr(self, f"expr_{type(e).__name__}")(e)
        return f"({text})" if prec < min_prec else text

    def type(self, t: ScalarType) -> str:
        if t == float64:
            self.uses_fp64 = True
        return self.d.types[t]

    def unsigned(self, t: ScalarType) -> str:
        return self.d.unsigned_types[t.itemsize]

    def storage(self, t: ScalarType) -> str:
        if t == float64:
            self.uses_fp64 = True
        return self.d.storage_types.get(t, self.d.types[t])

    def expr_Lit(self, e: ir.Lit) -> tuple[str, int]:
        t, v = e.type, e.value
        if t == bool_:
            return ("true" if v else "false"), _ATOM
        if t.is_int:
            if t in (int32, int64) and v == np.iinfo(t.dtype).min:
                return f"({v + 1}{self.d.int_suffix.get(t, '')} - 1)", _ATOM
            text = f"{v}{self.d.int_suffix.get(t, '')}"
            return text, (_UNARY if v < 0 else _ATOM)
        if t == float64:
            self.uses_fp64 = True
        if math.isnan(v) or math.isinf(v):
            spelled = self.d.float_specials[("nan" if math.isnan(v) else "inf", t)]
            return (f"-{spelled}", _UNARY) if v < 0 else (spelled, _ATOM)
        # the shortest decimal that reads back as the same value (float32: as a float32)
        text = str(np.float32(v)) if t == float32 else repr(float(v))
        if "e" not in text and "." not in text:
            text += ".0"
        text += "f" if t == float32 else ""
        return text, (_UNARY if text.startswith("-") else _ATOM)

    def expr_Var(self, e: ir.Var) -> tuple[str, int]:
        return self.name(e.name), _ATOM

    def element(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        name = self.name(array.name)
        if array.type.space != "global" or array.type.ndim == 1:
            return name + "".join(f"[{self.expr(i)}]" for i in indices)
        # C-contiguous global array: flatten with the shape passed alongside the pointer
        flat = self.expr(indices[0], _PREC["*"])
        for d in range(1, len(indices)):
            flat = f"{flat} * {self.shape_name(array, d)} + {self.expr(indices[d], _PREC['+'] + 1)}"
            if d < len(indices) - 1:
                flat = f"({flat})"
        return f"{name}[{flat}]"

    def expr_Load(self, e: ir.Load) -> tuple[str, int]:
        return self.element(e.array, e.indices), _ATOM

    def infix(self, e: ir.BinOp) -> bool:
        """Whether C's own operator has the operation's meaning here (else a helper or math call)."""
        op = ops.BINARY[e.op]
        if e.type.is_float and op.float_math:
            return False
        return op.helper(e.type) is None or op.exact(e, self.nonnegative)

    def expr_BinOp(self, e: ir.BinOp) -> tuple[str, int]:
        op, t = ops.BINARY[e.op], e.type
        if not self.infix(e):
            if t.is_float and op.float_math:
                return self.math_text(op.float_math, t, [self.expr(e.left), self.expr(e.right)]), _ATOM
            return self.helper_call(op.name, t, [e.left, e.right], op.helper(t)), _ATOM
        c_op = op.c_operator
        p = _PREC[c_op]
        return f"{self.expr(e.left, p)} {c_op} {self.expr(e.right, p + 1)}", p

    def nonnegative(self, e: ir.Expr) -> bool:
        return is_nonnegative(e, self.nonneg)

    def expr_Compare(self, e: ir.Compare) -> tuple[str, int]:
        p = _PREC[e.op]
        return f"{self.expr(e.left, p)} {e.op} {self.expr(e.right, p + 1)}", p

    def expr_Logic(self, e: ir.Logic) -> tuple[str, int]:
        op = "&&" if e.op == "and" else "||"
        p = _PREC[op]
        return f"{self.expr(e.left, p)} {op} {self.expr(e.right, p + 1)}", p

    def expr_Unary(self, e: ir.Unary) -> tuple[str, int]:
        op = ops.UNARY[e.op].c_symbol
        inner = self.expr(e.operand, _UNARY)
        if op == "-" and inner.startswith("-"):
            inner = f"({inner})"
        return f"{op}{inner}", _UNARY

    def expr_Cast(self, e: ir.Cast) -> tuple[str, int]:
        if isinstance(e.value, ir.Lit) and e.type != bool_ and e.value.type != bool_:
            with np.errstate(all="ignore"):
                value = np.array(e.value.value, e.value.type.dtype).astype(e.type.dtype).item()
            return self.expr_Lit(ir.Lit(value, e.type))
        if e.type == bool_:
            return f"{self.expr(e.value, _PREC['!='] + 1)} != {self.zero(e.value.type)}", _PREC["!="]
        return f"({self.type(e.type)}){self.expr(e.value, _UNARY)}", _UNARY

    def zero(self, t: ScalarType) -> str:
        return self.expr_Lit(ir.Lit(0.0 if t.is_float else 0, t))[0] if t != bool_ else "false"

    def expr_Select(self, e: ir.Select) -> tuple[str, int]:
        c = self.expr(e.cond, _TERNARY + 1)
        return f"{c} ? {self.expr(e.a, _TERNARY + 1)} : {self.expr(e.b, _TERNARY)}", _TERNARY

    def expr_MathCall(self, e: ir.MathCall) -> tuple[str, int]:
        t, mf = e.args[0].type, ops.MATH[e.name]
        if mf.float_helper is not None and t.is_float:
            helper = mf.float_helper
            body = helper if callable(helper) else lambda t, c: helper
            return self.helper_call(e.name, t, e.args, body), _ATOM
        if mf.int_helper is not None and (e.name, t.name) not in self.d.math and (e.name, "*") not in self.d.math:
            return self.helper_call(e.name, t, e.args, mf.int_helper, e.type), _ATOM
        return self.math_text(e.name, t, [self.expr(a) for a in e.args]), _ATOM

    def math_text(self, name: str, t: ScalarType, args: list[str]) -> str:
        fmt = (
            self.d.math.get((name, t.name))
            or self.d.math.get((name, "*"))
            or self.d.math.get(("*", t.name))
            or self.d.math[("*", "*")]
        )
        return fmt.format(*args, name=name, args=", ".join(args))

    def expr_Special(self, e: ir.Special) -> tuple[str, int]:
        return f"(int){self.d.specials[e.name].format(d=e.dim, c='xyz'[e.dim])}", _UNARY

    def expr_Shape(self, e: ir.Shape) -> tuple[str, int]:
        return self.shape_name(e.array, e.dim), _ATOM

    def expr_Call(self, e: ir.Call) -> tuple[str, int]:
        args: list[str] = []
        for a in e.args:
            if isinstance(a, ir.ArrayRef):
                args.append(self.name(a.name))
                if a.type.space == "global":
                    args += [self.shape_name(a, d) for d in range(a.type.ndim)]
            else:
                args.append(self.expr(a))
        return f"{self.func_names[id(e.func)]}({', '.join(args)})", _ATOM

    def expr_WarpOp(self, e: ir.WarpOp) -> tuple[str, int]:
        """A warp intrinsic as the dialect spells it (natively, or a call of its emulation)."""
        if self.d.warp_helpers:
            self.helpers.setdefault("gk_warp", self.d.warp_helpers)
        t = e.args[0].type if e.args else uint32
        to_bits, from_bits = self.d.bits.get(t, ("", ""))
        mask = e.mask
        # a constant mask reads best as the lanes' bits
        text = f"0x{mask.value:08X}u" if isinstance(mask, ir.Lit) else self.expr(mask) if mask is not None else ""
        fields = {"mask": text, "w": e.width, "to": to_bits}
        fields.update({"from": from_bits, "T": self.type(t), "U": self.d.unsigned_types.get(t.itemsize, "")})
        return self.d.warp[e.op].format(*(self.expr(a) for a in e.args), **fields), _ATOM

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
            line = why.loc.lineno if why.loc is not None else "?"
            where = (
                f"after a return (line {line}) that only some threads take"
                if isinstance(why, ir.Return)
                else f"inside {_KIND[type(why)]} (line {line}) whose condition depends on the thread"
            )
            raise CompileError(
                f"{WARP_OPS[op.op].name}() cannot be compiled to {lang} {where}: it needs {self.d.warp_emulation}, "
                "so every thread of the block must reach it",
                op.loc,
                hint,
            )

    def expr_Atomic(self, e: ir.Atomic) -> tuple[str, int]:
        ptr = f"&{self.element(e.array, e.indices)}"
        t = e.type
        operands = [self.expr(o) for o in e.operands]
        native = self.d.native_atomics.get((e.op, t.name))
        extension = self.d.atomic_extensions.get((e.op if native is not None else "cas", t.itemsize))
        if extension is not None:
            self.extensions.setdefault(extension, e)
        if native is not None:
            return native.format(*operands, p=ptr, T=self.storage(t)), _ATOM
        space = e.array.type.space
        # one helper per pointer qualifier the dialect writes (OpenCL's __global and __local differ)
        qualified = f"_{space}" if self.d.pointer_spaces.get(space) else ""
        name = f"gk_atomic_{e.op}_{t.name}{qualified}"
        if name not in self.helpers:
            self.helpers[name] = self._cas_helper(name, e.op, t, space)
        return f"{name}({ptr}, {', '.join(operands)})", _ATOM

    # ------------------------------------------------------------ helpers
    def helper_call(
        self,
        kind: str,
        t: ScalarType,
        args: list[ir.Expr],
        body: Callable[[ScalarType, Any], str],
        ret: ScalarType | None = None,
    ) -> str:
        """A call of ``gk_<kind>_<type>(a[, b, c])`` returning ``ret`` (default ``t``), defining the
        helper (with ``body``) on first use."""
        name = f"gk_{kind}_{t.name}"
        if name not in self.helpers:
            T = self.type(t)
            params = ", ".join(f"{T} {p}" for p in "abc"[: len(args)])
            R = self.type(ret or t)
            self.helpers[name] = f"{self.d.func_prefix}{R} {name}({params})\n{{\n{body(t, self)}\n}}"
        return f"{name}({', '.join(self.expr(a) for a in args)})"

    def _cas_helper(self, name: str, op: str, t: ScalarType, space: str) -> str:
        """An atomic the hardware lacks, built from a compare-and-swap loop on the element's bits."""
        T, pre = self.storage(t), self.d.func_prefix
        U = self.unsigned(t)
        qual = self.d.pointer_spaces.get(space, "")
        to_bits, from_bits = self.d.bits[t]
        cas = self.d.cas_bits[t.itemsize]
        ptr = f"{qual}{T}* p"
        uptr = f"({qual}{U}*)p"
        if op == "cas":
            call = cas.format(f"{to_bits}(cmp)", f"{to_bits}(v)", p=uptr, T=U)
            return f"{pre}{T} {name}({ptr}, {T} cmp, {T} v)\n{{\n    return {from_bits}({call});\n}}"
        call = cas.format("assumed", f"{to_bits}({ops.ATOMIC[op].c_update})", p=uptr, T=U)
        return (
            f"{pre}{T} {name}({ptr}, {T} v)\n{{\n"
            f"    {U} seen = *({'volatile ' + qual if qual else 'volatile '}{U}*)p, assumed;\n"
            f"    do {{\n        assumed = seen;\n        {T} old = {from_bits}(assumed);\n"
            f"        seen = {call};\n    }} while (seen != assumed);\n"
            f"    return {from_bits}(seen);\n}}"
        )
