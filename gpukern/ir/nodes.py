"""The typed IR between the Python front end and every consumer (C emitters, simulator).

Small on purpose: a kernel is a tree of statements over typed expressions.  Memory
spaces are part of array types and ``Barrier`` is a statement of its own, so
consumers never have to rediscover them.  Every node keeps the Python source
location it came from, for error messages and the line comments in generated C.
Types here are always concrete (no weak literal types survive the front end).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..errors import Loc
from ..types import ArrayType, FragmentType, ScalarType, TupleType


def _loc() -> Any:
    return field(default=None, kw_only=True, compare=False, repr=False)


class Node:
    """Base of IR nodes; ``loc`` is where in the Python source it came from.

    ``CHILDREN`` names the fields that hold sub-nodes (a node or a list of nodes), so
    traversals need no knowledge of each class; ``accesses`` says what memory it touches, so
    analyses need no list of the classes that touch memory.
    """

    loc: Loc | None
    CHILDREN: ClassVar[tuple[str, ...]] = ()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The array elements this node itself reads or writes (not its sub-nodes': a store's value
        may load); none for most nodes.  The passes that ask which arrays are read or written, at
        which indices and how aligned ask this, so a node that touches memory says so here, not in
        each of them."""
        return ()


# ---------------------------------------------------------------- memory accesses
# bytes: a fragment's tile starts 256-bit aligned (wmma's loads and stores need it; gpukern's TF32 code
# needs 128 bits, held to the same rule) and its rows are a multiple of 128 bits apart (both need it)
TILE_ALIGNMENT = 32
TILE_ROW_ALIGNMENT = 16
# a wgmma operand's start: at least 32 bytes aligned (a K-major one's k steps within its swizzled
# atom's row; a row-major B's start is an atom's, 1024: gpukern.semantics.wgmma, which the simulator checks)
OPERAND_ALIGNMENT = 32


@dataclass(frozen=True, eq=False)
class MemoryAccess:
    """One array access a node makes: ``array`` from the element at ``indices`` on (indices of the
    base array for an access through a view), read, written, or both (an atomic).

    ``width_bytes`` is what one thread moves from there in one piece: an element, a vector, an
    asynchronous copy's bytes; None for a fragment's tile, whose elements (rows ``ldm`` apart) the
    warp's lanes move between them (``semantics.mma.moves``).  ``aligned_bytes`` is the alignment the
    first element's address needs (the piece's size; ``TILE_ALIGNMENT`` for a tile).
    """

    array: ArrayRef
    indices: list[Expr]
    read: bool
    write: bool
    width_bytes: int | None
    aligned_bytes: int

    @property
    def overaligned(self) -> bool:
        """Needs more alignment than its element's size, which C and NumPy give any element: what a
        launch checks of an array from elsewhere, and why shared arrays are declared aligned."""
        return self.aligned_bytes > self.array.type.elem.itemsize


def _elements(array: ArrayRef, indices: list[Expr], count: int, *, read: bool, write: bool) -> MemoryAccess:
    """An access of ``count`` consecutive elements in one piece, aligned to its size."""
    nbytes = count * array.type.elem.itemsize
    return MemoryAccess(array, indices, read, write, nbytes, nbytes)


# ---------------------------------------------------------------- expressions
class Expr(Node):
    type: ScalarType


@dataclass(eq=False)
class Lit(Expr):
    """A literal of a concrete type (``value`` is a Python int/float/bool)."""

    value: Any
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Var(Expr):
    """A scalar local variable or scalar parameter; ``name`` is its Python name, or for a
    compiler temporary (``temp``) a fresh name no Python name of the function uses."""

    name: str
    type: ScalarType
    loc: Loc | None = _loc()
    temp: bool = field(default=False, kw_only=True)


@dataclass(eq=False)
class ArrayRef(Node):
    """An array: a parameter, a shared or local declaration, or a function parameter.

    A declaration is ``temp`` (a fresh name) until an assignment gives it the user's name."""

    name: str
    type: ArrayType
    loc: Loc | None = _loc()
    temp: bool = field(default=False, kw_only=True)
    # one field of a record array ``name`` (a["x"]): an array of the field's type, element i being
    # a[i].x; C reaches it as a member, the simulator through a view of the field
    record_field: str | None = field(default=None, kw_only=True)
    # a sub-array field's shape (``("h", np.float32, (3, 2))``): the array's last dimensions, indexing
    # the C member (``a[i].h[j][k]``); () for a scalar field
    field_shape: tuple[int, ...] = field(default=(), kw_only=True)
    # a slice of an array (``v = a[1:3]``, ``a[i, :]``, see ``View``).  In the front end a view is an
    # ArrayRef of the view's own type; in an access (``Node.accesses``) the array is the view's base
    # (its name and type, the indices the base's) and ``view`` says which view the kernel went
    # through, for the simulator's bounds check and messages
    view: View | None = field(default=None, kw_only=True)
    # a shared array of another block of the cluster (``peer(a, rank)``): that block's rank (uint32)
    peer: Expr | None = field(default=None, kw_only=True)
    CHILDREN = ("peer",)


