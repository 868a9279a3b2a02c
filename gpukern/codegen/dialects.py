"""The C dialects: each language the emitter writes is one table of spellings.

CUDA C and OpenCL C differ only in qualifiers, the barrier, index intrinsics, atomics,
type and math names; those live here, apart from the runtimes that compile and launch
(``backends.cuda``, ``backends.opencl``), so showing or checking source needs no device.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import BackendError
from ..semantics import wgmma as wgmma_ops
from ..semantics.warp import SHUFFLES
from ..types import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .dialect import Dialect
from .hopper import CUDA_HOPPER
from .tf32 import cuda_tf32
from .wgmma import cuda_wgmma

_I = ("int32", "uint32")
_BITWISE = ("and", "or", "xor")
_NARROW = {"int8": "char", "uint8": "unsigned char", "int16": "short", "uint16": "unsigned short"}  # C names
_NARROW_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16}
_U64_OPS = ("add", "min", "max", "exch", *_BITWISE)  # CUDA's unsigned long long atomics


def _cuda_narrow_bits() -> dict[tuple[str, str], str]:
    """popc/clz/ffs/brev of 8- and 16-bit integers on the value's width: CUDA's 32-bit
    functions on the zero-extended bits (clz less the 32 - width bits above them)."""
    out = {}
    for name, bits in _NARROW_BITS.items():
        U = "unsigned char" if bits == 8 else "unsigned short"
        z = f"(unsigned int)({U})({{0}})"
        out[("popc", name)] = f"__popc({z})"
        out[("clz", name)] = f"(__clz((int){z}) - {32 - bits})"
        out[("ffs", name)] = f"__ffs((int){z})"
        T = "signed char" if name == "int8" else _NARROW[name]
        out[("brev", name)] = f"({T})(__brev({z}) >> {32 - bits})"
    return out


def _bf16_helpers(T: str, to_bits: str, from_bits: str) -> dict[str, str]:
    """bfloat16 elements (the bits, in an unsigned short) read as float32 and written rounded to
    nearest even, a NaN kept a NaN of its sign: the same as ``types.bfloat16``'s NumPy forms."""
    return {
        "gk_bf16_load": f"float gk_bf16_load({T} b)\n{{\n    return {from_bits}((uint_t)b << 16);\n}}",
        "gk_bf16_store": (
            f"{T} gk_bf16_store(float x)\n{{\n    uint_t u = {to_bits}(x);\n"
            f"    if (x != x) return ({T})((u >> 16) | 0x40u);\n"
            f"    return ({T})((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}}"
        ),
    }


def _fp8_helpers(T: str, to_bits: str, from_bits: str, rint: str) -> dict[str, str]:
    """float8_e4m3fn and float8_e5m2 elements (the bits, in an unsigned char) read as float32 and
    written rounded to nearest even, saturated to the largest finite value, a NaN kept a NaN of its
    sign: the same as ``types.float8_*``'s NumPy forms (and CUDA's ``cvt.rn.satfinite``)."""
    out = {}
    # name, exponent bits, bias, whether the top exponent holds inf (e5m2), largest finite bits,
    # its float32 bits, the smallest normal's float32 bits
    for name, e_bits, bias, ieee, largest, top, normal in (
        ("e4m3", 4, 7, False, 0x7E, 0x43E00000, 0x3C800000),
        ("e5m2", 5, 15, True, 0x7B, 0x47600000, 0x38800000),
    ):
        m_bits = 7 - e_bits
        shift, rebias, emax, mmax = 23 - m_bits, 127 - bias, (1 << e_bits) - 1, (1 << m_bits) - 1
        special = (
            f"    if (e == {emax}u) return {from_bits}(s | (m ? 0x7fc00000u : 0x7f800000u));\n"
            if ieee
            else f"    if (e == {emax}u && m == {mmax}u) return {from_bits}(s | 0x7fc00000u);\n"
        )
        out[f"gk_{name}_load"] = (
            f"float gk_{name}_load({T} b)\n{{\n"
            f"    uint_t s = (uint_t)(b & 0x80u) << 24, e = ((uint_t)b >> {m_bits}) & {emax}u, m = b & {mmax}u;\n"
            f"{special}"
            f"    if (e == 0u) return {from_bits}(s | {to_bits}((float)m * {2.0 ** (1 - bias - m_bits)!r}f));\n"
            f"    return {from_bits}(s | ((e + {rebias}u) << 23) | (m << {shift}));\n}}"
        )
        scale = 2.0 ** (bias + m_bits - 1)
        out[f"gk_{name}_store"] = (
            f"{T} gk_{name}_store(float x)\n{{\n"
            f"    uint_t u = {to_bits}(x), s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;\n"
            f"    if (a > 0x7f800000u) return ({T})(s | 0x7fu);\n"
            f"    if (a >= 0x{top:08x}u) return ({T})(s | 0x{largest:02x}u);\n"
            f"    if (a < 0x{normal:08x}u) return ({T})(s | (uint_t){rint}({from_bits}(a) * {scale!r}f));\n"
            f"    a += 0x{(1 << (shift - 1)) - 1:x}u + ((a >> {shift}) & 1u);\n"
            f"    return ({T})(s | ((a >> {shift}) - {rebias << m_bits}u));\n}}"
        )
    return out


# the 8-bit floats' elements in every dialect: read and written through their helpers
_FP8_LOADS = {float8_e4m3fn: "gk_e4m3_load({e})", float8_e5m2: "gk_e5m2_load({e})"}
_FP8_STORES = {float8_e4m3fn: "{e} = gk_e4m3_store({v})", float8_e5m2: "{e} = gk_e5m2_store({v})"}

# CUDA's half: arithmetic and comparisons on __half (cuda_fp16.h); conversions spelled here, every
# other operation in float (ops.compute_type)
_CUDA_HALF_CASTS = {
    ("float16", "*"): "({T})__half2float({0})",
    ("float16", "float32"): "__half2float({0})",
    ("*", "float16"): "__float2half_rn((float)({0}))",  # integers: exact in float up to half's overflow
    ("float32", "float16"): "__float2half_rn({0})",
    ("float64", "float16"): "__double2half({0})",
}


