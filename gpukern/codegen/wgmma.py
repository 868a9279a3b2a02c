"""Warpgroup accumulators and ``wgmma`` in CUDA C (sm_90a's ``wgmma.mma_async``).

``gpukern.semantics.wgmma`` says what these mean: the accumulator's register layout (``gk_wg_store`` is
it), the operands' shared-memory layout (the descriptors here describe it: 128-byte swizzle, A's
rows 128 bytes apart and atoms 1024, B's two offsets ``semantics.wgmma.b_strides``, the helpers'
arguments).  The table (``cuda_wgmma``) has the keys of ``dialects._CUDA_WMMA`` that apply
(fragment, fill, store) and 'mma_async' ({name} {d} {a} {b} {lbo} {sbo} {acc}: 1 to add to the
accumulator, 0 to set it: PTX's scale-d), 'fence', 'commit', 'wait' ({n});
``mma_helper`` writes the per-shape function.
"""

from __future__ import annotations

from ..semantics import wgmma as wgmma_ops

_HELPERS = r"""// gpukern's warpgroup accumulators (gpukern/semantics/wgmma.py): warp w of the 4 holds
// rows 16w..16w + 15 of the 64; lane (g, t) = (lane / 4, lane % 4) holds x[4j + 2h + e] = (16w + g + 8h, 8j + 2t + e)
template <int N> struct gk_wg_acc { float x[N / 2]; };
__device__ __forceinline__ unsigned gk_wg_thread() { return @THREAD@; }
template <int N> __device__ __forceinline__ void gk_wg_fill(gk_wg_acc<N>& f, float v) {
    for (int i = 0; i < N / 2; i++) f.x[i] = v;
}
template <int N> __device__ __forceinline__ void gk_wg_store(float* p, const gk_wg_acc<N>& f, int ldm) {
    int w = (gk_wg_thread() / 32) % 4, g = (gk_wg_thread() % 32) / 4, t = gk_wg_thread() % 4;
    for (int j = 0; j < N / 8; j++)
        for (int h = 0; h < 2; h++)  // (indexed as float2s: then nvcc knows them aligned)
            ((float2*)p)[(16 * w + g + 8 * h) * (ldm >> 1) + 4 * j + t] =
                make_float2(f.x[4 * j + 2 * h], f.x[4 * j + 2 * h + 1]);
}
// a shared-memory matrix descriptor: 128-byte swizzle, byte offsets between atoms (LBO, SBO)
__device__ __forceinline__ unsigned long long gk_wg_desc(const void* p, unsigned lbo, unsigned sbo) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((a & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16)
         | ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
// shared memory written through the generic proxy made visible to the matrix units' (async) proxy
__device__ __forceinline__ void gk_wg_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// before a run of wgmma's: that, and the accumulators' registers ordered
__device__ __forceinline__ void gk_wg_fence() {
    gk_wg_proxy_fence();
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void gk_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void gk_wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}"""

# a warpgroup accumulator stored into 16-bit elements (``store_matrix(..., scale=)`` of a
# bfloat16 or float16 array): each pair of neighbouring values times the scale, rounded to nearest
# even (cuda_bf16.h's and cuda_fp16.h's conversions: ``types.bfloat16``'s, NumPy's half), one 32-bit store
_NARROW_STORE = r"""template <int N>
__device__ __forceinline__ void gk_wg_store_@T@(unsigned short* p, const gk_wg_acc<N>& f, int ldm, float s) {
    int w = (gk_wg_thread() / 32) % 4, g = (gk_wg_thread() % 32) / 4, t = gk_wg_thread() % 4;
    for (int j = 0; j < N / 8; j++)
        for (int h = 0; h < 2; h++) {
            @PAIR@ v = @MAKE@(f.x[4 * j + 2 * h] * s, f.x[4 * j + 2 * h + 1] * s);
            *(unsigned int*)(p + (16 * w + g + 8 * h) * ldm + 8 * j + 2 * t) = *(unsigned int*)&v;
        }
}"""
_SCALED_STORE = r"""template <int N>
__device__ __forceinline__ void gk_wg_store_scaled(float* p, const gk_wg_acc<N>& f, int ldm, float s) {
    int w = (gk_wg_thread() / 32) % 4, g = (gk_wg_thread() % 32) / 4, t = gk_wg_thread() % 4;
    for (int j = 0; j < N / 8; j++)
        for (int h = 0; h < 2; h++)
            ((float2*)p)[(16 * w + g + 8 * h) * (ldm >> 1) + 4 * j + t] =
                make_float2(f.x[4 * j + 2 * h] * s, f.x[4 * j + 2 * h + 1] * s);
}"""
NARROW = {
    "bfloat16": ("#include <cuda_bf16.h>", "__nv_bfloat162", "__floats2bfloat162_rn"),
    "float16": ("#include <cuda_fp16.h>", "__half2", "__floats2half2_rn"),
}

_PTX_TYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "tf32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def cuda_wgmma(thread: str) -> dict[str, str]:
    """The table, its helpers reading a thread's index in the block as the dialect spells it."""
    narrow = {
        f"store_preamble:{name}": f"{header}\n"
        + _NARROW_STORE.replace("@T@", name).replace("@PAIR@", pair).replace("@MAKE@", make)
        for name, (header, pair, make) in NARROW.items()
    }
    return {**_TABLE, **narrow, "preamble": _HELPERS.replace("@THREAD@", thread)}


