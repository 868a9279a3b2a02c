"""The table type of one C-like language's spellings.

CUDA C and OpenCL C differ only in spellings, so a language is a ``Dialect``: a table the
emitter reads (``codegen.dialects`` fills one per language).  The type stands apart from the
emitter so that the tables and the backends name it without importing the emitter's code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..types import ScalarType

DYNAMIC_BYTES = "gk_dynamic_bytes"  # the kernel parameter holding the launch's dynamic shared bytes
DYNAMIC_BUFFER = "gk_dynamic_shared"  # the dialects' name for that memory


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
    # a grid-wide barrier's statement and the file-scope code it calls (empty: the language has none)
    grid_sync: str = ""
    grid_sync_preamble: str = ""
    # without one, a kernel with grid barriers runs in phases (codegen.phases): the C that finds each
    # thread's linear id (gk_me), its group's (gk_group), its place in it (gk_lid) and the group's size
    # (gk_lsize); empty: such a kernel is refused
    phase_ids: str = ""
    # (op, width in bytes) -> the language extension its native instruction needs ('cas': the CAS loop too)
    atomic_extensions: dict[tuple[str, int], str] = field(default_factory=dict)
    # the unsigned integer a pointer converts to: an 8- or 16-bit atomic finds the aligned 32-bit word
    # holding its element from the element's address, and does a compare-and-swap loop on that word
    address_int: str = ""
    extension_pragma: str = ""  # '{name}': the line enabling an extension
    vector_types: dict[ScalarType, str] = field(default_factory=dict)  # element -> vector name stem ('float')
    vload: str = ""  # '{V}' vector type, '{n}' width, '{p}' address of the first element
    vstore: str = ""  # the same and '{values}'; a whole statement
    # vload/vstore of 2, 4 or 8 16-bit elements (half, bfloat16, int16, uint16): their bits moved as one
    # vector of 32-bit words, two elements each (``bits16_words``), or of 16-bit lanes.  The vector's
    # type ('{n}' elements, '{m}' words); an element of it, low half and high half of a word ('{v}' the
    # vector, '{k}' the element, '{c}' the word's component); the pointer (`{p}` the first element's
    # address, '{c}' 'const ' or not, '{q}' its qualifier); per element type, its value from its bits
    # and its bits from a value ('{0}')
    bits16_vector: str = ""
    bits16_lanes: tuple[str, str] = ("", "")
    bits16_pointer: str = "{p}"
    bits16_words: bool = False
    bits16_value: dict[ScalarType, str] = field(default_factory=dict)
    bits16_of: dict[ScalarType, str] = field(default_factory=dict)
    # inf and nan where float_specials are not constant expressions (a constant table's values)
    constant_specials: dict[tuple[str, ScalarType], str] = field(default_factory=dict)
    # specials read once at a function's top into a local, the local used after: PoCL 3.1 miscompiles
    # a loop with a barrier whose condition calls get_local_size() (the tree reduction gave 0)
    hoisted_specials: frozenset[str] = frozenset()
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
    # bytes gk_dynamic_shared, whose length in bytes the kernel gets as its last argument; '{align}':
    # the declaration's alignment in bytes (128; 1024 for wgmma's swizzled operands)
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

    # warp intrinsics: op (``semantics.warp.WARP_OPS``) -> format with {mask}, {0} {1} {2} (operands: a
    # shuffle's value, lane and width), {T} the value's type, {U} its unsigned type, {to} {from} its bits functions
    warp: dict[str, str] = field(default_factory=dict)
    warp_helpers: str = ""  # C functions the warp formats call, written once where a warp op is used
    # an emulation's ``{live}`` in the warp formats: the lanes taking part, those that exist
    # (``warp_live``), or where the op is predicated (``WarpOp.active``: frontend.predication) those
    # whose flag ``{0}`` holds (``warp_active``); empty: the dialect's warp ops need none
    warp_live: str = ""
    warp_active: str = ""
    # where not empty, warp ops are emulated through this work-group scratch array (declared at the top
    # of the kernel; '{n}': its length, the most threads a block may have), with work-group barriers:
    # every thread of the block calls each op (frontend.predication arranges it under branches only
    # some threads take), and they cannot be in a @func
    warp_scratch: str = ""
    warp_group_max: int = 0  # the most threads per block the emulation holds
    warp_emulation: str = ""  # what the emulation stands in for, for its error messages
    # block-wide votes: op (``semantics.warp.BLOCK_VOTES``) -> the statement, '{r}' the result variable, '{p}'
    # the predicate; where not empty, the scratch their emulation counts in (declared at the top of the
    # kernel; they cannot be in a @func)
    block_votes: dict[str, str] = field(default_factory=dict)
    block_vote_scratch: str = ""
    # the matrix units (gk.fragment, gk.mma, gk.wgmma...): per lowering (``semantics.mma.lowering``: 'wmma',
    # 'tf32'; ``semantics.wgmma.LOWERING``: 'wgmma') the spellings (keys: see codegen.dialects._CUDA_WMMA,
    # codegen.tf32, codegen.wgmma); where empty, ``matrix_missing`` names what the
    # language lacks, for the CompileError
    matrix: dict[str, dict[str, str]] = field(default_factory=dict)
    matrix_missing: str = ""
    # sm_90's mbarriers and TMA copies (``ir.Mbarrier``, ``ir.TmaLoad``, their fences): the spellings
    # (keys: see codegen.hopper); where empty, ``hopper_missing`` says why, for the CompileError
    hopper: dict[str, str] = field(default_factory=dict)
    hopper_missing: str = ""