@dataclass(eq=False)
class View:
    """A slice of array ``base`` (never itself a view: a view of a view is composed): per base
    dimension d, element ``k`` of the view's dimension is the base's index ``starts[d] + k * steps[d]``;
    a dimension an integer index fixed (``a[i, :]``) has step 0, start the index, and is not one of
    the view's.  ``lengths`` are the view's (Python's slice clamping: never past the base's ends).
    Starts and lengths are int64 literals or temporaries assigned where the slice was made, so the
    view keeps them as Python does (``v = a[i:]; i += 1``: ``v`` does not move)."""

    label: str  # what the kernel calls it, for messages: "'v' (a[1:3])"
    base: ArrayRef
    starts: list[Expr]
    steps: list[int]
    lengths: list[Expr]


@dataclass(eq=False)
class Load(Expr):
    """``array[indices]``: one index per dimension."""

    CHILDREN = ("array", "indices")
    array: ArrayRef
    indices: list[Expr]
    type: ScalarType
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (_elements(self.array, self.indices, 1, read=True, write=False),)


@dataclass(eq=False)
class BinOp(Expr):
    """Arithmetic or bitwise operation; both operands already have the operation's type
    (shifts excepted: the right operand keeps its own integer type).

    ``op`` is one of ``+ - * / // % ** << >> & | ^``; ``//`` and ``%`` mean Python's
    floor semantics, which the emitters spell with helpers where C differs.
    """

    CHILDREN = ("left", "right")
    op: str
    left: Expr
    right: Expr
    type: ScalarType
    loc: Loc | None = _loc()
    feeds_index: bool = False  # 32-bit arithmetic whose value reaches an index (the simulator checks it)


@dataclass(eq=False)
class Compare(Expr):
    """``< <= > >= == !=`` on two operands of one type; the result is bool."""

    CHILDREN = ("left", "right")
    op: str
    left: Expr
    right: Expr
    type: ScalarType
    loc: Loc | None = _loc()
    feeds_index: bool = False  # 32-bit arithmetic whose value reaches an index (the simulator checks it)


@dataclass(eq=False)
class Logic(Expr):
    """Short-circuit ``and``/``or`` on bool operands."""

    CHILDREN = ("left", "right")
    op: str  # 'and' | 'or'
    left: Expr
    right: Expr
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Unary(Expr):
    """``-``, ``~`` (on its own type) or ``not`` (bool)."""

    CHILDREN = ("operand",)
    op: str  # '-' | '~' | 'not'
    operand: Expr
    type: ScalarType
    loc: Loc | None = _loc()
    feeds_index: bool = False  # as BinOp's


@dataclass(eq=False)
class Cast(Expr):
    """Conversion of ``value`` to ``type`` (C conversion; bool means ``!= 0``).  ``implicit``: made by
    a store without a cast written, from a type whose values ``type`` may not hold
    (``semantics.values.store_value``): the simulator reports one that changes a value under
    ``gk.sanitize``."""

    CHILDREN = ("value",)
    value: Expr
    type: ScalarType
    loc: Loc | None = _loc()
    implicit: bool = field(default=False, kw_only=True)


@dataclass(eq=False)
class Select(Expr):
    """``a if cond else b``: only the chosen operand is evaluated."""

    CHILDREN = ("cond", "a", "b")
    cond: Expr
    a: Expr
    b: Expr
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class WrapIndex(Expr):
    """An index that counts from the end when negative (NumPy's and Numba's rule, under the compile
    option ``negative_indices="wrap"``): ``index + extent`` if ``index < 0``.  The front end's pass
    ``passes.wrap_indices`` replaces each by its index where that is never negative, else by that
    ``Select``, so no backend sees one."""

    CHILDREN = ("index", "extent")
    index: Expr
    extent: Expr
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class MathCall(Expr):
    """A math intrinsic by its generic name (``sqrt``, ``atan2``, ``isnan``...)."""

    CHILDREN = ("args",)
    name: str
    args: list[Expr]
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Special(Expr):
    """A thread-geometry value: ``thread_idx``, ``block_idx``, ``block_dim``,
    ``grid_dim`` or ``global_id`` along dimension ``dim`` (0, 1, 2)."""

    name: str
    dim: int
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Shape(Expr):
    """``array.shape[dim]`` of a global array (passed to the kernel as a parameter), or the length
    of a dynamic_shared() array (the launch's dynamic shared bytes over its itemsize)."""

    CHILDREN = ("array",)
    array: ArrayRef
    dim: int
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Atomic(Expr):
    """``atomic_<op>(array, index, *operands)``: returns the element's old value.

    ``op`` names an entry of ``ops.ATOMIC`` (add, sub, min, max, exch, cas, and, or, xor, inc,
    dec; cas takes compare then value).
    """

    CHILDREN = ("array", "indices", "operands")
    op: str
    array: ArrayRef
    indices: list[Expr]
    operands: list[Expr]
    type: ScalarType
    loc: Loc | None = _loc()
    uniform_address: bool = False  # the index is the same in every thread by the code (checks sets it)

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (_elements(self.array, self.indices, 1, read=True, write=True),)  # read-modify-write


