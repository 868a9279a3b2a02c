"""mbarriers, TMA copies and warp specialization in CUDA C: sm_90's PTX, inline
(``semantics.mbarrier``, ``semantics.tma``, ``semantics.specialization``).

The table (the dialect's ``hopper``) has one format per ``ir.Mbarrier`` op ('{b}': the barrier's
address, '{0}': its operand), 'tma_load' ('{rank}', '{d}' the destination's address, '{map}' the
descriptor parameter, '{coords}' the coordinates innermost first, '{b}'), the two fences, the
descriptor parameter's declaration ('map_param': '{name}'), the C type of an mbarrier, and warp
specialization's 'named_sync' / 'named_arrive' ('{id}', '{count}'), 'elect', 'setmaxnreg_inc' /
'setmaxnreg_dec' ('{n}'), and clusters' 'cluster_dims' ('{x}', '{y}', '{z}'), 'rank', 'size',
'cluster_sync' and 'peer' (the element '{e}' in block '{rank}'), 'store_async' ('{d}', '{rank}', '{b}', '{values}')
and the waits of a kernel that has one ('wait_cluster', 'try_wait_cluster': acquiring at cluster scope, as what
another block's store_async completes needs); the preamble defines the helpers.  A descriptor is the
driver's 128-byte ``CUtensorMap``, passed by value as a ``__grid_constant__`` parameter (so its
address is a constant-bank one, as ``cp.async.bulk.tensor`` wants) and built at launch by
``cuTensorMapEncodeTiled`` (``backends.cuda_driver.tensor_map``).
"""

from __future__ import annotations

_HELPERS = r"""// gpukern's mbarriers and TMA copies (gpukern/semantics/mbarrier.py, tma.py): sm_90 PTX
struct __align__(64) gk_tensor_map { unsigned long long bits[16]; };  // the driver's CUtensorMap
__device__ __forceinline__ unsigned gk_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void gk_mbar_init(unsigned long long* b, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(gk_smem(b)), "r"(count) : "memory");
}
__device__ __forceinline__ unsigned long long gk_mbar_arrive(unsigned long long* b) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];\n" : "=l"(state) : "r"(gk_smem(b)) : "memory");
    return state;
}
__device__ __forceinline__ unsigned long long gk_mbar_arrive_tx(unsigned long long* b, unsigned bytes) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
                 : "=l"(state) : "r"(gk_smem(b)), "r"(bytes) : "memory");
    return state;
}
__device__ __forceinline__ void gk_mbar_expect_tx(unsigned long long* b, unsigned bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n"
                 :: "r"(gk_smem(b)), "r"(bytes) : "memory");
}
// a wait's two forms: the CTA's acquire, and (_cluster) the cluster's, which what another block's
// store_async completed needs
#define GK_MBAR_WAITS(suffix, sem)                                                                        \
    __device__ __forceinline__ bool gk_mbar_try_wait##suffix(unsigned long long* b, unsigned parity) {    \
        unsigned done;                                                                                    \
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity" sem ".shared::cta.b64 p, [%1], %2;\n" \
                     " selp.u32 %0, 1, 0, p;\n}\n"                                                         \
                     : "=r"(done) : "r"(gk_smem(b)), "r"(parity & 1u) : "memory");                        \
        return done != 0;                                                                                 \
    }                                                                                                     \
    __device__ __forceinline__ void gk_mbar_wait##suffix(unsigned long long* b, unsigned parity) {        \
        while (!gk_mbar_try_wait##suffix(b, parity)) {}                                                   \
    }
GK_MBAR_WAITS(, "")
GK_MBAR_WAITS(_cluster, ".acquire.cluster")
__device__ __forceinline__ void gk_tma_load_1d(void* d, const gk_tensor_map* m, int c0, unsigned long long* b) {
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2}], [%3];\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(gk_smem(b)) : "memory");
}
__device__ __forceinline__ void gk_tma_load_2d(void* d, const gk_tensor_map* m, int c0, int c1, unsigned long long* b) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(c1), "r"(gk_smem(b)) : "memory");
}
__device__ __forceinline__ void gk_tma_load_3d(void* d, const gk_tensor_map* m, int c0, int c1, int c2,
                                               unsigned long long* b) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(gk_smem(b)) : "memory");
}"""