def _cuda_u64(fn: str, operands: str = "(unsigned long long)({0})") -> str:
    """CUDA's 64-bit atomic ``fn`` exists on ``unsigned long long`` only: an int64 element goes
    through it as its bit pattern (two's complement: add, exch, cas, and/or/xor are the same on
    either), and the old value comes back as ``long long``."""
    return f"((long long){fn}((unsigned long long*){{p}}, {operands}))"


# The matrix units through CUDA's nvcuda::wmma (mma.h): see gpukern/language/mma.py and docs/language.md.
# Keys: 'preamble'; 'fragment' ({use} {m} {n} {k} {T} {layout} {name}); 'use:<kind>', 'type:<precision>',
# 'layout:<row|col>'; 'load' / 'load_accumulator' ({f} {p} {ldm} {col}: 'true' for a 'col' tile), and
# 'load_ldmatrix' where mma_ops.by_ldmatrix says so (TF32's own table, codegen/tf32.py, has it);
# 'pointer:<element type>' (a cast of the tile's address where the array's storage is not the
# fragment's element); 'fill' ({f} {v}) with 'value:<precision>' ({0}); 'store' ({p} {f} {ldm});
# 'mma'.  (TF32 fragments never come here: mma_ops.lowering sends them to codegen/tf32.py.)
_CUDA_WMMA = {
    "preamble": "#include <mma.h>\nnamespace wmma = nvcuda::wmma;",
    "fragment": "wmma::fragment<wmma::{use}, {m}, {n}, {k}, {T}{layout}> {name};",
    "use:a": "matrix_a",
    "use:b": "matrix_b",
    "use:accumulator": "accumulator",
    "type:float16": "__half",
    "type:bfloat16": "__nv_bfloat16",
    "type:float32": "float",
    "layout:row": ", wmma::row_major",
    "layout:col": ", wmma::col_major",
    "pointer:bfloat16": "(const __nv_bfloat16*)",  # the array holds the bits as unsigned short
    "load": "wmma::load_matrix_sync({f}, {p}, {ldm});",
    "load_accumulator": "wmma::load_matrix_sync({f}, {p}, {ldm}, wmma::mem_row_major);",
    "fill": "wmma::fill_fragment({f}, {v});",
    "value:float16": "__float2half_rn({0})",
    "value:bfloat16": "__float2bfloat16_rn({0})",
    "value:float32": "{0}",
    "store": "wmma::store_matrix_sync({p}, {f}, {ldm}, wmma::mem_row_major);",
    "mma": "wmma::mma_sync({d}, {a}, {b}, {c});",
}

# a thread's lane in its warp: warps are cut from the block's threads in linear order
_CUDA_THREAD = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
_CUDA_LANE = f"({_CUDA_THREAD} & 31)"

_SHFL = ("idx", "up", "down", "xor")


def _opencl_shuffle(mode: str) -> str:
    rule = SHUFFLES[f"shfl_{mode}"].c.format(lane="lane", b="b", w="w")
    return (
        f"ulong gk_warp_shfl_{mode}({_WARP_PARAMS}, ulong v, uint b, uint w)\n{{\n"
        f"    uint lane = gk_warp_slot() & 31u;\n    return gk_warp_exchange({_WARP_BUFFER}, v, {rule});\n}}"
    )


# The warp intrinsics on OpenCL without sub-groups: every work-item writes its operand to its slot
# of a local scratch array, waits at a barrier and reads its warp's slots.  Two scratch arrays take
# turns (``turn``, flipped at each op), so one barrier an op is enough: an op writes the array whose
# reads, two ops back, every work-item finished before the barrier of the op between.  Exact while
# every work-item of the group calls each op (uniform control flow, which the emitter checks): the
# work-items then flip ``turn`` alike, and every lane that exists takes part.  A read of a lane past
# a partial warp's end gets a stale slot, where CUDA's value is undefined too (the simulator reports it).
_WARP_PARAMS = "__local ulong* s0, __local ulong* s1, uint* turn"
_WARP_BUFFER = "gk_warp_buffer(s0, s1, turn)"
_WARP_ARGS = "gk_warp[0], gk_warp[1], &gk_warp_turn"
_OPENCL_WARP = "\n\n".join(
    [
        """uint gk_warp_slot(void)
{
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}""",
        """uint gk_warp_live(void)
{
    uint size = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));
    uint n = min(32u, size - (gk_warp_slot() & ~31u));
    return n == 32u ? 0xFFFFFFFFu : (1u << n) - 1u;
}""",
        """__local ulong* gk_warp_buffer(__local ulong* s0, __local ulong* s1, uint* turn)
{
    *turn ^= 1u;
    return *turn ? s1 : s0;
}""",
        """ulong gk_warp_exchange(__local ulong* s, ulong v, uint j)
{
    uint me = gk_warp_slot();
    s[me] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return s[(me & ~31u) + j];
}""",
        *(_opencl_shuffle(m) for m in _SHFL),
        f"""uint gk_warp_ballot({_WARP_PARAMS}, uint mask, bool p, uint live)
{{
    __local ulong* s = {_WARP_BUFFER};
    uint me = gk_warp_slot(), r = 0u;
    s[me] = p ? 1u : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0u; k < 32u; k++) {{
        if (((live >> k) & 1u) && s[(me & ~31u) + k] != 0u) r |= 1u << k;
    }}
    return r & mask;
}}""",
        f"""bool gk_warp_all({_WARP_PARAMS}, uint mask, bool p, uint live)
{{
    return gk_warp_ballot(s0, s1, turn, mask, p, live) == (mask & live);
}}""",
        f"""bool gk_warp_any({_WARP_PARAMS}, uint mask, bool p, uint live)
{{
    return gk_warp_ballot(s0, s1, turn, mask, p, live) != 0u;
}}""",
        f"""bool gk_warp_uni({_WARP_PARAMS}, uint mask, bool p, uint live)
{{
    uint b = gk_warp_ballot(s0, s1, turn, mask, p, live);
    return b == 0u || b == (mask & live);
}}""",
        f"""uint gk_warp_active({_WARP_PARAMS}, bool p)
{{
    return gk_warp_ballot(s0, s1, turn, 0xFFFFFFFFu, p, gk_warp_live());
}}""",
        f"""uint gk_warp_match({_WARP_PARAMS}, uint mask, ulong v, uint live)
{{
    __local ulong* s = {_WARP_BUFFER};
    uint me = gk_warp_slot(), r = 0u;
    s[me] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0u; k < 32u; k++) {{
        if (((live >> k) & 1u) && s[(me & ~31u) + k] == v) r |= 1u << k;
    }}
    return r & mask;
}}""",
        f"""uint gk_warp_match_all({_WARP_PARAMS}, uint mask, ulong v, uint live)
{{
    uint r = gk_warp_match(s0, s1, turn, mask, v, live);
    return r == (mask & live) ? r : 0u;
}}""",
    ]
)