@dataclass(eq=False)
class Lane(Expr):
    """Element ``lane`` (0..7; C's ``.x .y .z .w``, or of 16-bit elements their bits) of the vector a
    ``VecLoad`` named ``vector``."""

    vector: str
    lane: int
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class WarpOp(Expr):
    """A warp-level intrinsic: ``op`` names an entry of ``semantics.warp.WARP_OPS`` (shfl_idx, shfl_up,
    shfl_down, shfl_xor, all, any, uni, ballot, activemask, syncwarp, match_any, match_all).
    ``mask`` is the uint32 of the lanes taking part (None for activemask); ``args`` the value (or
    predicate), then for a shuffle its lane operand (uint32) and its width (int32: the segment, a
    power of 2 up to 32, a literal or a run-time value).  ``type`` is None for syncwarp, which
    returns nothing.  ``active`` (a bool, for the emitter of a dialect that emulates warps with
    block barriers: ``frontend.predication``) says whether this thread takes part, where every
    thread calls the op; None: every thread that reaches it does."""

    CHILDREN = ("mask", "args", "active")
    op: str
    mask: Expr | None
    args: list[Expr]
    type: ScalarType | None
    loc: Loc | None = _loc()
    active: Expr | None = None


@dataclass(eq=False)
class Call(Expr):
    """A call of a device function (``@func``) specialised for these argument types.

    Array arguments are ``ArrayRef``s; ``type`` is None for a function returning nothing.
    """

    CHILDREN = ("args",)
    func: FuncDef
    args: list[Expr | ArrayRef]
    type: ScalarType | None
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Item(Expr):
    """Item ``index`` of the tuple held in ``tuple`` (a temporary of a ``TupleType``, assigned once
    from a call returning a tuple; C: a struct's field)."""

    CHILDREN = ("tuple",)
    tuple: Var
    index: int
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class MakeTuple(Expr):
    """The tuple of ``items`` (what ``return a, b`` returns); ``type`` is their ``TupleType``."""

    CHILDREN = ("items",)
    items: list[Expr]
    type: TupleType  # type: ignore[assignment]
    loc: Loc | None = _loc()


# ---------------------------------------------------------------- statements
class Stmt(Node):
    pass


@dataclass(eq=False)
class Assign(Stmt):
    """``target = value``; ``declare`` marks the assignment that also declares it."""

    CHILDREN = ("target", "value")
    target: Var
    value: Expr
    declare: bool = False
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Store(Stmt):
    CHILDREN = ("array", "indices", "value")
    array: ArrayRef
    indices: list[Expr]
    value: Expr
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (_elements(self.array, self.indices, 1, read=False, write=True),)

    def copied(self) -> Load | None:
        """The element this store copies from an array of the same element type (``b[i] = a[j]``),
        else None: such a copy moves the element's bits where the type is stored as bits (bfloat16;
        half on OpenCL), in the C and on the simulator alike (a signalling NaN stays one)."""
        v = self.value
        return v if isinstance(v, Load) and v.array.type.elem == self.array.type.elem else None


@dataclass(eq=False)
class VecLoad(Stmt):
    """``width`` consecutive elements from ``array[indices]`` on, in one access (a float4 load).

    Binds the vector ``name``, read element by element through ``Lane``.  The flat offset of
    the first element must be a multiple of ``width`` (the alignment vector accesses need).
    """

    CHILDREN = ("array", "indices")
    name: str
    array: ArrayRef
    indices: list[Expr]
    width: int
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (_elements(self.array, self.indices, self.width, read=True, write=False),)


@dataclass(eq=False)
class VecStore(Stmt):
    """``len(values)`` consecutive elements stored from ``array[indices]`` on, in one access."""

    CHILDREN = ("array", "indices", "values")
    array: ArrayRef
    indices: list[Expr]
    values: list[Expr]
    loc: Loc | None = _loc()

    @property
    def width(self) -> int:
        return len(self.values)

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (_elements(self.array, self.indices, self.width, read=False, write=True),)


@dataclass(eq=False)
class DeclArray(Stmt):
    """Declaration of a shared or local (per-thread) array of static shape."""

    CHILDREN = ("array",)
    array: ArrayRef
    loc: Loc | None = _loc()


