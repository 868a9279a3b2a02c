"""``ir.Node.accesses``: the one description of what memory each IR node touches.

Every pass that asks which arrays are read or written, at which indices, and how aligned
(``passes.written_params``, ``passes.mark_index_arithmetic``, the load forwarding's ``ends``,
``variant._vector_alignment``, the emitter's aligned declarations) reads it, so each memory node
is checked here once, on IR the front end made, and a node class holding an array that does not
describe its accesses fails ``test_every_node_with_an_array_says_what_it_accesses``."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

import gpukern as gk
from gpukern import Array, atomic_add, barrier, float32, int32, kernel, shared, thread_idx, vload, vstore
from gpukern.ir import nodes as ir


@kernel
def every_access(x: Array[float32], y: Array[float32], z: Array[float32], hist: Array[int32]):
    t = thread_idx.x
    s = shared(float32, 64)
    gk.async_copy(s[2 * t], x[2 * t], count=2)
    gk.async_commit()
    gk.async_wait()
    barrier()
    a, b, c, d = vload(x, 4 * t, 4)
    vstore(y, 4 * t, (a, b, c, d))
    z[t + 1] = x[t] + s[t]
    atomic_add(hist, t, 1)


@kernel
def tile(a: Array[gk.float16, 2], b: Array[gk.float16, 2], c: Array[float32, 2]):
    fa = gk.fragment("a", 16, 16, 16, gk.float16)
    fb = gk.fragment("b", 16, 16, 16, gk.float16)
    acc = gk.fragment("accumulator", 16, 16, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    gk.load_matrix(fa, a, (0, 0))
    gk.load_matrix(fb, b, (0, 0))
    acc = gk.mma(fa, fb, acc)
    gk.store_matrix(c, (0, 0), acc)


@kernel
def warpgroup(a: Array[gk.float16, 2], c: Array[float32, 2]):
    s = shared(gk.float16, 8192)  # A's and B's tiles, as gk.swizzle128 lays them out
    for e in range(thread_idx.x, 4096, 128):
        s[gk.swizzle128(e // 64, e % 64, 64, 8)] = a[e // 64, e % 64]
    barrier()
    acc = gk.fragment("accumulator", 64, 64, 16, gk.float32)
    gk.fill_fragment(acc, 0.0)
    acc = gk.wgmma(acc, s, 16, s, 4096)
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    out = gk.fragment("accumulator", 64, 64, 16, gk.float32)
    gk.fill_fragment(out, 0.0)
    out = gk.wgmma(out, acc, 1, s, 4096)  # A from registers: B alone is memory
    gk.wgmma_commit()
    gk.wgmma_wait(0)
    gk.store_matrix(c, (0, 0), out)


@kernel
def tma(a: Array[gk.float16, 2]):
    tile = shared(gk.float16, 16 * 64)
    bars = shared(gk.mbarrier, 1)
    amap = gk.tensor_map(a, (16, 64), swizzle=128)
    gk.mbarrier_init(bars[0], 1)
    gk.tma_load(tile[0], amap, (0, thread_idx.x), bars[0])
    gk.tma_store(amap, (thread_idx.x, 0), tile[0])


@kernel
def bulk(a: Array[gk.float32], out: Array[gk.float32]):
    buf = shared(gk.float32, 64)
    bars = shared(gk.mbarrier, 1)
    gk.mbarrier_init(bars[0], 1)
    gk.bulk_load(buf[0], a[thread_idx.x * 64], 64, bars[0])
    gk.bulk_store(out[thread_idx.x * 64], buf[0], 64)


@kernel
def pairs(a: Array[gk.float32]):
    gk.cluster_dims(2)
    got = shared(gk.float32, 4)
    bars = shared(gk.mbarrier, 1)
    gk.store_async(gk.peer(got, 1)[2], (a[0], a[1]), gk.peer(bars, 1)[0])


def _variant(k: gk.Kernel, *args: object):
    return k.variant(k.signature_of(args))


def _every_access():
    f32, i32 = np.zeros(256, np.float32), np.zeros(64, np.int32)
    return _variant(every_access, f32, f32, f32, i32)


def _tile():
    h = np.zeros((16, 16), np.float16)
    return _variant(tile, h, h, np.zeros((16, 16), np.float32))


def _by_kind(v) -> dict[type, list[ir.Node]]:
    out: dict[type, list[ir.Node]] = {}
    for n in ir.walk_body(v.program.kernel.body):
        if n.accesses():
            out.setdefault(type(n), []).append(n)
    return out


def _one(nodes: list[ir.Node], array: str) -> tuple[ir.Node, ir.MemoryAccess]:
    """The node among ``nodes`` whose (first) access is of ``array``, and that access."""
    (n,) = [n for n in nodes if n.accesses()[0].array.name == array]
    (a,) = n.accesses()
    return n, a


def _expect(a: ir.MemoryAccess, array: str, read: bool, write: bool, width: int | None, aligned: int) -> None:
    assert (a.array.name, a.read, a.write, a.width_bytes, a.aligned_bytes) == (array, read, write, width, aligned)


# ---------------------------------------------------------------- each kind, from the front end
def test_element_accesses():
    kinds = _by_kind(_every_access())
    load, a = _one(kinds[ir.Load], "x")
    _expect(a, "x", True, False, 4, 4)
    assert a.indices is load.indices and not a.overaligned
    store, a = _one(kinds[ir.Store], "z")
    _expect(a, "z", False, True, 4, 4)
    assert a.indices is store.indices
    atomic, a = _one(kinds[ir.Atomic], "hist")
    _expect(a, "hist", True, True, 4, 4)  # a read-modify-write
    assert a.indices is atomic.indices


def test_vector_accesses():
    kinds = _by_kind(_every_access())
    load, a = _one(kinds[ir.VecLoad], "x")
    _expect(a, "x", True, False, 16, 16)
    assert a.indices is load.indices and a.overaligned
    store, a = _one(kinds[ir.VecStore], "y")
    _expect(a, "y", False, True, 16, 16)
    assert a.indices is store.indices and a.overaligned


def test_async_copy_writes_its_destination_and_reads_its_source():
    (copy,) = _by_kind(_every_access())[ir.AsyncCopy]
    dst, src = copy.accesses()
    _expect(dst, "s", False, True, 8, 8)
    _expect(src, "x", True, False, 8, 8)
    assert dst.indices is copy.dst_indices and src.indices is copy.src_indices


def test_fragment_tiles():
    kinds = _by_kind(_tile())
    for name in ("a", "b"):
        load, a = _one(kinds[ir.LoadMatrix], name)
        _expect(a, name, True, False, None, ir.TILE_ALIGNMENT)
        assert a.indices is load.indices
    (store,) = kinds[ir.StoreMatrix]
    (a,) = store.accesses()
    _expect(a, "c", False, True, None, ir.TILE_ALIGNMENT)


def test_wgmma_reads_its_two_operands_or_b_alone():
    v = _variant(warpgroup, np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float32))
    (mma,) = _by_kind(v)[ir.WarpgroupMma]
    a, b = mma.accesses()
    _expect(a, "s", True, False, None, ir.OPERAND_ALIGNMENT)
    _expect(b, "s", True, False, None, ir.OPERAND_ALIGNMENT)
    assert a.indices == [mma.a_at] and b.indices == [mma.b_at]
    assert "__shared__ __align__(1024) __half s[8192];" in v.source("cuda")  # the swizzled atoms'
    (regs,) = _by_kind(v)[ir.WarpgroupMmaRegs]
    (b,) = regs.accesses()
    _expect(b, "s", True, False, None, ir.OPERAND_ALIGNMENT)
    assert b.indices == [regs.b_at]


def test_tma_writes_its_box_reads_its_array_and_updates_its_barrier():
    v = _variant(tma, np.zeros((16, 64), np.float16))
    kinds = _by_kind(v)
    (init,) = kinds[ir.Mbarrier]
    (bar,) = init.accesses()
    _expect(bar, "bars", True, True, 8, 8)
    (load,) = kinds[ir.TmaLoad]
    box, src, bar = load.accesses()
    _expect(box, "tile", False, True, 16 * 64 * 2, 1024)  # a swizzled box: the pattern's 1024 bytes
    _expect(src, "a", True, False, None, 16)
    _expect(bar, "bars", True, True, 8, 8)
    assert src.indices is load.coords and box.indices is load.dst_indices
    (store,) = kinds[ir.TmaStore]
    box, dst = store.accesses()
    _expect(box, "tile", True, False, 16 * 64 * 2, 1024)
    _expect(dst, "a", False, True, None, 16)
    assert dst.indices is store.coords
    assert v.vector_alignment == {"a": 16}  # an array from elsewhere must start 16-byte aligned
    assert "a" in v.written  # a TMA store writes its array (so a NumPy argument is copied back)


def test_bulk_copies_write_their_destination_and_read_their_source():
    v = _variant(bulk, np.zeros(128, np.float32), np.zeros(128, np.float32))
    load, store = _by_kind(v)[ir.BulkCopy]
    dst, src, bar = load.accesses()
    _expect(dst, "buf", False, True, None, 16)
    _expect(src, "a", True, False, None, 16)
    _expect(bar, "bars", True, True, 8, 8)
    dst, src = store.accesses()
    _expect(dst, "out", False, True, None, 16)
    _expect(src, "buf", True, False, None, 16)
    assert "out" in v.written and "a" not in v.written


def test_store_async_writes_its_elements_and_updates_the_barrier():
    v = _variant(pairs, np.zeros(4, np.float32))
    (st,) = _by_kind(v)[ir.StoreAsync]
    dst, bar = st.accesses()
    _expect(dst, "got", False, True, 8, 8)  # (two float32s in one piece)
    _expect(bar, "bars", True, True, 8, 8)
    assert dst.array.peer is not None and bar.array.peer is not None


def test_what_the_passes_read_of_it():
    v = _every_access()
    assert v.written == {"y", "z", "hist", "s"}
    assert v.vector_alignment == {"x": 16, "y": 16}  # the vector load beats the 8-byte copy
    assert _tile().vector_alignment == {"a": 32, "b": 32, "c": 32}


# ---------------------------------------------------------------- no memory node forgotten
# node classes that hold an array but touch none of its elements
NO_ACCESS = {
    ir.Shape: "reads the array's shape (a kernel parameter), not an element",
    ir.DeclArray: "declares the array",
    ir.Call: "passes arrays on: the callee's own nodes access them",
    ir.TensorMap: "describes the array (its address and shape, at launch); the copies with it access it",
}
KINDS = {
    ir.Load,
    ir.Store,
    ir.Atomic,
    ir.VecLoad,
    ir.VecStore,
    ir.AsyncCopy,
    ir.LoadMatrix,
    ir.StoreMatrix,
    ir.WarpgroupMma,
    ir.WarpgroupMmaRegs,
    ir.Mbarrier,
    ir.TmaLoad,
    ir.TmaStore,
    ir.BulkCopy,
    ir.StoreAsync,
}


def _holds_an_array(cls: type) -> bool:
    return any(re.search(r"\bArrayRef\b", str(f.type)) for f in dataclasses.fields(cls))


def _node_classes() -> list[type]:
    return [
        c for c in vars(ir).values() if isinstance(c, type) and issubclass(c, ir.Node) and dataclasses.is_dataclass(c)
    ]


def _uncovered() -> list[str]:
    """Node classes holding an array that neither describe their accesses nor are known not to access."""
    return sorted(
        c.__name__
        for c in _node_classes()
        if _holds_an_array(c) and c.accesses is ir.Node.accesses and c not in NO_ACCESS
    )


def test_every_node_with_an_array_says_what_it_accesses():
    assert _uncovered() == []
    described = {c for c in _node_classes() if c.accesses is not ir.Node.accesses}
    assert described == KINDS  # each checked above, on the front end's IR
    assert all(_holds_an_array(c) for c in NO_ACCESS)


def test_a_forgotten_kind_is_caught(monkeypatch):
    monkeypatch.delattr(ir.VecStore, "accesses")
    assert _uncovered() == ["VecStore"]