# The warp intrinsics CUDA C has no function for: eq_sync (PTX's vote.sync.uni) from two votes, whose
# results are the same in every lane of the mask; match_all's result alone (its predicate is whether
# that is not 0), one overload per width of the value's bits
_CUDA_WARP_HELPERS = {
    "gk_warp_uni": "bool gk_warp_uni(unsigned int mask, bool p)\n{\n"
    "    return __all_sync(mask, p) || !__any_sync(mask, p);\n}",
    "gk_warp_match_all": "\n\nstatic __device__ inline ".join(
        f"unsigned int gk_warp_match_all(unsigned int mask, {u} v)\n{{\n"
        "    int pred;\n    return __match_all_sync(mask, v, &pred);\n}"
        for u in ("unsigned int", "unsigned long long")
    ),
}


# A grid-wide barrier (``grid_sync``): the kernel is launched cooperatively, so every block is resident
# and may wait for the others.  Thread 0 of each block arrives for it after the block's barrier: it
# notes the generation, counts in, and the last block to arrive resets the count and advances the
# generation, which the others wait to see change; fences order each block's memory before and after.
# The count returns to 0 at every sync, so the module's two words serve every launch that runs alone.
_CUDA_GRID_SYNC = """__device__ unsigned int gk_grid_state[2];  // arrived blocks, generation

static __device__ void gk_grid_sync(void)
{
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        volatile unsigned int *generation = &gk_grid_state[1];
        const unsigned int seen = *generation;
        const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        __threadfence();
        if (atomicAdd(&gk_grid_state[0], 1u) == blocks - 1u) {
            atomicExch(&gk_grid_state[0], 0u);
            __threadfence();
            atomicAdd(&gk_grid_state[1], 1u);
        } else {
            while (*generation == seen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}"""


# sm_80's one conversion instruction rounds as gk_bf16_store does (the lent H200: every one of 5
# million float32 patterns, infinities and halfway cases included) except a NaN, which it makes
# 0x7fff: a NaN keeps the helper's sign-keeping quiet NaN, any other value takes the instruction
_CUDA_BF16_STORE = {
    "gk_bf16_store": "unsigned short gk_bf16_store(float x)\n{\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
    "    if (x != x) return (unsigned short)((__float_as_uint(x) >> 16) | 0x40u);\n"
    "    unsigned short h;\n"
    '    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));\n'
    "    return h;\n"
    "#else\n"
    "    unsigned int u = __float_as_uint(x);\n"
    "    if (x != x) return (unsigned short)((u >> 16) | 0x40u);\n"
    "    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
    "#endif\n}"
}