@dataclass(eq=False)
class If(Stmt):
    CHILDREN = ("cond", "then", "orelse")
    cond: Expr
    then: list[Stmt]
    orelse: list[Stmt]
    loc: Loc | None = _loc()


@dataclass(eq=False)
class For(Stmt):
    """``for var in range(start, stop, step)``: bounds evaluated once, as in Python.

    ``step_sign`` is +1 or -1 when the step is a compile-time constant, 0 when it is
    only known at run time.  ``declare`` means the loop statement declares ``var``.
    """

    CHILDREN = ("var", "start", "stop", "step", "body")
    var: Var
    start: Expr
    stop: Expr
    step: Expr
    step_sign: int
    body: list[Stmt]
    declare: bool = True
    loc: Loc | None = _loc()


@dataclass(eq=False)
class While(Stmt):
    CHILDREN = ("cond", "body")
    cond: Expr
    body: list[Stmt]
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Break(Stmt):
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Continue(Stmt):
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Return(Stmt):
    CHILDREN = ("value",)
    value: Expr | None = None
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Barrier(Stmt):
    """Block-wide barrier with memory fence (``__syncthreads`` / ``barrier``).  A block-wide vote
    (``__syncthreads_count`` ...) is a barrier too: ``vote`` names its entry of
    ``semantics.warp.BLOCK_VOTES``, ``pred`` is each thread's predicate (bool) and ``result`` the
    variable that receives the block's answer, the same in every thread.  ``scope="grid"``: every
    thread of the grid waits (``grid_sync``, a cooperative launch on CUDA); never with a vote;
    ``scope="cluster"``: every thread of the block's cluster (``cluster_barrier``)."""

    CHILDREN = ("pred", "result")
    vote: str | None = None
    pred: Expr | None = None
    result: Var | None = None
    scope: str = "block"
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Fence(Stmt):
    """A memory fence: this thread's memory accesses before it are seen, by the threads of
    ``scope`` ('block', 'device' or 'system'), before those after it.  It orders; it does not
    wait for other threads (that is ``Barrier``)."""

    scope: str
    loc: Loc | None = _loc()


@dataclass(eq=False)
class AsyncCopy(Stmt):
    """``async_copy(dst[...], src[...], count)``: this thread starts copying ``count`` consecutive
    elements (4, 8 or 16 bytes) from global ``src`` to shared ``dst`` without waiting (CUDA's
    ``cp.async``).  The copy joins the thread's open group (``AsyncCommit`` closes it) and lands
    at the ``AsyncWait`` that covers its group; until then neither element may be touched (the
    source may be read)."""

    CHILDREN = ("dst", "dst_indices", "src", "src_indices")
    dst: ArrayRef
    dst_indices: list[Expr]
    src: ArrayRef
    src_indices: list[Expr]
    width: int
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The destination written, the source read (cp.async needs both aligned to the copy's size)."""
        return (
            _elements(self.dst, self.dst_indices, self.width, read=False, write=True),
            _elements(self.src, self.src_indices, self.width, read=True, write=False),
        )


@dataclass(eq=False)
class AsyncCommit(Stmt):
    """``async_commit()``: this thread's asynchronous copies issued since its last commit form a group."""

    loc: Loc | None = _loc()


@dataclass(eq=False)
class AsyncWait(Stmt):
    """``async_wait(pending)``: this thread waits until at most ``pending`` of its most recent
    committed groups are still in flight; the others' copies have landed (for this thread: other
    threads see them after a barrier)."""

    pending: int
    loc: Loc | None = _loc()


@dataclass(eq=False)
class TensorMap(Node):
    """``gk.tensor_map(a, box, swizzle)``: a TMA descriptor of the global array ``array``, copies of
    ``box`` elements (C order), swizzled ``swizzle`` bytes (``semantics.tma``); built at launch
    from the array argument and passed to the kernel as a parameter of its own (``KernelParam``
    kind 'tensor_map')."""

    CHILDREN = ("array",)
    name: str
    array: ArrayRef
    box: tuple[int, ...]
    swizzle: int
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Mbarrier(Expr):
    """An mbarrier operation (``semantics.mbarrier.OPS``: 'init' (count), 'arrive', 'arrive_tx'
    (bytes), 'expect_tx' (bytes), 'try_wait' (parity), 'wait' (parity)) on the barrier element
    ``bar[bar_indices]``; ``type`` None for a statement (in an ``ExprStmt``), uint64 for an arrival's
    state token, bool for ``try_wait``."""

    CHILDREN = ("bar", "bar_indices", "args")
    op: str
    bar: ArrayRef
    bar_indices: list[Expr]
    args: list[Expr]
    type: ScalarType | None
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The barrier's 64-bit word, read and written (a wait only reads it; said alike: it is the hardware's)."""
        return (_elements(self.bar, self.bar_indices, 1, read=True, write=True),)


@dataclass(eq=False)
class TmaLoad(Stmt):
    """``tma_load(dst[...], map, coords, bar[...])``: this thread starts a TMA copy of ``map``'s box
    at ``coords`` (C order) of its array into shared memory from ``dst[dst_indices]`` on, laid out
    as ``semantics.tma`` says; its bytes complete on the mbarrier ``bar[bar_indices]``, and the
    destination may be read by a thread once it has waited for that phase."""

    CHILDREN = ("dst", "dst_indices", "map", "coords", "bar", "bar_indices", "multicast")
    dst: ArrayRef
    dst_indices: list[Expr]
    map: TensorMap
    coords: list[Expr]
    bar: ArrayRef
    bar_indices: list[Expr]
    loc: Loc | None = _loc()
    # a uint16 mask of the cluster's blocks the box lands in (each at the same place, completing on
    # its own barrier at the same place), or None: this block only
    multicast: Expr | None = None

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The box written into shared memory from its first element (128-byte aligned, 1024 where
        swizzled: ``semantics.tma``), the array read from the box's first element (a TMA copy needs the
        array's data 16-byte aligned), and the barrier its bytes complete on."""
        box = self.map.array.type.elem.itemsize * math.prod(self.map.box)
        return (
            MemoryAccess(self.dst, self.dst_indices, False, True, box, 1024 if self.map.swizzle else 128),
            MemoryAccess(self.map.array, self.coords, True, False, None, 16),
            _elements(self.bar, self.bar_indices, 1, read=True, write=True),
        )


