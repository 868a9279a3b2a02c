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

from .. import formats, ir, mma_ops, ops
from ..checks import describe_divergence, warp_divergence
from ..errors import CompileError
from ..passes import is_nonnegative, nonnegative_vars
from ..types import (
    ArrayType,
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
from ..warp_ops import BLOCK_VOTES, WARP_OPS
from . import lines as line_directives

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
    threadIdx blockIdx blockDim gridDim warpSize device host shared managed wmma nvcuda
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


DYNAMIC_BYTES = "gk_dynamic_bytes"  # the kernel parameter holding the launch's dynamic shared bytes
DYNAMIC_BUFFER = "gk_dynamic_shared"  # the dialects' name for that memory


def uses_dynamic_shared(fd: ir.FuncDef) -> bool:
    """Whether a kernel declares dynamic_shared() arrays (their declarations lead its body)."""
    return any(isinstance(s, ir.DeclArray) and s.array.type.shape is None for s in fd.body)


@dataclass(frozen=True)
class Dialect:
    """The spellings that make the C emitter produce one language."""

    name: str
    kernel_prefix: str  # before ``void name(...)`` of a kernel
    func_prefix: str  # before a device function
    types: dict[ScalarType, str]
    unsigned_types: dict[int, str]  # width in bytes -> the unsigned integer type (wrapping arithmetic)
    storage_types: dict[ScalarType, str]  # how an element is stored in arrays / passed to kernels
    global_ptr: str  # '{T}' '{name}' '{const}' '{restrict}' formats for an array parameter
    restrict: str  # the no-alias qualifier (with a space after), on read-only array parameters only
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
    # the unsigned integer a pointer converts to: an 8- or 16-bit atomic finds the aligned 32-bit word
    # holding its element from the element's address, and does a compare-and-swap loop on that word
    address_int: str = ""
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
    tuple_value: str = "{T}{{{items}}}"  # '{T}' the struct, '{items}': a tuple's value (``return a, b``)
    print_call: str = "printf({args});"  # '{args}': the format string and the values
    print_lengths: dict[str, str] = field(default_factory=dict)  # kind -> printf length modifier of 64 bits
    complex_make: str = ""  # '{T}' the complex type's name, '{0}' '{1}' its parts: a complex value
    no_contract: str = ""  # first line of a complex helper: no a * b + c fused into an fma there
    generated_file: str = "kernel.c"  # what ``#line`` names for lines from no Python line (``codegen.lines``)
    # ---- types C spells with help (float16): see docs/architecture.md, "Where to add a type"
    type_preamble: dict[ScalarType, str] = field(default_factory=dict)  # a header the type needs, where used
    casts: dict[tuple[str, str], str] = field(default_factory=dict)  # (from, to) name or '*' -> '{0}', '{T}'
    literals: dict[ScalarType, str] = field(default_factory=dict)  # '{0}': a float literal made a value of the type
    rounding: dict[ScalarType, str] = field(default_factory=dict)  # '{0}': a wider register's value rounded to the type
    # (C operator, type) -> '{0}', '{1}': an operator spelled as a call (CUDA's __hmul_rn: never fused into an fma)
    operators: dict[tuple[str, ScalarType], str] = field(default_factory=dict)
    element_loads: dict[ScalarType, str] = field(default_factory=dict)  # '{e}' element, '{q}' pointer qualifier
    element_stores: dict[ScalarType, str] = field(default_factory=dict)  # the same and '{v}' the value
    scalar_params: dict[ScalarType, tuple[str, str]] = field(default_factory=dict)  # (C type, '{0}' -> register)
    helper_defs: dict[str, str] = field(default_factory=dict)  # support functions the formats above call
    constant_bits: dict[ScalarType, str] = field(default_factory=dict)  # '{0}' hex bits -> a table initialiser

    # shared memory sized at launch: a declaration at the top of the kernel (CUDA's extern __shared__
    # buffer), or a kernel parameter after the others (OpenCL's __local pointer); either names the
    # bytes gk_dynamic_shared, whose length in bytes the kernel gets as its last argument
    dynamic_shared_decl: str = ""
    dynamic_shared_param: str = ""
    # '{cond}', '{what}': a compile-time check of a record struct's layout (CUDA's static_assert)
    layout_assert: str = ""
    # asynchronous copies global -> shared (``ir.AsyncCopy``): '{d}' '{s}' the two addresses, '{n}' the
    # bytes; commit; wait ('{n}': the groups that may stay in flight); the header they need.  Where
    # ``async_copy`` is empty the copy is a plain one (an element, or a vector by ``vload``/``vstore``)
    # and commit and wait have nothing to do
    async_copy: str = ""
    async_commit: str = ""
    async_wait: str = ""
    async_preamble: str = ""

    # warp intrinsics: op (``warp_ops.WARP_OPS``) -> format with {mask}, {0} {1} {2} (operands: a
    # shuffle's value, lane and width), {T} the value's type, {U} its unsigned type, {to} {from} its bits functions
    warp: dict[str, str] = field(default_factory=dict)
    warp_helpers: str = ""  # C functions the warp formats call, written once where a warp op is used
    # where not empty, warp ops are emulated through this work-group scratch array (declared at the top
    # of the kernel; '{n}': its length, the most threads a block may have), with work-group barriers:
    # every thread of the block must reach each of them, and they cannot be in a @func
    warp_scratch: str = ""
    warp_group_max: int = 0  # the most threads per block the emulation holds
    warp_emulation: str = ""  # what the emulation stands in for, for its error messages
    # block-wide votes: op (``warp_ops.BLOCK_VOTES``) -> the statement, '{r}' the result variable, '{p}'
    # the predicate; where not empty, the scratch their emulation counts in (declared at the top of the
    # kernel; they cannot be in a @func)
    block_votes: dict[str, str] = field(default_factory=dict)
    block_vote_scratch: str = ""
    # the matrix units (gk.fragment, gk.mma...): the spellings (keys: see codegen.dialects._CUDA_WMMA);
    # where empty, ``matrix_missing`` names what the language lacks, for the CompileError
    matrix: dict[str, str] = field(default_factory=dict)
    matrix_missing: str = ""


# C computes + - * << on 8- and 16-bit integers in int (the integer promotions): those results
# are written in unsigned int (no signed overflow) and converted back to the type, which wraps
# as NumPy's do; the other operators' results stay in the type's range.
_NARROW_WRAPS = frozenset({"+", "-", "*", "<<"})
_HELPER_NAME = re.compile(r"\bgk_\w+")


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
        self.preambles: dict[str, None] = {}  # the headers of the types used (type_preamble), in order
        self.locations: dict[tuple[str, int], int] = {}  # (Python file, line) -> its index in the marks

    # ------------------------------------------------------------ program
    def program(self, prog: ir.Program) -> str:
        """The C of ``prog`` as compiled: with ``#line`` directives to its Python lines
        (``codegen.lines.strip`` gives the text shown)."""
        func_names = self._function_names(prog)
        fds = prog.funcs + [prog.kernel]
        # an access needing more than its element's alignment (a vector, a copy; in the kernel or a
        # helper) has shared and local arrays declared 16-byte aligned; a fragment operation, more
        self.overaligned = any(a.overaligned for fd in fds for n in ir.walk_body(fd.body) for a in n.accesses())
        self.matrix = any(isinstance(n, ir.MatrixOp) for fd in fds for n in ir.walk_body(fd.body))
        self.program = prog
        self.tables = self._table_names(prog, func_names)
        self.records = _record_names(prog)
        structs = [self.struct(t) for t in self.records]
        tables = [self.table(ref, data) for ref, data in prog.tables]
        bodies = [self.function(fd, func_names) for fd in prog.funcs + [prog.kernel]]
        k = prog.kernel
        where = f"{k.loc.filename}:{k.loc.lineno}" if k.loc is not None else k.name
        parts = ["\n".join([f"// Generated by gpukern from {where} ({k.description or k.name})", *self.d.preamble])]
        if self.uses_fp64 and self.d.fp64_preamble:
            parts.append("\n".join(self.d.fp64_preamble))
        if self.preambles:
            parts.append("\n".join(self.preambles))
        if self.extensions:
            parts.append("\n".join(self.d.extension_pragma.format(name=x) for x in sorted(self.extensions)))
        parts += structs + tables + list(self.helpers.values()) + bodies
        text = "\n\n".join(p for p in parts if p) + "\n"
        return line_directives.directives(text, list(self.locations), self.d.generated_file)

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
        shape = tuple(max(n, 1) for n in ref.type.shape or ()) or (1,)  # C: no 0 sides; a 0-D table has [1]
        if data.size == 0:  # C has no arrays of 0 elements: zeros, which no read reaches (bounds are the shape's)
            data = np.zeros(shape, data.dtype)
        if isinstance(t, RecordType):
            values = [self.record_value(t, r, specials) for r in data.reshape(-1)]
        else:
            values = [self.constant_value(v, t, specials) for v in data.reshape(-1)]
        dims = "".join(f"[{n}]" for n in shape)
        body = self._table_rows(values, shape)
        where = f"  // a table of the module, first read at line {ref.loc.lineno}" if ref.loc is not None else ""
        head = f"{self.d.qualifiers['constant']}{self.storage(t)} {self.tables[ref.name]}{dims} = {{{where}"
        return f"{head}\n    {body}\n}};"

    def record_value(self, t: RecordType, record: Any, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One record of a constant table: its members in the struct's order, pads as zeros (``struct``)."""
        parts, at = [], 0
        for f in t.fields:
            if f.offset > at:
                parts.append("{0}")
            parts.append(self.constant_value(record[f.name], f.type, specials))
            at = f.offset + f.type.itemsize
        if t.itemsize > at:
            parts.append("{0}")
        return "{" + ", ".join(parts) + "}"

    def constant_value(self, v: Any, t: ScalarType, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One element of a constant table, as a constant expression."""
        if t.itemsize == 2 and t.is_float:  # float16, bfloat16: stored bits (or the dialect's spelling of them)
            bits = int(np.asarray(v).view(np.uint16))
            return self.d.constant_bits.get(t, "{0}").format(f"0x{bits:04x}")
        v = v.item() if isinstance(v, np.generic) else v
        if t.is_complex:  # an aggregate of its parts (make_float2 is no constant expression)
            f = component(t)
            return "{" + ", ".join(self.table_value(p, f, specials) for p in (v.real, v.imag)) + "}"
        if t.is_float:
            return self.table_value(v, t, specials)
        return self.expr(ir.Lit(v, t))

    @staticmethod
    def _table_rows(values: list[str], shape: tuple[int, ...]) -> str:
        """A table's initializer body: eight values a line for one dimension, else one brace per
        innermost row, nested per dimension (brace elision would mis-assign aggregate elements)."""
        if len(shape) <= 1:
            return ",\n    ".join(", ".join(values[i : i + 8]) for i in range(0, len(values), 8))

        def nest(flat: list[str], dims: tuple[int, ...]) -> str:
            if len(dims) == 1:
                return "{" + ", ".join(flat) + "}"
            step = len(flat) // dims[0]
            return "{" + ", ".join(nest(flat[i : i + step], dims[1:]) for i in range(0, len(flat), step)) + "}"

        step = len(values) // shape[0]
        return ",\n    ".join(nest(values[i : i + step], shape[1:]) for i in range(0, len(values), step))

    def table_value(self, v: float, t: ScalarType, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One float of a constant table (inf and nan as constant expressions)."""
        if math.isfinite(v):
            return self.expr(ir.Lit(v, t))
        spelled = specials[("nan" if math.isnan(v) else "inf", t)]
        return f"-{spelled}" if math.copysign(1.0, v) < 0 else spelled

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
        self.record_arrays = {  # record array parameters and tables: the arrays whose fields ``element`` reaches
            p.name: p.type.elem
            for p in list(fd.params) + [ref for ref, _ in self.program.tables]
            if isinstance(p, ir.ArrayRef) and isinstance(p.type.elem, RecordType)
        }
        dynamic = fd.is_kernel and uses_dynamic_shared(fd)
        if fd.is_kernel:
            params = [self.kernel_param(p, fd) for p in fd.kernel_params]
            if dynamic:
                params += self.dynamic_shared_params()
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
        if dynamic and self.d.dynamic_shared_decl:
            lines.append(f"    {self.d.dynamic_shared_decl}")
        for p in fd.kernel_params if fd.is_kernel else []:
            if p.kind == "scalar" and self.param_name(p) != self.name(p.name):
                value = self.d.scalar_params[p.type][1].format(self.param_name(p))
                lines.append(f"    const {self.type(p.type)} {self.name(p.name)} = {value};")
        if self.d.warp_scratch and any(isinstance(n, ir.WarpOp) for n in ir.walk_body(fd.body)):
            self.check_warp_emulation(fd)
            lines.append("    " + self.d.warp_scratch.format(n=self.d.warp_group_max))
        vote = next((n for n in ir.walk_body(fd.body) if isinstance(n, ir.Barrier) and n.vote is not None), None)
        if vote is not None and self.d.block_vote_scratch:
            if not fd.is_kernel:
                raise CompileError(
                    f"{BLOCK_VOTES[vote.vote].name}() in a @func cannot be compiled to {self.d.name}: its emulation "
                    "counts in a __local variable, which OpenCL C declares in the kernel's own body only",
                    vote.loc,
                    "call it in the kernel, or run on CUDA or the simulator",
                )
            lines.append("    " + self.d.block_vote_scratch)
        for v in fd.locals:
            lines.append(f"    {self.type(v.type)} {self.name(v.name)};")
        lines += self.block(fd.body, 1)
        lines.append("}")
        return "\n".join(lines)

    def _reserve_names(self, fd: ir.FuncDef) -> None:
        taken = set(self.func_names.values()) | set(self.tables.values())
        self.names.update(self.tables)
        pyname_nodes = [p for p in fd.params] + [
            n for n in ir.walk_body(fd.body) if isinstance(n, (ir.Var, ir.ArrayRef, ir.VecLoad, ir.Fragment))
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
            return self.global_param(p.name, p.type, fd)
        if p.kind == "shape":
            ref = ir.ArrayRef(p.name, p.type)  # type: ignore[arg-type]
            return f"{self.type(int64)} {self.shape_name(ref, p.dim)}"
        assert isinstance(p.type, ScalarType)
        if p.type in self.d.scalar_params:  # passed as another C type, converted in the body's first line
            return f"{self.d.scalar_params[p.type][0]} {self.param_name(p)}"
        return f"{self.storage(p.type)} {self.name(p.name)}"

    def global_param(self, name: str, t: ArrayType, fd: ir.FuncDef) -> str:
        """A global array parameter: ``const`` and no-alias where the function never writes it.
        A written array is never ``restrict``: threads of a block that pass values through it across
        a barrier or ``syncwarp`` would read stale values (nvcc hoists a ``restrict`` load above
        ``bar.sync``: every thread but the writer then keeps the old value)."""
        const, restrict = ("", "") if name in fd.written else ("const ", self.d.restrict)
        return self.d.global_ptr.format(T=self.storage(t.elem), name=self.name(name), const=const, restrict=restrict)

    def param_name(self, p: ir.KernelParam) -> str:
        """The C name of a scalar parameter: its own, or for one passed as another C type
        (``scalar_params``) a name for the passed value, converted into the variable in the body."""
        if p.type in self.d.scalar_params and self.d.scalar_params[p.type][1] != "{0}":
            return f"gk_arg_{self.name(p.name)}"
        return self.name(p.name)

    def func_param(self, p: ir.Var | ir.ArrayRef, fd: ir.FuncDef) -> list[str]:
        if isinstance(p, ir.Var):
            return [f"{self.type(p.type)} {self.name(p.name)}"]
        t = p.type
        if t.space == "global":
            out = [self.global_param(p.name, t, fd)]
            return out + [f"{self.type(int64)} {self.shape_name(p, d)}" for d in range(t.ndim)]
        qual = self.d.pointer_spaces.get(t.space, "")
        if t.shape is None:  # a dynamic_shared() array: a pointer into the launch's shared memory
            return [f"{qual}{self.storage(t.elem)}* {self.name(p.name)}"]
        dims = "".join(f"[{n}]" for n in t.shape or ())
        return [f"{qual}{self.storage(t.elem)} {self.name(p.name)}{dims}"]

    def dynamic_shared_params(self) -> list[str]:
        """The C parameters a kernel using dynamic_shared() takes after its own: the launch's
        dynamic shared bytes (an int64, for len()), and the buffer where the dialect passes it."""
        out = [f"{self.type(int64)} {DYNAMIC_BYTES}"]
        return out + ([self.d.dynamic_shared_param] if self.d.dynamic_shared_param else [])

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
        if node.loc is not None:  # the statement's Python line, for ``#line``
            where = (node.loc.filename, node.loc.lineno)
            pad = line_directives.mark(self.locations.setdefault(where, len(self.locations))) + pad
        if src:
            return f"{pad}{text}  // {node.loc.lineno}: {src}"
        return f"{pad}{text}"

    def stmt_DeclArray(self, s: ir.DeclArray, depth: int) -> list[str]:
        t = s.array.type
        if t.shape is None:  # dynamic_shared(): every one starts at byte 0 of the launch's buffer
            T = f"{self.d.pointer_spaces.get('shared', '')}{self.storage(t.elem)}*"
            return [self.line(depth, f"{T} {self.name(s.array.name)} = ({T}){DYNAMIC_BUFFER};", s)]
        qual = self.d.qualifiers[t.space]
        if self.matrix:  # wmma needs a tile's first element 256-bit aligned
            qual += self.d.align.format(n=ir.TILE_ALIGNMENT)
        elif self.overaligned:
            qual += self.d.align.format(n=16)
        dims = "".join(f"[{n}]" for n in t.shape or ())
        return [self.line(depth, f"{qual}{self.storage(t.elem)} {self.name(s.array.name)}{dims};", s)]

    def stmt_Assign(self, s: ir.Assign, depth: int) -> list[str]:
        target, v = self.name(s.target.name), s.value
        if s.declare:
            return [self.line(depth, f"{self.type(s.target.type)} {target} = {self.expr(v)};", s)]
        if (
            isinstance(v, ir.BinOp)
            and self.compound_ok(v.type)
            and self.infix(v)
            and isinstance(v.left, ir.Var)
            and v.left.name == s.target.name
        ):
            op = ops.BINARY[v.op].c_operator
            return [self.line(depth, f"{target} {op}= {self.expr(v.right)};", s)]  # x = x + y -> x += y
        return [self.line(depth, f"{target} = {self.expr(v)};", s)]

    def stmt_Store(self, s: ir.Store, depth: int) -> list[str]:
        target, v = self.element(s.array, s.indices), s.value
        fmt = self.d.element_stores.get(s.array.type.elem)
        if fmt is not None:
            q = self.d.pointer_spaces.get(s.array.type.space, "")
            return [self.line(depth, self.support(fmt.format(e=target, q=q, v=self.expr(v))) + ";", s)]
        if (
            self.compound_ok(v.type)
            and isinstance(v, ir.BinOp)
            and self.infix(v)
            and isinstance(v.left, ir.Load)
            and v.left.array.name == s.array.name
            and self.expr(v.left) == target
        ):
            op = ops.BINARY[v.op].c_operator
            return [self.line(depth, f"{target} {op}= {self.expr(v.right)};", s)]  # a[i] = a[i] + y -> a[i] += y
        return [self.line(depth, f"{target} = {self.expr(v)};", s)]

    # ------------------------------------------------------------ matrix units (gpukern.mma)
    def matrix_spelling(self, key: str, node: ir.Node) -> str:
        if not self.d.matrix:
            raise CompileError(
                f"gk.fragment() and gk.mma() cannot be compiled to {self.d.name}: they need {self.d.matrix_missing}",
                node.loc,
                "run the kernel on CUDA (sm_70 and later; bfloat16 and TF32 sm_80) or on the simulator",
            )
        self.preambles.setdefault(self.d.matrix["preamble"], None)
        return self.d.matrix[key]

    def stmt_DeclFragment(self, s: ir.DeclFragment, depth: int) -> list[str]:
        t = s.fragment.type
        text = self.matrix_spelling("fragment", s)
        m = self.d.matrix
        T = m["type:" + (mma_ops.precision(t) if t.use != "accumulator" else "float32")]
        layout = m["layout:" + t.layout] if t.layout else ""
        name = self.name(s.fragment.name)
        text = text.format(use=m["use:" + t.use], m=t.m, n=t.n, k=t.k, T=T, layout=layout, name=name)
        return [self.line(depth, text, s)]

    def stmt_FillFragment(self, s: ir.FillFragment, depth: int) -> list[str]:
        t = s.fragment.type
        prec = mma_ops.precision(t) if t.use != "accumulator" else "float32"
        v = self.d.matrix["value:" + prec].format(self.expr(s.value))
        return [self.line(depth, self.matrix_spelling("fill", s).format(f=self.name(s.fragment.name), v=v), s)]

    def tile_pointer(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        cast = self.d.matrix.get("pointer:" + array.type.elem.name, "")
        return f"{cast}&{self.element(array, indices)}"

    def stmt_LoadMatrix(self, s: ir.LoadMatrix, depth: int) -> list[str]:
        t, f = s.fragment.type, self.name(s.fragment.name)
        key = "load_accumulator" if t.use == "accumulator" else "load"
        text = self.matrix_spelling(key, s).format(f=f, p=self.tile_pointer(s.array, s.indices), ldm=self.expr(s.ldm))
        if t.use != "accumulator":
            text += self.d.matrix.get("round:" + mma_ops.precision(t), "").format(f=f)
        return [self.line(depth, text, s)]

    def stmt_StoreMatrix(self, s: ir.StoreMatrix, depth: int) -> list[str]:
        p, f = self.tile_pointer(s.array, s.indices), self.name(s.fragment.name)
        return [self.line(depth, self.matrix_spelling("store", s).format(p=p, f=f, ldm=self.expr(s.ldm)), s)]

    def stmt_Mma(self, s: ir.Mma, depth: int) -> list[str]:
        names = {k: self.name(getattr(s, k).name) for k in "dabc"}
        return [self.line(depth, self.matrix_spelling("mma", s).format(**names), s)]

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

    def stmt_Print(self, s: ir.Print, depth: int) -> list[str]:
        """One printf: the texts as its format (``%`` doubled), a conversion per value."""
        fmt, args = [formats.c_string(s.texts[0])], []
        for v, text in zip(s.values, s.texts[1:]):
            f = formats.print_format(v.type)
            spec = f.spec[:-1] + self.d.print_lengths.get(v.type.kind, "") + f.spec[-1] if f.wide else f.spec
            fmt.append(f"%{spec}{formats.c_string(text)}")
            value = ir.Cast(v, f.cast, loc=v.loc) if f.cast is not None and f.cast != v.type else v
            args.append(f.c_arg.format(self.expr(value, _TERNARY + 1)))
        return [self.line(depth, self.d.print_call.format(args=", ".join([f'"{"".join(fmt)}"', *args])), s)]

    def stmt_Barrier(self, s: ir.Barrier, depth: int) -> list[str]:
        if s.vote is None or s.pred is None or s.result is None:
            return [self.line(depth, self.d.barrier, s)]
        text = self.d.block_votes[s.vote].format(r=self.name(s.result.name), p=self.expr(s.pred))
        return [self.line(depth, self.support(text), s)]

    def stmt_Fence(self, s: ir.Fence, depth: int) -> list[str]:
        return [self.line(depth, self.d.fences[s.scope], s)]

    def stmt_AsyncCopy(self, s: ir.AsyncCopy, depth: int) -> list[str]:
        dst, src = self.element(s.dst, s.dst_indices), self.element(s.src, s.src_indices)
        if self.d.async_copy:
            self.preambles.setdefault(self.d.async_preamble)
            text = self.d.async_copy.format(d=f"&{dst}", s=f"&{src}", n=s.width * s.dst.type.elem.itemsize)
        elif s.width == 1:
            text = f"{dst} = {src};"
        elif s.dst.type.elem in self.d.vector_types:  # a plain copy of a vector
            V = self.vector_type(s.dst.type.elem, s.width)
            load = self.d.vload.format(V=V, n=s.width, p=f"&{src}")
            text = self.d.vstore.format(V=V, n=s.width, p=f"&{dst}", values=load)
        else:  # no vector of the type (8- and 16-bit ones, half): element by element, storage as it is
            pairs = [(self._plus(s.dst_indices, k), self._plus(s.src_indices, k)) for k in range(s.width)]
            text = " ".join(f"{self.element(s.dst, d)} = {self.element(s.src, r)};" for d, r in pairs)
        return [self.line(depth, text, s)]

    @staticmethod
    def _plus(indices: list[ir.Expr], k: int) -> list[ir.Expr]:
        """``indices`` with ``k`` added to the last one (the next elements of a row)."""
        if not k:
            return list(indices)
        last = indices[-1]
        return [*indices[:-1], ir.BinOp("+", last, ir.Lit(k, last.type, loc=last.loc), last.type, loc=last.loc)]

    def stmt_AsyncCommit(self, s: ir.AsyncCommit, depth: int) -> list[str]:
        return [self.line(depth, self.d.async_commit or "/* copies here are plain ones: no group to close */", s)]

    def stmt_AsyncWait(self, s: ir.AsyncWait, depth: int) -> list[str]:
        text = self.d.async_wait.format(n=s.pending) if self.d.async_wait else "/* copies here are plain ones: done */"
        return [self.line(depth, text, s)]

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
        stored = self.d.storage_types.get(t)
        return stored if stored is not None else self.d.types[t]

    def make_complex(self, t: ScalarType, re: str, im: str) -> str:
        return self.d.complex_make.format(re, im, T=self.type(t))

    def expr_Lit(self, e: ir.Lit) -> tuple[str, int]:
        t, v = e.type, e.value
        if t.is_complex:
            f = component(t)
            parts = (self.expr_Lit(ir.Lit(p, f))[0] for p in (complex(v).real, complex(v).imag))
            return self.make_complex(t, *parts), _ATOM
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
        single = t.itemsize <= 4  # a float16 value is written as the float32 of the same value
        text = str(np.float32(v)) if single else repr(float(v))
        if "e" not in text and "." not in text:
            text += ".0"
        text += "f" if single else ""
        if t in self.d.literals:
            self.type(t)
            return self.d.literals[t].format(text), _ATOM
        return text, (_UNARY if text.startswith("-") else _ATOM)

    def expr_Var(self, e: ir.Var) -> tuple[str, int]:
        return self.name(e.name), _ATOM

    def element(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        text = self._element(array, indices)
        if array.record_field is not None:  # a field of a record array: the struct's member
            record = self.record_arrays[array.name]
            text += "." + self.records[record][1][array.record_field]
        return text

    def struct(self, t: RecordType) -> str:
        """The C struct of a record type, member by member at the dtype's offsets: a gap becomes a
        ``gk_pad`` member; every member sits at a multiple of its size, so C adds no padding of its
        own, and the size is the dtype's (``types.record_type`` refused the layouts C cannot have)."""
        cname, members = self.records[t]
        lines = [f"typedef struct {{  // NumPy dtype {t.dtype}, {t.itemsize} bytes"]
        at = 0
        for f in t.fields:
            if f.offset > at:
                lines.append(f"    unsigned char gk_pad{at}[{f.offset - at}];")
            lines.append(f"    {self.storage(f.type)} {members[f.name]};  // byte {f.offset}")
            at = f.offset + f.type.itemsize
        if t.itemsize > at:
            lines.append(f"    unsigned char gk_pad{at}[{t.itemsize - at}];")
        lines.append(f"}} {cname};")
        if self.d.layout_assert:
            # the compiler proves the layout is NumPy's: the members and gaps add up to the
            # itemsize, so the size is the itemsize exactly when C padded nowhere, and then every
            # member is at its dtype offset (no offsetof: NVRTC 13.0 refuses it in a static_assert)
            what = f"{cname} is {t.itemsize} bytes, its members at the dtype's offsets"
            lines.append(self.d.layout_assert.format(cond=f"sizeof({cname}) == {t.itemsize}", what=what))
        return "\n".join(lines)

    def _element(self, array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        name = self.name(array.name)
        if not indices:  # a 0-dimensional array: its one element (a constant table's declaration has [1])
            return f"{name}[0]"
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
        fmt = self.d.element_loads.get(e.array.type.elem)
        if fmt is not None:
            q = self.d.pointer_spaces.get(e.array.type.space, "")
            return self.support(fmt.format(e=self.element(e.array, e.indices), q=q)), _ATOM
        return self.element(e.array, e.indices), _ATOM

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
            return self.complex_call(op.name, t, [e.left, e.right], op.complex_helper), _ATOM
        if not self.infix(e):
            ct = compute_type(t)
            if ct != t:  # computed in the wider type, rounded back
                wide = ir.BinOp(e.op, ir.Cast(e.left, ct), ir.Cast(e.right, ct), ct, loc=e.loc)
                return self.cast_text(ct, t, self.expr(wide)) or f"({self.type(t)}){self.expr(wide, _UNARY)}", _ATOM
            if t.is_float and op.float_math:
                return self.math_text(op.float_math, t, [self.expr(e.left), self.expr(e.right)]), _ATOM
            return self.helper_call(op.name, t, [e.left, e.right], op.helper(t)), _ATOM
        c_op = op.c_operator
        p = _PREC[c_op]
        if self.narrow(t) and c_op in _NARROW_WRAPS:
            U = self.d.unsigned_types[4]
            return f"({self.type(t)})(({U}){self.expr(e.left, _UNARY)} {c_op} {self.expr(e.right, p + 1)})", _UNARY
        call = self.d.operators.get((c_op, t))
        if call is not None:
            return call.format(self.expr(e.left), self.expr(e.right)), _ATOM
        text = f"{self.expr(e.left, p)} {c_op} {self.expr(e.right, p + 1)}"
        if t in self.d.rounding:
            return self.rounded(t, text), _ATOM
        return text, p

    def nonnegative(self, e: ir.Expr) -> bool:
        return is_nonnegative(e, self.nonneg)

    def expr_Compare(self, e: ir.Compare) -> tuple[str, int]:
        if e.left.type.is_complex:
            op = ops.COMPARE[e.op]
            return self.complex_call(op.name, e.left.type, [e.left, e.right], op.complex_helper, bool_), _ATOM
        p = _PREC[e.op]
        return f"{self.expr(e.left, p)} {e.op} {self.expr(e.right, p + 1)}", p

    def expr_Logic(self, e: ir.Logic) -> tuple[str, int]:
        op = "&&" if e.op == "and" else "||"
        p = _PREC[op]
        return f"{self.expr(e.left, p)} {op} {self.expr(e.right, p + 1)}", p

    def expr_Unary(self, e: ir.Unary) -> tuple[str, int]:
        if e.type.is_complex:
            return self.complex_call("neg", e.type, [e.operand], ops.UNARY[e.op].complex_helper), _ATOM
        op = ops.UNARY[e.op].c_symbol
        inner = self.expr(e.operand, _UNARY)
        if op == "-" and inner.startswith("-"):
            inner = f"({inner})"
        if self.narrow(e.type):  # -x and ~x of a narrow integer are ints: back to the type, wrapping
            return f"({self.type(e.type)})({op}{inner})", _UNARY
        return f"{op}{inner}", _UNARY

    def expr_Cast(self, e: ir.Cast) -> tuple[str, int]:
        if e.type.is_complex:
            return self.complex_call(f"to_{e.type.name}", e.value.type, [e.value], ops.cx.c_cast(e.type), e.type), _ATOM
        if isinstance(e.value, ir.Lit) and e.type != bool_ and e.value.type != bool_:
            with np.errstate(all="ignore"):
                value = np.array(e.value.value, e.value.type.dtype).astype(e.type.dtype).item()
            return self.expr_Lit(ir.Lit(value, e.type))
        if e.type == bool_:
            return f"{self.expr(e.value, _PREC['!='] + 1)} != {self.zero(e.value.type)}", _PREC["!="]
        special = self.cast_text(e.value.type, e.type, self.expr(e.value))
        if special is not None:
            return special, _ATOM
        return f"({self.type(e.type)}){self.expr(e.value, _UNARY)}", _UNARY

    def zero(self, t: ScalarType) -> str:
        return self.expr_Lit(ir.Lit(0.0 if t.is_float else 0, t))[0] if t != bool_ else "false"

    def expr_Select(self, e: ir.Select) -> tuple[str, int]:
        c = self.expr(e.cond, _TERNARY + 1)
        return f"{c} ? {self.expr(e.a, _TERNARY + 1)} : {self.expr(e.b, _TERNARY)}", _TERNARY

    def expr_MathCall(self, e: ir.MathCall) -> tuple[str, int]:
        t, mf = e.args[0].type, ops.function(e.name)
        ct = compute_type(t)
        if ct != t and not isinstance(e.type, TupleType):  # computed in the wider type, rounded back
            # each operand widened, but one of a type of its own (ldexp's int exponent) stays as it is
            args = [a if mf.operand_dtype(k, None) is not None else ir.Cast(a, ct) for k, a in enumerate(e.args)]
            wide = ir.MathCall(e.name, args, e.type if mf.predicate else ct, loc=e.loc)
            if mf.predicate:  # (a predicate needs no rounding)
                return self.expr_MathCall(wide)
            return self.cast_text(ct, t, self.expr(wide)) or f"({self.type(t)}){self.expr(wide, _UNARY)}", _ATOM
        if isinstance(e.type, TupleType):  # several results: a helper filling the tuple's struct
            R, fill = self.type(e.type), mf.tuple_helper
            assert fill is not None
            body = lambda t, c: f"    {R} r;\n{fill(t, c)}\n    return r;"  # noqa: E731
            return self.helper_call(e.name, t, e.args, body, e.type), _ATOM
        if mf.complex_helper is not None and (t.is_complex or mf.typing == "make"):
            return self.complex_call(e.name, t, e.args, mf.complex_helper, e.type), _ATOM
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
        if e.array.type.space == "shared":  # a dynamic_shared() array: its length is the launch's bytes
            return f"{DYNAMIC_BYTES} / {e.array.type.elem.itemsize}", _PREC["/"]
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
        fields = {"mask": text, "to": to_bits}
        fields.update({"from": from_bits, "T": self.type(t), "U": self.d.unsigned_types.get(t.itemsize, "")})
        return self.support(self.d.warp[e.op].format(*(self.expr(a) for a in e.args), **fields)), _ATOM

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

    def expr_Atomic(self, e: ir.Atomic) -> tuple[str, int]:
        ptr = f"&{self.element(e.array, e.indices)}"
        t = e.type
        operands = [self.expr(o) for o in e.operands]
        entry = ops.ATOMIC[e.op]
        op = entry.on_integers if t.is_int and entry.on_integers else e.op  # nanmax of integers: max
        native = self.d.native_atomics.get((op, t.name))
        extension = self.d.atomic_extensions.get((op if native is not None else "cas", t.itemsize))
        if extension is not None:
            self.extensions.setdefault(extension, e)
        if native is not None:
            return native.format(*operands, p=ptr, T=self.storage(t)), _ATOM
        space = e.array.type.space
        # one helper per pointer qualifier the dialect writes (OpenCL's __global and __local differ)
        qualified = f"_{space}" if self.d.pointer_spaces.get(space) else ""
        name = f"gk_atomic_{op}_{t.name}{qualified}"
        if name not in self.helpers:
            self.helpers[name] = self._cas_helper(name, op, t, space)
        return f"{name}({ptr}, {', '.join(operands)})", _ATOM

    # ------------------------------------------------------------ tuples
    def tuple_struct(self, t: TupleType) -> str:
        """The struct holding a tuple of these types (fields ``v0``, ``v1``...), declared on first use."""
        name = "gk_tuple_" + "_".join(item.name for item in t.items)
        if name not in self.helpers:
            fields = "".join(f"    {self.type(item)} v{k};\n" for k, item in enumerate(t.items))
            self.helpers[name] = f"typedef struct {{\n{fields}}} {name};"
        return name

    def expr_Item(self, e: ir.Item) -> tuple[str, int]:
        return f"{self.expr(e.tuple, _ATOM)}.v{e.index}", _ATOM

    def expr_MakeTuple(self, e: ir.MakeTuple) -> tuple[str, int]:
        items = ", ".join(self.expr(i) for i in e.items)
        return self.d.tuple_value.format(T=self.type(e.type), items=items), _UNARY

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

    def complex_call(
        self, kind: str, t: ScalarType, args: list[ir.Expr], body: Any, ret: ScalarType | None = None
    ) -> str:
        """A helper of ``complex_ops`` (``body``), in which the compiler may not fuse a product
        into an fma (the dialect's ``no_contract`` line), as NumPy computes the parts."""
        assert body is not None, f"no complex form of {kind}: the front end refuses it"
        if self.d.no_contract:
            return self.helper_call(kind, t, args, lambda t, c: f"{self.d.no_contract}\n{body(t, c)}", ret)
        return self.helper_call(kind, t, args, body, ret)

    def _cas_helper(self, name: str, op: str, t: ScalarType, space: str) -> str:
        """An atomic the hardware lacks, built from a compare-and-swap loop on the element's bits."""
        if t.itemsize < 4:
            return self._word_cas_helper(name, op, t, space)
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

    def _word_cas_helper(self, name: str, op: str, t: ScalarType, space: str) -> str:
        """An atomic on an 8- or 16-bit element, which no device has an instruction for: a
        compare-and-swap loop on the aligned 32-bit word holding the element (GPUs and OpenCL's
        CPU devices are little-endian: the element's byte offset in the word, times 8, is its
        shift), which puts back the other bytes as it found them.  A store of another thread to
        them between the read and the compare-and-swap makes it fail and try again, so no update
        is lost; the element is updated by ``ops.ATOMIC[op]``'s C form, as any CAS loop."""
        T, R, U, pre = self.storage(t), self.type(t), self.unsigned(t), self.d.func_prefix
        W, A = self.d.unsigned_types[4], self.d.address_int
        qual = self.d.pointer_spaces.get(space, "")
        to_bits, from_bits = self.d.bits[t]
        mask = f"0x{(1 << 8 * t.itemsize) - 1:X}u"
        found = f"({U})(assumed >> shift)"
        if op == "cas":
            params = f"{R} cmp, {R} v"
            new_bits = f"{found} == ({U}){to_bits}(cmp) ? ({U}){to_bits}(v) : {found}"
        else:
            params = f"{R} v"
            new_bits = f"({U}){to_bits}({ops.ATOMIC[op].c_update})"
        word = f"(assumed & ~(({W}){mask} << shift)) | (({W})({new_bits}) << shift)"
        call = self.d.cas_bits[4].format("assumed", word, p="w", T=W)
        return self.support(
            f"{pre}{R} {name}({qual}{T}* p, {params})\n{{\n"
            f"    {qual}{W}* w = ({qual}{W}*)(({A})p & ~({A})3);\n"
            f"    {W} shift = ({W})(({A})p & ({A})3) * 8u;\n"
            f"    {W} seen = *(volatile {qual}{W}*)w, assumed;\n"
            f"    do {{\n        assumed = seen;\n        {R} old = {from_bits}({found});\n"
            f"        seen = {call};\n    }} while (seen != assumed);\n"
            f"    return {from_bits}({found});\n}}"
        )


def _record_names(prog: ir.Program) -> dict[RecordType, tuple[str, dict[str, str]]]:
    """Per record type of the program's arrays, in order of first use: its struct's C name
    (``gk_record0``...) and its members' C names (a field named like a C word gets a ``_``, one
    that is no identifier is ``gk_field<k>``)."""
    out: dict[RecordType, tuple[str, dict[str, str]]] = {}
    arrays = [p for fd in prog.funcs + [prog.kernel] for p in fd.params] + [ref for ref, _ in prog.tables]
    for p in arrays:
        t = p.type.elem if isinstance(p, ir.ArrayRef) else None
        if isinstance(t, RecordType) and t not in out:
            members: dict[str, str] = {}
            for k, f in enumerate(t.fields):  # a name C cannot spell ("a b", "x-1") is the k-th field's
                cname = c_identifier(f.name) if f.name.isidentifier() and f.name.isascii() else f"gk_field{k}"
                while cname in members.values():  # c_identifier keeps gk_ names (the pads') for gpukern
                    cname += "_"
                members[f.name] = cname
            out[t] = (f"gk_record{len(out)}", members)
    return out
