"""TF32 fragments in CUDA C: gpukern's own code for them, where wmma's would starve the tensor cores.

``semantics.mma.lowering`` says which fragments come here (TF32's 16 x 16 x 8 tiles, accumulators
included) and why; ``semantics.mma.tf32_lanes`` is the register layout this C implements, and
``semantics.mma.moves`` the memory instructions it issues, which the simulator and the profiler follow.
The table (``cuda_tf32``) has the keys of ``dialects._CUDA_WMMA`` that TF32's one element type and
its own fragment structs use (no ``type:``, ``layout:``, ``pointer:`` ones; ``value:tf32``), and
``load_ldmatrix``.
"""

from __future__ import annotations

_TF32_HELPERS = r"""// gpukern's TF32 fragments (16 x 16 x 8; gpukern/semantics/mma.py, tf32_lanes):
// lane (g, t) = (lane / 4, lane % 4) holds of a x[i] = (g + 8 (i % 2), t + 4 (i / 2)); of b
// x[2h + j] = (t + 4j, 2g + h); of the accumulator x[4h + 2i + e] = (g + 8i, 4t + 2e + h):
// mma.m16n8k8 on half h takes b's x[2h], x[2h + 1] and the accumulator's x[4h..4h + 3],
// its column c being the tile's column 2c + h
struct gk_tf32_a { unsigned x[4]; };
struct gk_tf32_b { unsigned x[4]; };
struct gk_tf32_acc { float x[8]; };
__device__ __forceinline__ unsigned gk_lane() { return @LANE@; }
__device__ __forceinline__ unsigned gk_tf32(float v) {  // to nearest, ties away (cvt.rna), as the simulator
    unsigned r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v)); return r;
}
// a tile stored row by row (col: column by column), rows ldm apart
__device__ __forceinline__ void gk_tf32_load(gk_tf32_a& f, const float* p, int ldm, bool col) {
    int g = gk_lane() / 4, t = gk_lane() % 4;
    for (int i = 0; i < 4; i++) {
        int r = g + 8 * (i % 2), c = t + 4 * (i / 2);
        f.x[i] = gk_tf32(col ? p[c * ldm + r] : p[r * ldm + c]);
    }
}
__device__ __forceinline__ void gk_tf32_load(gk_tf32_b& f, const float* p, int ldm, bool col) {
    int g = gk_lane() / 4, t = gk_lane() % 4;
    for (int j = 0; j < 2; j++) {
        if (col) {
            f.x[j] = gk_tf32(p[2 * g * ldm + t + 4 * j]);
            f.x[2 + j] = gk_tf32(p[(2 * g + 1) * ldm + t + 4 * j]);
        } else {  // columns 2g and 2g + 1 side by side (indexed as float2s: then nvcc knows them aligned)
            float2 v = ((const float2*)p)[(t + 4 * j) * (ldm >> 1) + g];
            f.x[j] = gk_tf32(v.x);
            f.x[2 + j] = gk_tf32(v.y);
        }
    }
}
// a tile in shared memory whose rows run along k, one ldmatrix of four 8 x 4 blocks: lane l gives the
// address of row l % 8 of block l / 8 and gets element (l / 4, l % 4) of each block, x[i] of block i
__device__ __forceinline__ void gk_tf32_ldmatrix(unsigned* x, const float* row) {
    unsigned s = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "r"(s));
    for (int i = 0; i < 4; i++) x[i] = gk_tf32(__uint_as_float(x[i]));
}
__device__ __forceinline__ void gk_tf32_ldmatrix(gk_tf32_a& f, const float* p, int ldm) {  // row by row
    int l = gk_lane(), i = l / 8;
    gk_tf32_ldmatrix(f.x, p + (l % 8 + 8 * (i % 2)) * ldm + 4 * (i / 2));
}
__device__ __forceinline__ void gk_tf32_ldmatrix(gk_tf32_b& f, const float* p, int ldm) {  // column by column
    int l = gk_lane(), i = l / 8;  // block 2h + j: the tile's columns 2g + h, k from 4j
    gk_tf32_ldmatrix(f.x, p + (2 * (l % 8) + i / 2) * ldm + 4 * (i % 2));
}
__device__ __forceinline__ void gk_tf32_load(gk_tf32_acc& f, const float* p, int ldm) {  // row by row
    int g = gk_lane() / 4, t = gk_lane() % 4;
    for (int i = 0; i < 2; i++) {  // columns 4t..4t + 3 side by side (as float4s: nvcc knows them aligned)
        float4 v = ((const float4*)p)[(g + 8 * i) * (ldm >> 2) + t];
        f.x[2 * i] = v.x; f.x[4 + 2 * i] = v.y; f.x[2 * i + 1] = v.z; f.x[5 + 2 * i] = v.w;
    }
}
__device__ __forceinline__ void gk_tf32_store(float* p, const gk_tf32_acc& f, int ldm) {  // row by row
    int g = gk_lane() / 4, t = gk_lane() % 4;
    for (int i = 0; i < 2; i++)
        ((float4*)p)[(g + 8 * i) * (ldm >> 2) + t] =
            make_float4(f.x[2 * i], f.x[4 + 2 * i], f.x[2 * i + 1], f.x[5 + 2 * i]);
}
__device__ __forceinline__ void gk_tf32_fill(gk_tf32_a& f, float v) { for (int i = 0; i < 4; i++) f.x[i] = gk_tf32(v); }
__device__ __forceinline__ void gk_tf32_fill(gk_tf32_b& f, float v) { for (int i = 0; i < 4; i++) f.x[i] = gk_tf32(v); }
__device__ __forceinline__ void gk_tf32_fill(gk_tf32_acc& f, float v) { for (int i = 0; i < 8; i++) f.x[i] = v; }
__device__ __forceinline__ void gk_tf32_mma(gk_tf32_acc& d, const gk_tf32_a& a, const gk_tf32_b& b,
                                            const gk_tf32_acc& c) {
    for (int h = 0; h < 2; h++)
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%10, %11, %12, %13};"
            : "=f"(d.x[4 * h]), "=f"(d.x[4 * h + 1]), "=f"(d.x[4 * h + 2]), "=f"(d.x[4 * h + 3])
            : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[2 * h]), "r"(b.x[2 * h + 1]),
              "f"(c.x[4 * h]), "f"(c.x[4 * h + 1]), "f"(c.x[4 * h + 2]), "f"(c.x[4 * h + 3]));
}"""


def cuda_tf32(lane: str) -> dict[str, str]:
    """The table, its helpers reading a thread's lane as the dialect spells ``lane_id`` (``lane``)."""
    return {**_TABLE, "preamble": _TF32_HELPERS.replace("@LANE@", lane)}


_TABLE = {
    "fragment": "gk_tf32_{use} {name};",
    "use:a": "a",
    "use:b": "b",
    "use:accumulator": "acc",
    "load": "gk_tf32_load({f}, {p}, {ldm}, {col});",
    "load_ldmatrix": "gk_tf32_ldmatrix({f}, {p}, {ldm});",
    "load_accumulator": "gk_tf32_load({f}, {p}, {ldm});",
    "fill": "gk_tf32_fill({f}, {v});",
    "value:tf32": "{0}",  # (the helper rounds)
    "value:float32": "{0}",
    "store": "gk_tf32_store({p}, {f}, {ldm});",
    "mma": "gk_tf32_mma({d}, {a}, {b}, {c});",
}