@dataclass(eq=False)
class TmaStore(Stmt):
    """``tma_store(map, coords, src[...])``: this thread starts a TMA copy of ``map``'s box from
    shared memory (``src[src_indices]`` on, laid out as a load lays it) to the array at ``coords``
    (elements outside the array are not written).  It joins the thread's open bulk group
    (``BulkCommit`` closes it); the source may be written again once a ``BulkWait`` covering the
    group has its reads done."""

    CHILDREN = ("map", "coords", "src", "src_indices")
    map: TensorMap
    coords: list[Expr]
    src: ArrayRef
    src_indices: list[Expr]
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The box read from shared memory, the array written from the box's first element."""
        box = self.map.array.type.elem.itemsize * math.prod(self.map.box)
        return (
            MemoryAccess(self.src, self.src_indices, True, False, box, 1024 if self.map.swizzle else 128),
            MemoryAccess(self.map.array, self.coords, False, True, None, 16),
        )


@dataclass(eq=False)
class BulkCopy(Stmt):
    """``bulk_load(dst[...], src[...], count, bar[...])`` (global to shared, its bytes completing on the
    mbarrier) or ``bulk_store(dst[...], src[...], count)`` (shared to global, in the thread's bulk
    group; ``bar`` None): ``count`` (uint32) contiguous elements from each first element on, a
    multiple of 16 bytes, both ends 16-byte aligned (``semantics.tma.BULK_ALIGN``)."""

    CHILDREN = ("dst", "dst_indices", "src", "src_indices", "count", "bar", "bar_indices")
    dst: ArrayRef
    dst_indices: list[Expr]
    src: ArrayRef
    src_indices: list[Expr]
    count: Expr
    bar: ArrayRef | None
    bar_indices: list[Expr]
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        out = [
            MemoryAccess(self.dst, self.dst_indices, False, True, None, 16),
            MemoryAccess(self.src, self.src_indices, True, False, None, 16),
        ]
        if self.bar is not None:
            out.append(_elements(self.bar, self.bar_indices, 1, read=True, write=True))
        return tuple(out)


@dataclass(eq=False)
class StoreAsync(Stmt):
    """``store_async(dst[...], value(s), bar[...])``: this thread stores ``values`` (1, 2 or 4, one
    piece) into shared memory from ``dst[dst_indices]`` on, in the block ``dst.peer`` names (its
    own where None), the bytes completing on the mbarrier ``bar[bar_indices]`` of that same block
    (``semantics.cluster.STORE_ASYNC``): the block may read them once it has waited for that phase."""

    CHILDREN = ("dst", "dst_indices", "values", "bar", "bar_indices")
    dst: ArrayRef
    dst_indices: list[Expr]
    values: list[Expr]
    bar: ArrayRef
    bar_indices: list[Expr]
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (
            _elements(self.dst, self.dst_indices, len(self.values), read=False, write=True),
            _elements(self.bar, self.bar_indices, 1, read=True, write=True),
        )


@dataclass(eq=False)
class BulkCommit(Stmt):
    """``tma_store_commit()``: this thread's TMA stores issued since its last commit form a bulk group."""

    loc: Loc | None = _loc()


@dataclass(eq=False)
class BulkWait(Stmt):
    """``tma_store_wait(pending, read)``: this thread waits until at most ``pending`` of its bulk groups
    are in flight -- their reads of shared memory done (``read``), or their writes done and seen."""

    pending: int
    read: bool
    loc: Loc | None = _loc()


