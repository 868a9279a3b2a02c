"""C identifiers for Python names.

A user's name becomes the C name unless C, C++, CUDA or OpenCL C keep the word for themselves
(a keyword, a header's macro, a built-in function); ``c_identifier`` then adds a ``_``.  The
emitter names variables, functions, tables and record members with it, and the backends name
the kernel they look up with it, so it stands apart from both.  A name at file scope (a kernel,
a device function, a table) must also miss every function the CUDA headers declare with C
linkage (``div``, ``clock``, ``index``): ``global_identifier`` checks those too.
"""

from __future__ import annotations

import re

from .c_library import C_LIBRARY

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


# The C library's math functions for more float types than the list's C library declared
# (glibc adds acosf128, strfromf128, f32addf64x... with a version): a name of one of these
# suffixes whose stem, or stem with f, l or d, the list has, and the narrowing operations.
_FLOAT_SUFFIX = re.compile(r"^(.+?)(f(16|32|64|128)x?)(_[rl])?$")  # (lgammaf128_r, strtof128_l)
_NARROWING = re.compile(r"^(f(16|32|64|128)x?|[fd])(add|sub|mul|div|fma|sqrt)(f(16|32|64|128)x?|[ld])?$")


def in_c_library(name: str) -> bool:
    """Whether the C library may declare ``name`` with C linkage (``c_library``'s list, and the
    variants for other float types a different C library adds)."""
    if name in C_LIBRARY or _NARROWING.match(name):
        return True
    m = _FLOAT_SUFFIX.match(name)
    tail = m.group(4) or "" if m is not None else ""
    return m is not None and any(m.group(1) + end + tail in C_LIBRARY for end in ("", "f", "l", "d"))


def global_identifier(name: str) -> str:
    """A Python name as a C identifier at file scope: ``c_identifier``, and clear of the C library."""
    cname = c_identifier(name)
    return cname + "_" if in_c_library(cname) else cname