CUDA = Dialect(
    name="cuda",
    generated_file="kernel.cu",
    kernel_prefix='extern "C" __global__',
    func_prefix="static __device__ inline ",
    types={
        bool_: "bool",
        int32: "int",
        uint32: "unsigned int",
        int64: "long long",
        float32: "float",
        float64: "double",
        complex64: "float2",
        complex128: "double2",
        int8: "signed char",
        uint8: "unsigned char",
        int16: "short",
        uint16: "unsigned short",
        uint64: "unsigned long long",
        float16: "__half",
    },
    unsigned_types={4: "unsigned int", 8: "unsigned long long", 1: "unsigned char", 2: "unsigned short"},
    storage_types={bfloat16: "unsigned short", float8_e4m3fn: "unsigned char", float8_e5m2: "unsigned char"},
    global_ptr="{const}{T}* {restrict}{name}",
    restrict="__restrict__ ",
    qualifiers={"shared": "__shared__ ", "local": "", "constant": "__constant__ "},
    barrier="__syncthreads();",
    grid_sync="gk_grid_sync();",
    grid_sync_preamble=_CUDA_GRID_SYNC,
    specials={
        "thread_idx": "threadIdx.{c}",
        "block_idx": "blockIdx.{c}",
        "block_dim": "blockDim.{c}",
        "grid_dim": "gridDim.{c}",
        "global_id": "(blockIdx.{c} * blockDim.{c} + threadIdx.{c})",
        "lane_id": _CUDA_LANE,
    },
    int_suffix={int64: "LL", uint32: "u", uint64: "ULL"},
    float_specials={
        ("inf", float16): "__ushort_as_half((unsigned short)0x7c00u)",
        ("nan", float16): "__ushort_as_half((unsigned short)0x7e00u)",
        ("inf", float32): "__int_as_float(0x7f800000)",
        ("nan", float32): "__int_as_float(0x7fc00000)",
        ("inf", float64): "__longlong_as_double(0x7ff0000000000000LL)",
        ("nan", float64): "__longlong_as_double(0x7ff8000000000000LL)",
    },
    # in a constant table's initializer, which must be a constant expression; the bits, as NVRTC
    # knows neither __builtin_huge_valf nor __builtin_nanf (nvcc and NVRTC both know bit_cast)
    constant_specials={
        ("inf", float32): "__builtin_bit_cast(float, 0x7f800000u)",
        ("nan", float32): "__builtin_bit_cast(float, 0x7fc00000u)",
        ("inf", float64): "__builtin_bit_cast(double, 0x7ff0000000000000ull)",
        ("nan", float64): "__builtin_bit_cast(double, 0x7ff8000000000000ull)",
    },
    math={
        ("*", "float32"): "{name}f({args})",
        ("*", "*"): "{name}({args})",
        ("abs", "int32"): "abs({0})",
        ("abs", "int64"): "llabs({0})",
        ("abs", "uint32"): "({0})",
        ("abs", "float32"): "fabsf({0})",
        ("abs", "float64"): "fabs({0})",
        ("min", "*"): "min({0}, {1})",
        ("max", "*"): "max({0}, {1})",
        ("isnan", "*"): "isnan({0})",
        ("isinf", "*"): "isinf({0})",
        ("isfinite", "*"): "isfinite({0})",
        ("popc", "int32"): "__popc((unsigned int)({0}))",
        ("popc", "uint32"): "__popc({0})",
        ("popc", "int64"): "__popcll((unsigned long long)({0}))",
        ("clz", "int32"): "__clz({0})",
        ("clz", "uint32"): "__clz((int)({0}))",
        ("clz", "int64"): "__clzll({0})",
        ("ffs", "int32"): "__ffs({0})",
        ("ffs", "uint32"): "__ffs((int)({0}))",
        ("ffs", "int64"): "__ffsll({0})",
        ("brev", "int32"): "(int)__brev((unsigned int)({0}))",
        ("brev", "uint32"): "__brev({0})",
        ("brev", "int64"): "(long long)__brevll((unsigned long long)({0}))",
        # a product rounded on its own, never fused into an fma (complex arithmetic: as NumPy's)
        ("mul_rn", "float32"): "__fmul_rn({0}, {1})",
        ("mul_rn", "float64"): "__dmul_rn({0}, {1})",
        ("abs", "int8"): "(signed char)abs({0})",
        ("abs", "int16"): "(short)abs({0})",
        ("abs", "uint8"): "({0})",
        ("abs", "uint16"): "({0})",
        ("abs", "uint64"): "({0})",
        ("popc", "uint64"): "__popcll({0})",
        ("clz", "uint64"): "__clzll((long long)({0}))",
        ("ffs", "uint64"): "__ffsll((long long)({0}))",
        ("brev", "uint64"): "__brevll({0})",
        **_cuda_narrow_bits(),
    },
    native_atomics={
        **{("add", t): "atomicAdd({p}, {0})" for t in _I + ("float32",)},
        **{("sub", t): "atomicSub({p}, {0})" for t in _I},
        ("sub", "float32"): "atomicAdd({p}, -({0}))",
        **{("min", t): "atomicMin({p}, {0})" for t in _I},
        **{("max", t): "atomicMax({p}, {0})" for t in _I},
        **{("exch", t): "atomicExch({p}, {0})" for t in _I + ("float32",)},
        ("cas", "int32"): "atomicCAS({p}, {0}, {1})",
        ("cas", "uint32"): "atomicCAS({p}, {0}, {1})",
        **{(op, t): f"atomic{op.capitalize()}({{p}}, {{0}})" for op in _BITWISE for t in _I},
        ("inc", "uint32"): "atomicInc({p}, {0})",
        ("dec", "uint32"): "atomicDec({p}, {0})",
        # 64-bit (sm_60+ for double atomicAdd; the rest sm_35+)
        ("add", "int64"): _cuda_u64("atomicAdd"),
        ("sub", "int64"): _cuda_u64("atomicAdd", "0ull - (unsigned long long)({0})"),
        ("min", "int64"): "atomicMin({p}, {0})",
        ("max", "int64"): "atomicMax({p}, {0})",
        ("exch", "int64"): _cuda_u64("atomicExch"),
        ("cas", "int64"): _cuda_u64("atomicCAS", "(unsigned long long)({0}), (unsigned long long)({1})"),
        **{(op, "int64"): _cuda_u64(f"atomic{op.capitalize()}") for op in _BITWISE},
        ("add", "float64"): "atomicAdd({p}, {0})",
        ("sub", "float64"): "atomicAdd({p}, -({0}))",
        **{(op, "uint64"): f"atomic{op.capitalize()}({{p}}, {{0}})" for op in _U64_OPS},
        ("sub", "uint64"): "atomicAdd({p}, 0ull - ({0}))",
        ("cas", "uint64"): "atomicCAS({p}, {0}, {1})",
    },
    bits={
        int32: ("(unsigned int)", "(int)"),
        uint32: ("", ""),
        int64: ("(unsigned long long)", "(long long)"),
        float32: ("__float_as_uint", "__uint_as_float"),
        float64: ("(unsigned long long)__double_as_longlong", "__longlong_as_double"),
        uint64: ("", ""),
        int8: ("(unsigned char)", "(signed char)"),
        uint8: ("", ""),
        int16: ("(unsigned short)", "(short)"),
        uint16: ("", ""),
        float16: ("__half_as_ushort", "__ushort_as_half"),
    },
    cas_bits={4: "atomicCAS({p}, {0}, {1})", 8: "atomicCAS({p}, {0}, {1})"},
    address_int="size_t",
    fences={
        "block": "__threadfence_block();",
        "device": "__threadfence();",
        "system": "__threadfence_system();",
    },
    vector_types={float32: "float", int32: "int", uint32: "uint", float64: "double", int64: "longlong"},
    vload="*reinterpret_cast<const {V}*>({p})",
    vstore="*reinterpret_cast<{V}*>({p}) = make_{V}({values});",
    bits16_vector="uint{m}",
    bits16_lanes=("({v}.{c} & 0xffffu)", "({v}.{c} >> 16)"),
    bits16_words=True,
    bits16_value={
        float16: "__ushort_as_half((unsigned short){0})",
        bfloat16: "gk_bf16_load((unsigned short){0})",
        int16: "(short){0}",
        uint16: "(unsigned short){0}",
    },
    bits16_of={
        float16: "__half_as_ushort({0})",
        bfloat16: "gk_bf16_store({0})",
        int16: "(unsigned short)({0})",
        uint16: "({0})",
    },
    align="__align__({n}) ",
    launch_bounds="__launch_bounds__({args})",
    unroll_pragma="",  # nvcc unrolls loops of few constant iterations by itself (same PTX either way)
    tuple_value="{T}{{{items}}}",  # C++ aggregate initialisation
    print_lengths={"i": "ll", "u": "ll"},
    complex_make="make_{T}({0}, {1})",
    type_preamble={float16: "#include <cuda_fp16.h>"},
    casts=_CUDA_HALF_CASTS,
    literals={float16: "__float2half_rn({0})"},
    # each half operation rounded on its own, as NumPy's float16: nvcc would fuse a * b + c into one hfma
    operators={
        ("+", float16): "__hadd_rn({0}, {1})",
        ("-", float16): "__hsub_rn({0}, {1})",
        ("*", float16): "__hmul_rn({0}, {1})",
    },  # fmt: skip
    constant_bits={float16: "__half_raw{{{0}}}"},  # a constant expression (__half's constructor from it is)
    scalar_params={float16: ("float", "__float2half_rn({0})")},
    matrix={"wmma": _CUDA_WMMA, "tf32": cuda_tf32(_CUDA_LANE), wgmma_ops.LOWERING: cuda_wgmma(_CUDA_THREAD)},
    hopper=CUDA_HOPPER,
    element_loads={bfloat16: "gk_bf16_load({e})", **_FP8_LOADS},
    element_stores={bfloat16: "{e} = gk_bf16_store({v})", **_FP8_STORES},
    helper_defs={
        **{
            k: v.replace("uint_t", "unsigned int")
            for k, v in _bf16_helpers("unsigned short", "__float_as_uint", "__uint_as_float").items()
        },
        **_CUDA_BF16_STORE,
        **{
            k: v.replace("uint_t", "unsigned int")
            for k, v in _fp8_helpers("unsigned char", "__float_as_uint", "__uint_as_float", "rintf").items()
        },
        **_CUDA_WARP_HELPERS,
    },
    # wmma needs 32 bytes; wgmma's swizzled atoms 1024 ({align}: the emitter's choice)
    dynamic_shared_decl="extern __shared__ __align__({align}) unsigned char gk_dynamic_shared[];",
    layout_assert='static_assert({cond}, "the NumPy dtype\'s layout: {what}");',
    # cp.async through the pipeline primitives: sm_80 and later copy asynchronously, older GPUs copy at once
    async_copy="__pipeline_memcpy_async({d}, {s}, {n});",
    async_commit="__pipeline_commit();",
    async_wait="__pipeline_wait_prior({n});",
    async_preamble="#include <cuda_pipeline.h>",
    warp={
        **{f"shfl_{m}": f"__shfl{'' if m == 'idx' else '_' + m}_sync({{mask}}, {{0}}, {{1}}, {{2}})" for m in _SHFL},
        "all": "(__all_sync({mask}, {0}) != 0)",
        "any": "(__any_sync({mask}, {0}) != 0)",
        "uni": "gk_warp_uni({mask}, {0})",  # PTX's vote.sync.uni, which CUDA C does not name
        "ballot": "__ballot_sync({mask}, {0})",
        "activemask": "__activemask()",
        "syncwarp": "__syncwarp({mask})",
        "match_any": "__match_any_sync({mask}, {0})",
        "match_all": "gk_warp_match_all({mask}, {to}({0}))",  # its result, which says the predicate too
    },
    block_votes={
        "count": "{r} = __syncthreads_count({p});",
        "and": "{r} = __syncthreads_and({p}) != 0;",
        "or": "{r} = __syncthreads_or({p}) != 0;",
    },
)