@dataclass(eq=False)
class NamedBarrier(Stmt):
    """``named_barrier(id, count)`` (``wait``) or ``named_barrier_arrive(id, count)``: this thread's
    warp arrives at the block's hardware barrier ``id`` (1 to 15), whose phase completes when
    ``count`` threads have (``semantics.specialization``); both uint32."""

    CHILDREN = ("id", "count")
    id: Expr
    count: Expr
    wait: bool
    loc: Loc | None = _loc()


@dataclass(eq=False)
class ClusterInfo(Expr):
    """``cluster_rank()`` (``what`` 'rank': the block's rank in its cluster) or ``cluster_size()``
    ('size': its blocks), as ``semantics.cluster`` defines them; int32."""

    what: str
    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Elect(Expr):
    """``elect_one()``: true in the lowest-numbered of the warp's threads that execute it."""

    type: ScalarType
    loc: Loc | None = _loc()


@dataclass(eq=False)
class ExprStmt(Stmt):
    CHILDREN = ("value",)
    value: Expr
    loc: Loc | None = _loc()


@dataclass(eq=False)
class Print(Stmt):
    """``print(...)``: ``texts[0]``, ``values[0]``, ``texts[1]`` ... ``values[-1]``, ``texts[-1]``
    (``len(texts) == len(values) + 1``), each value formatted as ``gpukern.semantics.formats`` says."""

    CHILDREN = ("values",)
    texts: list[str]
    values: list[Expr]
    loc: Loc | None = _loc()


# ---------------------------------------------------------------- matrix units (gpukern.language.mma)
@dataclass(eq=False)
class Fragment(Node):
    """A warp-wide tile of a matrix held in the registers of the warp's lanes (``gk.fragment``):
    not a number (no expression reads it), named as an array is (``temp`` until bound)."""

    name: str
    type: FragmentType
    loc: Loc | None = _loc()
    temp: bool = field(default=False, kw_only=True)


class MatrixOp(Stmt):
    """A warp-collective statement on fragments (``gpukern.semantics.mma`` says what each means): every
    lane of the warp must execute it, with the same operands.  ``WHAT`` names its intrinsic."""

    WHAT = "a fragment operation"


@dataclass(eq=False)
class DeclFragment(MatrixOp):
    """The declaration of a fragment, hoisted to the top of its function as arrays are."""

    WHAT = "fragment()"  # the intrinsic, as messages name it
    CHILDREN = ("fragment",)
    fragment: Fragment
    loc: Loc | None = _loc()


@dataclass(eq=False)
class FillFragment(MatrixOp):
    """Every element of ``fragment`` set to ``value`` (float32, rounded to the fragment's type)."""

    WHAT = "fill_fragment()"  # the intrinsic, as messages name it
    CHILDREN = ("fragment", "value")
    fragment: Fragment
    value: Expr
    loc: Loc | None = _loc()


@dataclass(eq=False)
class FragmentElement(Expr):
    """``acc[i]``: element ``i`` of the calling thread's part of a warpgroup accumulator (float32;
    which element of the 64 x N tile it is: ``semantics.wgmma.position``)."""

    WHAT = "acc[i]"
    fragment: Fragment
    index: int
    type: ScalarType
    loc: Loc | None = _loc()
    CHILDREN = ("fragment",)


@dataclass(eq=False)
class SetFragmentElement(Stmt):
    """``acc[i] = value``: element ``i`` of the calling thread's part of a warpgroup accumulator.
    A thread's own registers: no warp takes part, so it may stand under any branch."""

    WHAT = "acc[i] = ..."
    CHILDREN = ("fragment", "value")
    fragment: Fragment
    index: int
    value: Expr
    loc: Loc | None = _loc()


@dataclass(eq=False)
class LoadMatrix(MatrixOp):
    """``fragment`` loaded from the tile of ``array`` whose first element is ``array[indices]``:
    element (r, c) of the tile is ``ldm`` elements per row (per column for a 'col' layout) on; on an
    array of 2 or more dimensions ``ldm`` is its last dimension, a row, so the tile is
    ``array[..., i + r, j + c]`` (``array[..., i + c, j + r]`` for 'col')."""

    WHAT = "load_matrix()"  # the intrinsic, as messages name it
    CHILDREN = ("fragment", "array", "indices", "ldm")
    fragment: Fragment
    array: ArrayRef
    indices: list[Expr]
    ldm: Expr
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (MemoryAccess(self.array, self.indices, True, False, None, TILE_ALIGNMENT),)