_MULTICAST = r"""// TMA multicast into the cluster's blocks of a mask, plain bulk copies
__device__ __forceinline__ void gk_tma_load_mc_1d(void* d, const gk_tensor_map* m, int c0, unsigned long long* b,
                                                  unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2}], [%3], %4;\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(gk_smem(b)), "h"(mask) : "memory");
}
__device__ __forceinline__ void gk_tma_load_mc_2d(void* d, const gk_tensor_map* m, int c0, int c1,
                                                  unsigned long long* b, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(c1), "r"(gk_smem(b)), "h"(mask) : "memory");
}
__device__ __forceinline__ void gk_tma_load_mc_3d(void* d, const gk_tensor_map* m, int c0, int c1, int c2,
                                                  unsigned long long* b, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
                 :: "r"(gk_smem(d)), "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(gk_smem(b)), "h"(mask) : "memory");
}
__device__ __forceinline__ void gk_bulk_load(void* d, const void* s, unsigned bytes, unsigned long long* b) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 :: "r"(gk_smem(d)), "l"(s), "r"(bytes), "r"(gk_smem(b)) : "memory");
}
__device__ __forceinline__ void gk_bulk_store(void* d, const void* s, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 :: "l"(d), "r"(gk_smem(s)), "r"(bytes) : "memory");
}"""

_STORES = r"""__device__ __forceinline__ void gk_tma_store_1d(const gk_tensor_map* m, int c0, const void* s) {
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];\n"
                 :: "l"(m), "r"(c0), "r"(gk_smem(s)) : "memory");
}
__device__ __forceinline__ void gk_tma_store_2d(const gk_tensor_map* m, int c0, int c1, const void* s) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 :: "l"(m), "r"(c0), "r"(c1), "r"(gk_smem(s)) : "memory");
}
__device__ __forceinline__ void gk_tma_store_3d(const gk_tensor_map* m, int c0, int c1, int c2, const void* s) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n"
                 :: "l"(m), "r"(c0), "r"(c1), "r"(c2), "r"(gk_smem(s)) : "memory");
}
__device__ __forceinline__ void gk_bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void gk_bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" :: "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void gk_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
}"""

_SPECIALIZATION = r"""// warp specialization (gpukern/semantics/specialization.py)
__device__ __forceinline__ bool gk_elect_one() {
    unsigned leader;
    asm volatile("{\n .reg .pred p;\n elect.sync _|p, %1;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(leader) : "r"(__activemask()));
    return leader != 0;
}
__device__ __forceinline__ void gk_named_sync(unsigned id, unsigned count) {
    asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void gk_named_arrive(unsigned id, unsigned count) {
    asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(count) : "memory");
}
// thread-block clusters (gpukern/semantics/cluster.py)
__device__ __forceinline__ int gk_cluster_rank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return (int)r;
}
__device__ __forceinline__ int gk_cluster_size() {
    unsigned n;
    asm("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return (int)n;
}
template <class T> __device__ __forceinline__ T* gk_peer(T* p, unsigned rank) {  // the same element, in block rank
    unsigned long long q;
    asm("mapa.u64 %0, %1, %2;\n" : "=l"(q) : "l"(p), "r"(rank));
    return reinterpret_cast<T*>(q);
}
__device__ __forceinline__ unsigned gk_mapa(const void* p, unsigned rank) {  // p's place in block rank
    unsigned a;
    asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(a) : "r"(gk_smem(p)), "r"(rank));
    return a;
}
template <int N> struct gk_bits_of;
template <> struct gk_bits_of<4> { typedef unsigned t; };
template <> struct gk_bits_of<8> { typedef unsigned long long t; };
template <class T> __device__ __forceinline__ typename gk_bits_of<sizeof(T)>::t gk_bits(T v) {
    union { T v; typename gk_bits_of<sizeof(T)>::t u; } c;
    c.v = v;
    return c.u;
}
#define GK_ST_ASYNC "st.async.shared::cluster.mbarrier::complete_tx::bytes"
__device__ __forceinline__ void gk_st_async_bits(unsigned d, unsigned b, unsigned v) {
    asm volatile(GK_ST_ASYNC ".b32 [%0], %1, [%2];\n" :: "r"(d), "r"(v), "r"(b) : "memory");
}
__device__ __forceinline__ void gk_st_async_bits(unsigned d, unsigned b, unsigned long long v) {
    asm volatile(GK_ST_ASYNC ".b64 [%0], %1, [%2];\n" :: "r"(d), "l"(v), "r"(b) : "memory");
}
__device__ __forceinline__ void gk_st_async_bits(unsigned d, unsigned b, unsigned v0, unsigned v1) {
    asm volatile(GK_ST_ASYNC ".v2.b32 [%0], {%1, %2}, [%3];\n" :: "r"(d), "r"(v0), "r"(v1), "r"(b) : "memory");
}
__device__ __forceinline__ void gk_st_async_bits(unsigned d, unsigned b, unsigned long long v0, unsigned long long v1) {
    asm volatile(GK_ST_ASYNC ".v2.b64 [%0], {%1, %2}, [%3];\n" :: "r"(d), "l"(v0), "l"(v1), "r"(b) : "memory");
}
__device__ __forceinline__ void gk_st_async_bits(unsigned d, unsigned b, unsigned v0, unsigned v1, unsigned v2,
                                                 unsigned v3) {
    asm volatile(GK_ST_ASYNC ".v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n"
                 :: "r"(d), "r"(v0), "r"(v1), "r"(v2), "r"(v3), "r"(b) : "memory");
}
template <class T, class... U>  // value(s) from d on in block rank, completing on its mbarrier b
__device__ __forceinline__ void gk_st_async(T* d, unsigned rank, unsigned long long* b, T v, U... more) {
    gk_st_async_bits(gk_mapa(d, rank), gk_mapa(b, rank), gk_bits(v), gk_bits((T)more)...);
}
__device__ __forceinline__ void gk_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}"""

