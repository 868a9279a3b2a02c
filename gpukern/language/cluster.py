"""Thread-block clusters as functions of a kernel: ``cluster_dims``, ``cluster_rank``,
``cluster_size``, ``cluster_barrier`` and ``peer`` (distributed shared memory); their meaning is
``gpukern.semantics.cluster``.

``peer(a, rank)`` is the shared array ``a`` of the cluster's block ``rank``: an ``ir.ArrayRef`` of
``a`` with ``peer`` set, read and written as ``a`` is (``peer(a, r)[i] = v``).  The CUDA dialect maps
the element's address into the peer block (PTX ``mapa``, ``codegen.hopper``); the simulator reaches
that block's copy and checks the accesses across the cluster (``sim.races``, ``sim.cluster``).
"""

from __future__ import annotations

import ast
import dataclasses

from ..errors import KernelSyntaxError, KernelTypeError
from ..ir import nodes as ir
from ..semantics import cluster as cl
from ..semantics.values import Static, Value, coerce, scalar, store_value
from ..types import bool_, int32, uint32
from .core import Intrinsic, Lowering, Statement
from .hopper import barrier_element, shared_element


class _ClusterDims(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, (1, 2, 3), self.name)
        if not cx.is_kernel:
            raise KernelSyntaxError("cluster_dims() belongs in the kernel, not in a @func", cx.loc(node))
        dims = tuple(cx.static_value(a, default=None) for a in node.args)
        why = cl.dims_problem(dims)  # type: ignore[arg-type]
        if why is not None:
            raise KernelTypeError(f"cluster_dims{dims!r}: {why}", cx.loc(node))
        cx.set_cluster(node, (*dims, 1, 1)[:3])  # type: ignore[arg-type]
        return Static(None)


class _ClusterInfo(Intrinsic):
    def __init__(self, name: str, what: str, doc: str):
        super().__init__(name, doc)
        self.what = what

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 0, self.name)
        return ir.ClusterInfo(self.what, int32, loc=cx.loc(node))


class _Peer(Intrinsic):
    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 2, self.name)
        a = cx.visit(node.args[0])
        if not isinstance(a, ir.ArrayRef) or a.type.space != "shared" or a.view is not None or a.peer is not None:
            raise KernelTypeError(
                f"{self.name}() takes one of the kernel's shared arrays as a whole, not {ast.unparse(node.args[0])}",
                cx.loc(node.args[0]),
                "declare buf = gk.shared(...) and write peer(buf, rank)[i]",
            )
        if a.record_field is not None or a.type.shape is None:
            raise KernelTypeError(
                f"{self.name}() reaches a shared array of a fixed shape (not a record field, not dynamic_shared())",
                cx.loc(node.args[0]),
            )
        loc = cx.loc(node.args[1])
        r = scalar(loc, cx.visit(node.args[1]), f"{self.name}()'s rank")
        if isinstance(r, Static):
            n = r.value
            most = cl.size(cx.cluster) if cx.cluster else cl.MAX_BLOCKS  # (the kernel's cluster_dims(), if read)
            if isinstance(n, bool) or not float(n).is_integer() or not 0 <= int(n) < most:
                raise KernelTypeError(f"a block's rank in its cluster is 0 to {most - 1}, not {n!r}", loc)
            rank: ir.Expr = ir.Lit(int(n), uint32, loc=loc)
        elif not r.type.is_int or r.type == bool_:
            raise KernelTypeError(f"{self.name}()'s rank is an integer, not {r.type.name}", loc)
        else:
            rank = coerce(loc, r, uint32)
        return dataclasses.replace(a, peer=rank)


class _StoreAsync(Intrinsic):
    """``store_async(dst[i], value, bar[s])``: one ``ir.StoreAsync`` (``semantics.cluster``)."""

    EXAMPLE = "store_async(gk.peer(buf, r)[i], (x, y), gk.peer(bars, r)[s])"

    def lower(self, cx: Lowering, node: ast.Call) -> Value:
        cx.nargs(node, 3, self.name)
        d_arg, v_arg, b_arg = node.args
        what = f"{self.name}() stores into an element of a shared array (a peer's, or the block's own)"
        dst = shared_element(cx, d_arg, what, self.EXAMPLE)
        bar_array, bar_indices = barrier_element(cx, b_arg, self.name)
        if (dst.array.peer is None) != (bar_array.peer is None):
            raise KernelTypeError(
                f"{self.name}(): the mbarrier is in the block the value goes to: reach both through peer(..., "
                "rank) with the same rank, or neither",
                cx.loc(node),
                f"write {self.EXAMPLE}",
            )
        t = dst.array.type.elem
        parts = v_arg.elts if isinstance(v_arg, ast.Tuple) else [v_arg]
        counts = cl.STORE_ASYNC.get(getattr(t, "itemsize", 0), ())
        if len(parts) not in counts:
            raise KernelTypeError(
                f"{self.name}() stores 1, 2 or 4 elements of 4 bytes, or 1 or 2 of 8, in one piece: not "
                f"{len(parts)} of {t.name}",
                cx.loc(v_arg),
            )
        what = f"array {dst.array.name!r}"
        values = [
            store_value(cx.loc(p), scalar(cx.loc(p), cx.visit(p), f"{self.name}()'s value"), t, what, cx.rules)
            for p in parts
        ]
        cx.emit(
            ir.StoreAsync(dst.array, dst.indices, values, bar_array, bar_indices, loc=cx.loc(node))
        )  # fmt: skip
        return Static(None)


cluster_dims = _ClusterDims(
    "cluster_dims",
    "cluster_dims(x, y=1, z=1): the kernel runs in clusters of x * y * z blocks (at most 16, more than 8 "
    "non-portable; the grid a multiple of it), whose blocks share their shared memory (peer) and meet at "
    "cluster_barrier().  CUDA sm_90 (__cluster_dims__) and the simulator.",
)
cluster_rank = _ClusterInfo(
    "cluster_rank", "rank", "cluster_rank(): the block's rank in its cluster, 0 to cluster_size() - 1 (x fastest)."
)
cluster_barrier = Statement(
    "cluster_barrier",
    "cluster_barrier(): every thread of the cluster's blocks waits here; what each wrote before it, in any "
    "block's shared memory, is then seen by all (PTX barrier.cluster.arrive.release / wait.acquire).",
    lambda loc: ir.Barrier(scope="cluster", loc=loc),
)
cluster_size = _ClusterInfo("cluster_size", "size", "cluster_size(): the blocks of the block's cluster.")
peer = _Peer(
    "peer",
    "peer(a, rank): the shared array a of block rank of this cluster (distributed shared memory), read and "
    "written as a is: peer(buf, 1)[i] = v.  Between another block's write and a read, and before that block "
    "may exit, a cluster_barrier().",
)
store_async = _StoreAsync(
    "store_async",
    "store_async(dst[i], value, bar[s]): store value (a scalar, or a tuple of 2 or 4 of 4 bytes, 2 of 8: one "
    "piece, aligned to its size) into shared memory from dst[i] on -- another block's, peer(buf, r)[i], or this "
    "block's -- its bytes completing on mbarrier bar[s] of the same block (peer(bars, r)[s]); that block expects "
    "them (mbarrier_arrive_expect_tx) and reads them once it has waited for the phase.  No cluster barrier "
    "before the read, none after the store (PTX st.async).  CUDA sm_90 and the simulator.",
)