@dataclass(eq=False)
class StoreMatrix(MatrixOp):
    """An accumulator ``fragment`` stored to the tile of ``array`` at ``indices``, row-major, as
    ``LoadMatrix`` reads one; a warpgroup's, each element times ``scale`` (float32) where given and
    rounded once to the array's type (float32, bfloat16, float16)."""

    WHAT = "store_matrix()"  # the intrinsic, as messages name it
    CHILDREN = ("array", "indices", "ldm", "fragment", "scale")
    array: ArrayRef
    indices: list[Expr]
    ldm: Expr
    fragment: Fragment
    loc: Loc | None = _loc()
    scale: Expr | None = None

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (MemoryAccess(self.array, self.indices, False, True, None, TILE_ALIGNMENT),)


@dataclass(eq=False)
class Mma(MatrixOp):
    """``d = a @ b + c`` on the warp's matrix units (``d`` may be ``c``)."""

    WHAT = "mma()"  # the intrinsic, as messages name it
    CHILDREN = ("d", "a", "b", "c")
    d: Fragment
    a: Fragment
    b: Fragment
    c: Fragment
    loc: Loc | None = _loc()


class WarpgroupOp(MatrixOp):
    """A statement of sm_90's warpgroup matrix units (``gpukern.semantics.wgmma``): a kernel with one
    needs sm_90, its four warps a group executing it together."""


@dataclass(eq=False)
class WarpgroupMmaRegs(WarpgroupOp):
    """``d += P[:, 16 step : 16 step + 16] @ B`` with A from registers: columns of the warpgroup
    accumulator ``p`` rounded to B's type (float16 or bfloat16), each thread's own elements (their
    layout is the accumulator's: ``semantics.wgmma.position``), B read from shared array ``b`` as
    ``WarpgroupMma`` reads it.  Asynchronous as it is: ``p`` must not change before the wait."""

    WHAT = "wgmma()"
    CHILDREN = ("d", "p", "b", "b_at")
    d: Fragment
    p: Fragment
    step: int
    b: ArrayRef
    b_at: Expr
    b_width: int | None
    b_panel: int | None = None
    accumulate: bool = True  # False: d = A @ B, d's old values unread (PTX's scale-d 0)
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        return (MemoryAccess(self.b, [self.b_at], True, False, None, OPERAND_ALIGNMENT),)


@dataclass(eq=False)
class WarpgroupMma(WarpgroupOp):
    """``d += A @ B`` by the four warps of a warpgroup (sm_90's ``wgmma.mma_async``): A (64 x k) and
    B (k x n) read by the matrix units from shared arrays ``a`` and ``b``, their operands starting
    at elements ``a_at`` and ``b_at``, laid out as ``gpukern.semantics.wgmma`` says (``b_width``: B
    row-major in a tile that wide; ``b_panel``: in panels that tall; neither: stored transposed,
    K-major).  Asynchronous: the reads and the sum are done at the ``WgmmaWait`` that covers the
    group ``WgmmaCommit`` closes."""

    WHAT = "wgmma()"  # the intrinsic, as messages name it
    CHILDREN = ("d", "a", "a_at", "b", "b_at")
    d: Fragment
    a: ArrayRef
    a_at: Expr
    b: ArrayRef
    b_at: Expr
    b_width: int | None
    b_panel: int | None = None
    accumulate: bool = True  # False: d = A @ B, d's old values unread (PTX's scale-d 0)
    loc: Loc | None = _loc()

    def accesses(self) -> tuple[MemoryAccess, ...]:
        """The two operands read (by the matrix units, from their starts on: ``semantics.wgmma.operands``)."""
        return (
            MemoryAccess(self.a, [self.a_at], True, False, None, OPERAND_ALIGNMENT),
            MemoryAccess(self.b, [self.b_at], True, False, None, OPERAND_ALIGNMENT),
        )


@dataclass(eq=False)
class WgmmaCommit(WarpgroupOp):
    """``wgmma_commit()``: the warpgroup's wgmma's issued since its last commit form a group."""

    WHAT = "wgmma_commit()"
    loc: Loc | None = _loc()


@dataclass(eq=False)
class WgmmaWait(WarpgroupOp):
    """``wgmma_wait(pending)``: the warpgroup waits until at most ``pending`` of its committed groups
    are in flight: the others' operands have been read and their accumulators are done."""

    WHAT = "wgmma_wait()"
    pending: int
    loc: Loc | None = _loc()


@dataclass(eq=False)
class SetMaxNreg(WarpgroupOp):
    """``setmaxnreg_inc(count)`` / ``setmaxnreg_dec(count)``: the warpgroup's threads may use at most
    ``count`` registers from here on (``semantics.specialization``); it changes no value."""

    WHAT = "setmaxnreg()"
    count: int
    inc: bool
    loc: Loc | None = _loc()


# ---------------------------------------------------------------- functions
@dataclass(eq=False)
class KernelParam:
    """One C parameter of a kernel and which Python argument it is built from.

    ``kind`` is 'array' (the data pointer), 'shape' (``array.shape[dim]``), 'scalar', or
    'tensor_map' (a TMA descriptor of the array argument: ``map``).
    """

    kind: str
    name: str
    arg_index: int
    type: ScalarType | ArrayType
    dim: int = 0
    map: TensorMap | None = None