CUDA_HOPPER = {
    "preamble": _HELPERS + "\n" + _MULTICAST + "\n" + _STORES + "\n" + _SPECIALIZATION,
    "type": "unsigned long long",
    "init": "gk_mbar_init({b}, {0})",
    "arrive": "gk_mbar_arrive({b})",
    "arrive_tx": "gk_mbar_arrive_tx({b}, {0})",
    "expect_tx": "gk_mbar_expect_tx({b}, {0})",
    "try_wait": "gk_mbar_try_wait({b}, {0})",
    "wait": "gk_mbar_wait({b}, {0})",
    "tma_load": "gk_tma_load_{rank}d({d}, &{map}, {coords}, {b});",
    "tma_load_mc": "gk_tma_load_mc_{rank}d({d}, &{map}, {coords}, {b}, (unsigned short)({mask}));",
    "bulk_load": "gk_bulk_load({d}, {s}, {bytes}, {b});",
    "bulk_store": "gk_bulk_store({d}, {s}, {bytes});",
    "fence:mbarrier_init": 'asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");',
    "fence:proxy_async": 'asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");',
    "map_param": "const __grid_constant__ gk_tensor_map {name}",
    "tma_store": "gk_tma_store_{rank}d(&{map}, {coords}, {s});",
    "bulk_commit": "gk_bulk_commit();",
    "bulk_wait": "gk_bulk_wait<{n}>();",
    "bulk_wait_read": "gk_bulk_wait_read<{n}>();",
    "named_sync": "gk_named_sync({id}, {count});",
    "named_arrive": "gk_named_arrive({id}, {count});",
    "elect": "gk_elect_one()",
    "setmaxnreg_inc": 'asm volatile("setmaxnreg.inc.sync.aligned.u32 {n};\\n" ::: "memory");',
    "setmaxnreg_dec": 'asm volatile("setmaxnreg.dec.sync.aligned.u32 {n};\\n" ::: "memory");',
    "cluster_dims": "__cluster_dims__({x}, {y}, {z})",
    "rank": "gk_cluster_rank()",
    "size": "gk_cluster_size()",
    "cluster_sync": "gk_cluster_sync();",
    "peer": "(*gk_peer(&{e}, {rank}))",
    "wait_cluster": "gk_mbar_wait_cluster({b}, {0})",
    "try_wait_cluster": "gk_mbar_try_wait_cluster({b}, {0})",
    "store_async": "gk_st_async(&{d}, {rank}, &{b}, {values});",
}
MAX_RANK = 3  # the ranks the helpers above copy