OPENCL = Dialect(
    name="opencl",
    generated_file="kernel.cl",
    kernel_prefix="__kernel",
    func_prefix="",
    types={
        bool_: "bool",
        int32: "int",
        uint32: "uint",
        int64: "long",
        float32: "float",
        float64: "double",
        complex64: "float2",
        complex128: "double2",
        int8: "char",
        uint8: "uchar",
        int16: "short",
        uint16: "ushort",
        uint64: "ulong",
        float16: "float",  # a half in a float register, rounded to half after every operation (rounding)
    },
    unsigned_types={4: "uint", 8: "ulong", 1: "uchar", 2: "ushort"},
    # OpenCL forbids bool in kernel arguments and buffers; half needs cl_khr_fp16 but as ushort bits
    # read and written by vload_half/vstore_half (element_loads), which every device has
    storage_types={bool_: "uchar", float16: "ushort", bfloat16: "ushort", float8_e4m3fn: "uchar", float8_e5m2: "uchar"},
    global_ptr="__global {const}{T}* {restrict}{name}",
    restrict="restrict ",
    qualifiers={"shared": "__local ", "local": "", "constant": "__constant "},
    barrier="barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    phase_ids="const size_t gk_me = get_global_id(0) + get_global_size(0) * (get_global_id(1) "
    "+ get_global_size(1) * get_global_id(2));\n"
    "const size_t gk_group = get_group_id(0) + get_num_groups(0) * (get_group_id(1) "
    "+ get_num_groups(1) * get_group_id(2));\n"
    "const size_t gk_lid = get_local_id(0) + get_local_size(0) * (get_local_id(1) "
    "+ get_local_size(1) * get_local_id(2));\n"
    "const size_t gk_lsize = get_local_size(0) * get_local_size(1) * get_local_size(2);",
    specials={
        "thread_idx": "get_local_id({d})",
        "block_idx": "get_group_id({d})",
        "block_dim": "get_local_size({d})",
        "grid_dim": "get_num_groups({d})",
        "global_id": "get_global_id({d})",
        "lane_id": "((get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))"
        " & 31)",
    },
    int_suffix={int64: "L", uint32: "u", uint64: "UL"},
    float_specials={
        ("inf", float16): "INFINITY",
        ("nan", float16): "NAN",
        ("inf", float32): "INFINITY",
        ("nan", float32): "NAN",
        ("inf", float64): "(double)INFINITY",
        ("nan", float64): "(double)NAN",
    },
    hoisted_specials=frozenset({"block_dim", "grid_dim"}),
    constant_specials={  # PoCL's NAN is not a constant expression; clang's builtin is
        ("nan", float32): '__builtin_nanf("")',
        ("nan", float64): '__builtin_nan("")',
    },
    math={
        ("*", "*"): "{name}({args})",
        ("abs", "int32"): "(int)abs({0})",
        ("abs", "int64"): "(long)abs({0})",
        ("abs", "uint32"): "({0})",
        ("abs", "float32"): "fabs({0})",
        ("abs", "float64"): "fabs({0})",
        ("isnan", "*"): "(isnan({0}) != 0)",
        ("isinf", "*"): "(isinf({0}) != 0)",
        ("isfinite", "*"): "(isfinite({0}) != 0)",
        ("sincos", "*"): "*({1}) = sincos({0}, {2})",  # OpenCL's returns the sine, the cosine through a pointer
        ("popc", "*"): "(int)popcount({0})",
        ("clz", "*"): "(int)clz({0})",
        ("mul_rn", "*"): "(({0}) * ({1}))",  # unfused where the helper turns contraction off (no_contract)
        ("abs", "int8"): "(char)abs({0})",
        ("abs", "int16"): "(short)abs({0})",
        ("abs", "uint8"): "({0})",
        ("abs", "uint16"): "({0})",
        ("abs", "uint64"): "({0})",
    },
    native_atomics={
        **{("add", t): "atomic_add({p}, {0})" for t in _I},
        **{("sub", t): "atomic_sub({p}, {0})" for t in _I},
        **{("min", t): "atomic_min({p}, {0})" for t in _I},
        **{("max", t): "atomic_max({p}, {0})" for t in _I},
        **{("exch", t): "atomic_xchg({p}, {0})" for t in _I + ("float32",)},
        ("cas", "int32"): "atomic_cmpxchg({p}, {0}, {1})",
        ("cas", "uint32"): "atomic_cmpxchg({p}, {0}, {1})",
        **{(op, t): f"atomic_{op}({{p}}, {{0}})" for op in _BITWISE for t in _I},
        # inc/dec: OpenCL's atomic_inc/atomic_dec do not wrap at v; a CAS loop does
        # 64-bit: the cl_khr_int64_*_atomics functions (atomic_extensions)
        **{(op, "int64"): f"atom_{op}({{p}}, {{0}})" for op in ("add", "sub", "min", "max", *_BITWISE)},
        ("exch", "int64"): "atom_xchg({p}, {0})",
        ("cas", "int64"): "atom_cmpxchg({p}, {0}, {1})",
        **{(op, "uint64"): f"atom_{op}({{p}}, {{0}})" for op in ("add", "sub", "min", "max", *_BITWISE)},
        ("exch", "uint64"): "atom_xchg({p}, {0})",
        ("cas", "uint64"): "atom_cmpxchg({p}, {0}, {1})",
    },
    bits={
        int32: ("as_uint", "as_int"),
        uint32: ("", ""),
        int64: ("as_ulong", "as_long"),
        float32: ("as_uint", "as_float"),
        float64: ("as_ulong", "as_double"),
        uint64: ("", ""),
        int8: ("(uchar)", "as_char"),
        uint8: ("", ""),
        int16: ("(ushort)", "as_short"),
        uint16: ("", ""),
        float16: ("gk_half_bits", "gk_half_value"),  # a float rounded to half's bits; the bits' value
    },
    cas_bits={4: "atomic_cmpxchg({p}, {0}, {1})", 8: "atom_cmpxchg({p}, {0}, {1})"},
    address_int="uintptr_t",
    # OpenCL C has one fence for every scope: it orders this work-item's accesses to both spaces
    fences={s: "mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);" for s in ("block", "device", "system")},
    atomic_extensions={
        **{(op, 8): "cl_khr_int64_base_atomics" for op in ("add", "sub", "exch", "cas", "inc", "dec")},
        **{(op, 8): "cl_khr_int64_extended_atomics" for op in ("min", "max", *_BITWISE)},
    },
    extension_pragma="#pragma OPENCL EXTENSION {name} : enable",
    vector_types={float32: "float", int32: "int", uint32: "uint", float64: "double", int64: "long"},
    unroll_pragma="#pragma unroll",  # as hand-written OpenCL does; PoCL does not unroll such loops itself
    vload="vload{n}(0, {p})",
    vstore="vstore{n}(({V})({values}), 0, {p});",
    bits16_vector="ushort{n}",
    bits16_lanes=("{v}.s{k}", "{v}.s{k}"),
    bits16_pointer="({c}{q}ushort*){p}",
    bits16_value={float16: "gk_half_value({0})", bfloat16: "gk_bf16_load({0})", int16: "(short){0}", uint16: "{0}"},
    bits16_of={float16: "gk_half_bits({0})", bfloat16: "gk_bf16_store({0})", int16: "(ushort)({0})", uint16: "({0})"},
    fp64_preamble=("#pragma OPENCL EXTENSION cl_khr_fp64 : enable",),
    pointer_spaces={"global": "__global ", "shared": "__local ", "local": "", "constant": "__constant "},
    tuple_value="({T}){{{items}}}",  # a C99 compound literal
    # OpenCL's long is 64 bits; PoCL's printf reads a double as a float unless told 'l' (%.17lg)
    print_lengths={"i": "l", "u": "l", "f": "l"},
    complex_make="(({T})({0}, {1}))",
    no_contract="#pragma OPENCL FP_CONTRACT OFF",
    casts={("*", "float16"): "gk_half((float)({0}))", ("float64", "float16"): "gk_half_d({0})"},
    rounding={float16: "gk_half({0})"},
    element_loads={float16: "vload_half(0, (const {q}half*)&{e})", bfloat16: "gk_bf16_load({e})", **_FP8_LOADS},
    element_stores={float16: "{e} = gk_half_bits({v})", bfloat16: "{e} = gk_bf16_store({v})", **_FP8_STORES},
    scalar_params={float16: ("float", "{0}")},
    helper_defs={
        # a float rounded to the nearest half (ties to even), through vstore_half, which every device has
        "gk_half": "float gk_half(float x)\n{\n    ushort h;\n    vstore_half(x, 0, (half*)&h);\n"
        "    return vload_half(0, (half*)&h);\n}",
        "gk_half_d": "float gk_half_d(double x)\n{\n    ushort h;\n    vstore_half(x, 0, (half*)&h);\n"
        "    return vload_half(0, (half*)&h);\n}",
        # a float's half bits (rounded to nearest even); a NaN keeps its sign and payload, which
        # vload_half put in the float's top mantissa bits (vstore_half makes every NaN 0x7fff on
        # PoCL), as a copy of a CUDA __half keeps a NaN's bits: atomic_cas compares bit patterns
        "gk_half_bits": "ushort gk_half_bits(float x)\n{\n    ushort h;\n    if (isnan(x)) {\n"
        "        uint m = (as_uint(x) >> 13) & 0x3ffu;\n"
        "        return (ushort)(((as_uint(x) >> 16) & 0x8000u) | 0x7c00u | (m ? m : 0x200u));\n    }\n"
        "    vstore_half(x, 0, (half*)&h);\n    return h;\n}",
        "gk_half_value": "float gk_half_value(ushort h)\n{\n    return vload_half(0, (half*)&h);\n}",
        **{k: v.replace("uint_t", "uint") for k, v in _bf16_helpers("ushort", "as_uint", "as_float").items()},
        **{k: v.replace("uint_t", "uint") for k, v in _fp8_helpers("uchar", "as_uint", "as_float", "rint").items()},
        # a block-wide vote: the first barrier is the vote's own (memory ordered as barrier()'s), after
        # which every work-item has read the last vote's count, so it can be cleared; the second orders
        # the clearing before the additions, the third the additions before the reads
        "gk_block_count": "int gk_block_count(volatile __local int* count, bool p)\n{\n"
        "    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
        "    if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) *count = 0;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    if (p) atomic_inc(count);\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    return *count;\n}",
    },
    dynamic_shared_param="__local uchar* gk_dynamic_shared",  # sized by the launch (clSetKernelArg, NULL)
    # warp intrinsics: emulated through local memory with work-group barriers (_OPENCL_WARP)
    warp={
        **{
            f"shfl_{m}": f"{{from}}(({{U}})gk_warp_shfl_{m}({_WARP_ARGS}, (ulong){{to}}({{0}}), {{1}}, {{2}}))"
            for m in _SHFL
        },
        "all": f"gk_warp_all({_WARP_ARGS}, {{mask}}, {{0}}, {{live}})",
        "any": f"gk_warp_any({_WARP_ARGS}, {{mask}}, {{0}}, {{live}})",
        "uni": f"gk_warp_uni({_WARP_ARGS}, {{mask}}, {{0}}, {{live}})",
        "ballot": f"gk_warp_ballot({_WARP_ARGS}, {{mask}}, {{0}}, {{live}})",
        "activemask": "{live}",
        "syncwarp": "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)",
        "match_any": f"gk_warp_match({_WARP_ARGS}, {{mask}}, (ulong){{to}}({{0}}), {{live}})",
        "match_all": f"gk_warp_match_all({_WARP_ARGS}, {{mask}}, (ulong){{to}}({{0}}), {{live}})",
    },
    warp_live="gk_warp_live()",
    warp_active=f"gk_warp_active({_WARP_ARGS}, {{0}})",
    # block-wide votes: every work-item adds its predicate to a __local count between barriers
    block_votes={
        "count": "{r} = gk_block_count(&gk_block_vote, {p});",
        "and": "{r} = gk_block_count(&gk_block_vote, !({p})) == 0;",
        "or": "{r} = gk_block_count(&gk_block_vote, {p}) != 0;",
    },
    block_vote_scratch="__local int gk_block_vote;  // the block-wide votes' count",
    warp_helpers=_OPENCL_WARP,
    warp_scratch="__local ulong gk_warp[2][{n}];  // the warp intrinsics' exchange, one slot per work-item\n"
    "    uint gk_warp_turn = 0u;  // which of the two the next warp intrinsic uses",
    warp_group_max=1024,
    hopper_missing="NVIDIA sm_90's PTX (mbarriers, the Tensor Memory Accelerator, named barriers, elect, "
    "setmaxnreg), which OpenCL C does not reach",
    matrix_missing="a matrix multiply-accumulate unit, which OpenCL C reaches only through vendor extensions "
    "(cl_intel_subgroup_matrix_multiply_accumulate, cl_khr_cooperative_matrix) that gpukern does not target",
    warp_emulation="sub-groups of 32 work-items (gpukern's OpenCL C emulates warps with work-group barriers "
    "instead of cl_khr_subgroups)",
)


_HIP_PREFIX = "static __device__ inline "


def _hip_shuffle(mode: str) -> str:
    """A shuffle of gpukern's 32-lane warp on AMD: the source lane by ``semantics.warp``'s rule, read
    with ds_bpermute from the same 32 lanes of the wavefront (a whole wave32, half of a wave64)."""
    rule = SHUFFLES[f"shfl_{mode}"].c.format(lane="lane", b="b", w="w")
    return (
        f"template <typename U> {_HIP_PREFIX}U gk_warp_shfl_{mode}(U v, unsigned int b, unsigned int w)\n{{\n"
        f"    unsigned int lane = __lane_id() & 31u;\n"
        f"    return gk_warp_read(v, (__lane_id() & ~31u) + ({rule}));\n}}"
    )


# gpukern's warp is 32 lanes on every backend.  An AMD wavefront is 32 lanes (RDNA's wave32) or 64
# (CDNA's wave64): there a warp is half a wavefront, lanes 0-31 or 32-63, and each op reads or votes
# among its own half (the 64-bit ballot shifted to that half; shuffles through ds_bpermute).
_HIP_WARP_HELPERS = "\n\n".join(
    [
        _HIP_PREFIX
        + """unsigned int gk_warp_read(unsigned int v, unsigned int lane)
{
    return (unsigned int)__builtin_amdgcn_ds_bpermute((int)(lane << 2), (int)v);
}""",
        _HIP_PREFIX
        + """unsigned long long gk_warp_read(unsigned long long v, unsigned int lane)
{
    unsigned int lo = gk_warp_read((unsigned int)v, lane), hi = gk_warp_read((unsigned int)(v >> 32), lane);
    return ((unsigned long long)hi << 32) | lo;
}""",
        _HIP_PREFIX
        + """unsigned char gk_warp_read(unsigned char v, unsigned int lane)
{
    return (unsigned char)gk_warp_read((unsigned int)v, lane);
}""",
        _HIP_PREFIX
        + """unsigned short gk_warp_read(unsigned short v, unsigned int lane)
{
    return (unsigned short)gk_warp_read((unsigned int)v, lane);
}""",
        *(_hip_shuffle(m) for m in _SHFL),
        _HIP_PREFIX
        + """unsigned int gk_warp_ballot(unsigned int mask, bool p)
{
    return (unsigned int)(__ballot(p) >> (__lane_id() & 32u)) & mask;
}""",
        _HIP_PREFIX
        + """unsigned int gk_warp_activemask(void)
{
    return (unsigned int)(__ballot(1) >> (__lane_id() & 32u));
}""",
        f"template <typename U> {_HIP_PREFIX}"
        + """unsigned int gk_warp_match_any(unsigned int mask, U v)
{
    unsigned int r = 0u;
    for (unsigned int k = 0u; k < 32u; k++) {
        if (gk_warp_read(v, (__lane_id() & ~31u) + k) == v) r |= 1u << k;
    }
    return r & mask;
}""",
        f"template <typename U> {_HIP_PREFIX}"
        + """unsigned int gk_warp_match_all(unsigned int mask, U v)
{
    unsigned int r = gk_warp_match_any(mask, v);
    return r == mask ? r : 0u;
}""",
    ]
)

# HIP C++ (hipcc, HIP-Clang) for AMD GPUs: CUDA's spellings where HIP has them, else these
HIP = replace(
    CUDA,
    name="hip",
    generated_file="kernel.hip",
    preamble=("#include <hip/hip_runtime.h>",),
    # HIP's second number is the fewest waves per execution unit, not blocks per multiprocessor
    launch_bounds="__launch_bounds__({threads})",
    type_preamble={float16: "#include <hip/hip_fp16.h>"},
    casts={**_CUDA_HALF_CASTS, ("float64", "float16"): "__half((_Float16)({0}))"},  # rounded once, as NumPy
    operators={
        ("+", float16): "__hadd({0}, {1})",
        ("-", float16): "__hsub({0}, {1})",
        ("*", float16): "__hmul({0}, {1})",
    },  # fmt: skip
    # no long long min/max atomics in HIP: those take the compare-and-swap loop
    native_atomics={k: v for k, v in CUDA.native_atomics.items() if k not in (("min", "int64"), ("max", "int64"))},
    vector_types={float32: "float", int32: "int", uint32: "uint", float64: "double"},
    # HIP's vector types construct from their components or from one of their own (a vector copy)
    vstore="*reinterpret_cast<{V}*>({p}) = {V}({values});",
    # the asynchronous copies are plain ones (HIP has no cp.async)
    async_copy="",
    async_commit="",
    async_wait="",
    async_preamble="",
    hopper={},
    hopper_missing="NVIDIA sm_90's PTX (mbarriers, the Tensor Memory Accelerator, named barriers, elect, "
    "setmaxnreg), which AMD GPUs do not have",
    matrix={},
    matrix_missing="a matrix unit gpukern targets: AMD's MFMA/WMMA instructions (rocWMMA) are not written by "
    "gpukern's HIP dialect yet; use the CUDA backend for tensor cores",
    specials={**CUDA.specials, "lane_id": "(__lane_id() & 31u)"},
    warp={
        **{f"shfl_{m}": f"{{from}}(gk_warp_shfl_{m}(({{U}}){{to}}({{0}}), {{1}}, {{2}}))" for m in _SHFL},
        "all": "(gk_warp_ballot({mask}, {0}) == ({mask}))",
        "any": "(gk_warp_ballot({mask}, {0}) != 0u)",
        "uni": "(gk_warp_ballot({mask}, {0}) == 0u || gk_warp_ballot({mask}, {0}) == ({mask}))",
        "ballot": "gk_warp_ballot({mask}, {0})",
        "activemask": "gk_warp_activemask()",
        "syncwarp": "__builtin_amdgcn_fence(__ATOMIC_SEQ_CST, \"wavefront\"); __builtin_amdgcn_wave_barrier()",
        "match_any": "gk_warp_match_any({mask}, ({U}){to}({0}))",
        "match_all": "gk_warp_match_all({mask}, ({U}){to}({0}))",
    },
    warp_helpers=_HIP_WARP_HELPERS,
    # hip_fp16's __half has no constexpr constructor (no __constant__ table of them) and its
    # __half_raw{bits} converts the number: a half is kept as its bits, as bfloat16 is everywhere
    storage_types={
        bfloat16: "unsigned short",
        float16: "unsigned short",
        float8_e4m3fn: "unsigned char",
        float8_e5m2: "unsigned char",
    },
    element_loads={**CUDA.element_loads, float16: "__ushort_as_half({e})"},
    element_stores={**CUDA.element_stores, float16: "{e} = __half_as_ushort({v})"},
    constant_bits={},
    # the block votes through a __shared__ count (hipcc 5.2's __syncthreads_and/or/count use a wavefront
    # shift that gfx10's wave32 lacks): barrier, clear, barrier, count, barrier, read
    block_votes={
        "count": "{r} = gk_block_count({p});",
        "and": "{r} = gk_block_count(!({p})) == 0;",
        "or": "{r} = gk_block_count({p}) != 0;",
    },
    helper_defs={
        **{k: v for k, v in CUDA.helper_defs.items() if not k.startswith("gk_warp")},
        "gk_block_count": "int gk_block_count(bool p)\n{\n    __shared__ int count;\n    __syncthreads();\n"
        "    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) count = 0;\n    __syncthreads();\n"
        "    if (p) atomicAdd(&count, 1);\n    __syncthreads();\n    return count;\n}",
    },
)


DIALECTS: dict[str, Dialect] = {d.name: d for d in (CUDA, OPENCL, HIP)}


def dialect(name: str) -> Dialect:
    """The C dialect called ``name`` ('cuda', 'opencl' or 'hip')."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise BackendError(f"no C dialect named {name!r}; choose {' or '.join(map(repr, DIALECTS))}") from None