@dataclass(eq=False)
class FuncDef:
    """A kernel or a device function specialised for one set of argument types.

    ``locals`` are scalar variables declared at the top of the body (those not
    declared where first assigned); ``params`` are Var or ArrayRef.
    """

    name: str
    params: list[Var | ArrayRef]
    body: list[Stmt]
    ret: ScalarType | None
    is_kernel: bool
    locals: list[Var] = field(default_factory=list)
    kernel_params: list[KernelParam] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    loc: Loc | None = None
    description: str = ""
    launch_bounds: tuple[int, ...] | None = None  # (max threads per block[, min blocks per SM])
    cluster: tuple[int, int, int] | None = None  # the kernel's cluster shape (``cluster_dims``)
    # locals some paths leave unassigned that are only read as a shuffle's value (``if lane == 0:
    # v = x`` then ``shfl_sync(mask, v, 0)``): C declares them 0; the simulator checks the source lane set it
    partial: set[str] = field(default_factory=set)
    # locals that may hold None (Python's optional value: ``r = f(x)`` of a function returning None on
    # some paths, ``r = None``): each set only where it is not None (a ``partial`` local the simulator
    # checks), with what the program calls it and what makes it None, for the message
    nones: dict[str, tuple[str, str]] = field(default_factory=dict)
    # it returns None on some paths and a number on others: its C result is the pair (value, is-set)
    optional: bool = False


@dataclass(eq=False)
class Program:
    """A kernel and the device functions it calls (callees first), and the constant tables they
    read: a NumPy array of their module, copied when the kernel was compiled."""

    kernel: FuncDef
    funcs: list[FuncDef]
    tables: list[tuple[ArrayRef, Any]] = field(default_factory=list)  # (the array, its data)
    # device arrays of the kernel's module it reads or writes in place: (the kernel's parameter after
    # its own, the name), the array that name holds passed at every launch (``Variant.launch_args``)
    captured: list[tuple[ArrayRef, str]] = field(default_factory=list)
    lanes: int = 32  # the threads of a warp it is compiled for (semantics.values.Rules.lanes)


# ---------------------------------------------------------------- traversal
def children(node: Any) -> Iterator[Any]:
    """Direct sub-nodes of an IR node, statements and expressions alike."""
    for name in node.CHILDREN:
        value = getattr(node, name)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, Node))
        elif isinstance(value, Node):
            yield value


def _subnodes(node: Any) -> list[Any]:
    out: list[Any] = []
    for name in node.CHILDREN:
        value = getattr(node, name)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, Node))
        elif isinstance(value, Node):
            out.append(value)
    return out


def child_blocks(s: Stmt) -> list[list[Stmt]]:
    """The statement lists directly inside a statement (an if's branches, a loop's body)."""
    if isinstance(s, If):
        return [s.then, s.orelse]
    if isinstance(s, (For, While)):
        return [s.body]
    return []


def copy_tree(e: Any) -> Any:
    """An expression (or a list of them) as a tree of its own: a node stands in one place only, so an
    expression used twice is copied (arrays and callees, not expressions, are shared)."""
    if isinstance(e, list):
        return [copy_tree(v) for v in e]
    if not isinstance(e, Expr):
        return e
    return replace(e, **{name: copy_tree(getattr(e, name)) for name in e.CHILDREN})


def walk(node: Any) -> Iterator[Any]:
    """Every node under ``node`` (inclusive), depth first, parents before children, in order; does
    not enter callees.  A loop over a stack, not nested generators: every pass walks the IR."""
    return walk_body([node])


def walk_body(body: list[Any]) -> Iterator[Any]:
    stack = list(reversed(body))
    while stack:
        n = stack.pop()
        yield n
        if n.CHILDREN:
            sub = _subnodes(n)
            sub.reverse()
            stack.extend(sub)


def names_in(fd: FuncDef) -> set[str]:
    """Every variable, array and vector name a function uses (a fresh name must avoid them)."""
    out = {p.name for p in fd.params}
    out.update(n.name for n in walk_body(fd.body) if isinstance(n, (Var, ArrayRef, VecLoad, Fragment)))
    return out


def fresh_name(base: str, taken: set[str]) -> str:
    """A name for a compiler temporary that no name in ``taken`` uses (then added to it)."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


MAX_DEPTH = 1000  # deepest expression nesting the front end accepts (Python itself compiles deeper ones)


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Room for the recursion of every IR consumer over trees ``MAX_DEPTH`` deep (a few Python
    frames a level); Python-to-Python calls need no C stack since 3.11."""
    old = sys.getrecursionlimit()
    need = 10 * MAX_DEPTH + 2000
    if old < need:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if old < need:
            sys.setrecursionlimit(old)