_TABLE = {
    "fragment": "gk_wg_acc<{n}> {name};",
    "use:accumulator": "acc",
    "fill": "gk_wg_fill({f}, {v});",
    "element": "{f}.x[{i}]",  # acc[i]: the thread's element i (gk_wg_acc's layout)
    "value:float32": "{0}",
    "store": "gk_wg_store({p}, {f}, {ldm});",
    "store:scaled": "gk_wg_store_scaled({p}, {f}, {ldm}, {scale});",
    "pointer:float16": "(unsigned short*)",  # (a 16-bit C's bits: CUDA keeps float16 elements as __half)
    "store:bfloat16": "gk_wg_store_bfloat16({p}, {f}, {ldm}, {scale});",
    "store:float16": "gk_wg_store_float16({p}, {f}, {ldm}, {scale});",
    "store_preamble:scaled": _SCALED_STORE,
    "mma_async": "{name}({d}, {a}, {b}, {lbo}, {sbo}, {acc});",
    "fence": "gk_wg_fence();",
    "commit": "gk_wg_commit();",
    "wait": "gk_wg_wait<{n}>();",
}


def helper_name(elem: str, n: int, row_major_b: bool) -> str:
    """The C function of one wgmma shape and operand layout."""
    return f"gk_wgmma_{_PTX_TYPES[elem]}_n{n}{'_t' if row_major_b else ''}"


def mma_helper(elem: str, n: int, row_major_b: bool) -> str:
    """The C function issuing one ``wgmma.mma_async`` of 64 x ``n`` x k on ``elem`` operands, A K-major
    and B row-major (``row_major_b``: its atoms' rows along n) or K-major, B's descriptor's offsets
    ``lbo`` and ``sbo`` the caller's (``semantics.wgmma.b_strides``).  The accumulator's n / 2
    registers are its operands ("+f": read and written)."""
    k = wgmma_ops.K[elem]
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    ops = ", ".join(f'"+f"(d.x[{i}])' for i in range(regs))
    ptx = _PTX_TYPES[elem]
    # scales (, transposes: 16-bit inputs only); scale-d, the predicate p, first
    tail = "1, 1" if elem in wgmma_ops.K_MAJOR_ONLY else f"1, 1, 0, {int(row_major_b)}"
    name = helper_name(elem, n, row_major_b)
    return (
        f"__device__ __forceinline__ void {name}(gk_wg_acc<{n}>& d, const void* a, const void* b, unsigned lbo, "
        "unsigned sbo, int acc) {\n"
        "    unsigned long long da = gk_wg_desc(a, 16, 1024), db = gk_wg_desc(b, lbo, sbo);\n"
        f'    asm volatile("{{\\n .reg .pred p;\\n setp.ne.b32 p, %{regs + 2}, 0;\\n"\n'
        f'                 "wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ptx}.{ptx} {{{d}}}, %{regs}, %{regs + 1}, '
        f'p, {tail};\\n}}\\n"\n'
        f"                 : {ops}\n"
        f'                 : "l"(da), "l"(db), "r"(acc));\n'
        "}"
    )


def regs_helper_name(elem: str, n: int, row_major_b: bool) -> str:
    """The C function of one wgmma shape with A from registers."""
    return f"gk_wgmma_rs_{_PTX_TYPES[elem]}_n{n}{'_t' if row_major_b else ''}"


def regs_helper(elem: str, n: int, row_major_b: bool) -> str:
    """The C function issuing one ``wgmma.mma_async`` of 64 x ``n`` x 16 whose A is in registers:
    eight floats of an accumulator (a thread's x[8 s] .. x[8 s + 7]: rows g and g + 8, columns
    16 s + 2 t (+1) and 16 s + 8 + 2 t (+1), the A fragment's layout), rounded to ``elem`` in pairs."""
    regs = n // 2
    d = ", ".join(f"%{i}" for i in range(regs))
    ops = ", ".join(f'"+f"(d.x[{i}])' for i in range(regs))
    ptx = _PTX_TYPES[elem]
    _, pair, make = NARROW[elem]
    name = regs_helper_name(elem, n, row_major_b)
    a = ", ".join(f"%{regs + r}" for r in range(4))
    packs = "".join(
        f"    {pair} p{r} = {make}(x{2 * r}, x{2 * r + 1});\n" for r in range(4)
    )  # (the lower column in the low half)
    words = ", ".join(f'"r"(*(unsigned*)&p{r})' for r in range(4))
    floats = ", ".join(f"float x{i}" for i in range(8))
    return (
        f"__device__ __forceinline__ void {name}(gk_wg_acc<{n}>& d, {floats}, const void* b, unsigned lbo, "
        "unsigned sbo, int acc) {\n"
        f"{packs}"
        "    unsigned long long db = gk_wg_desc(b, lbo, sbo);\n"
        f'    asm volatile("{{\\n .reg .pred p;\\n setp.ne.b32 p, %{regs + 5}, 0;\\n"\n'
        f'                 "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx}.{ptx} {{{d}}}, {{{a}}}, %{regs + 4}, '
        f'p, 1, 1, {int(row_major_b)};\\n}}\\n"\n'
        f"                 : {ops}\n"
        f'                 : {words}, "l"(db), "r"(acc));\n'
        "}"
    )
