"""The one C-style emitter behind CUDA C and OpenCL C.

The two languages differ only in spellings -- qualifiers, the barrier, index
intrinsics, atomics, type and math names -- so each backend is a ``Dialect``
table and this module turns the typed IR into readable C with it: the user's
names, one statement per line, and the Python source line as a trailing comment.
What an operator means, and the C helper that implements it where C's own operator does
not, comes from ``gpukern.semantics.ops``.  Adding a C-like backend means writing one more table.

The expressions (``codegen.expressions``), the constant tables and record structs
(``codegen.tables``) and the atomics (``codegen.atomics``) are the classes this one builds on;
here are the program, its functions and their statements.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import CompileError
from ..frontend.passes import nonnegative_vars
from ..frontend.predication import predicate_warp_ops
from ..ir import nodes as ir
from ..semantics import formats, ops
from ..semantics import mma as mma_ops
from ..semantics import wgmma as wgmma_ops
from ..semantics.warp import BLOCK_VOTES
from ..types import ArrayType, BarrierType, FragmentType, RecordType, ScalarType, component, int64
from . import hopper as hopper_codegen
from . import lines as line_directives
from . import wgmma
from .atomics import AtomicEmitter
from .dialect import DYNAMIC_BUFFER, DYNAMIC_BYTES
from .expressions import ATOM, PREC, TERNARY
from .names import c_identifier, global_identifier
from .phases import PhaseEmitter
from .phases import plan as phase_plan
from .tables import TableEmitter, record_names


def uses_dynamic_shared(fd: ir.FuncDef) -> bool:
    """Whether a kernel declares dynamic_shared() arrays (their declarations lead its body)."""
    return any(isinstance(s, ir.DeclArray) and s.array.type.shape is None for s in fd.body)


MAX_PRAGMA_UNROLL = 64
# what a dialect without sm_90's machinery refuses, by IR node (the rest: mbarriers and TMA copies)
_HOPPER_NAMES = {
    "NamedBarrier": "named barriers (named_barrier, named_barrier_arrive)",
    "Elect": "elect_one()",
    "SetMaxNreg": "setmaxnreg",
    "BulkCopy": "bulk copies (bulk_load, bulk_store)",
    "FuncDef": "thread-block clusters (cluster_dims)",
    "ClusterInfo": "thread-block clusters (cluster_rank, cluster_size)",
    "Barrier": "cluster_barrier()",
    "ArrayRef": "distributed shared memory (peer)",
    "StoreAsync": "asynchronous stores into a cluster's shared memory (store_async)",
}


def _trip_count(s: ir.For) -> float:
    """Iterations of a loop whose bounds are literals (infinite when they are not)."""
    if not all(isinstance(e, ir.Lit) for e in (s.start, s.stop, s.step)) or s.step.value == 0:
        return math.inf
    return len(range(s.start.value, s.stop.value, s.step.value))


class Emitter(TableEmitter, AtomicEmitter, PhaseEmitter):
    """Renders an ``ir.Program`` as C in one dialect."""

    # ------------------------------------------------------------ program
    def program(self, prog: ir.Program) -> str:
        """The C of ``prog`` as compiled: with ``#line`` directives to its Python lines
        (``codegen.lines.strip`` gives the text shown)."""
        if self.d.warp_scratch:  # warps emulated: warp ops under divergent branches run predicated
            predicated = predicate_warp_ops(prog.kernel)
            if predicated is not None:
                prog = replace(prog, kernel=predicated)
        self.phases = None
        if not self.d.grid_sync and self.d.phase_ids:  # grid barriers: the kernel runs in phases
            for fd in prog.funcs:
                self._no_grid_sync_in(fd)
            self.phases = phase_plan(prog.kernel, self.d.name)
        func_names = self._function_names(prog)
        fds = prog.funcs + [prog.kernel]
        # an access needing more than its element's alignment (a vector, a copy; in the kernel or a
        # helper) has shared and local arrays declared 16-byte aligned; a fragment operation, more
        self.overaligned = any(a.overaligned for fd in fds for n in ir.walk_body(fd.body) for a in n.accesses())
        kinds = {type(n) for fd in fds for n in ir.walk_body(fd.body)}  # (the program's node types, once)
        self.matrix = any(issubclass(k, ir.MatrixOp) for k in kinds)
        self.wgmma = any(issubclass(k, ir.WarpgroupOp) for k in kinds)
        self.tma = bool(kinds & {ir.TmaLoad, ir.TmaStore})
        # shared memory read or written through the async proxy: the matrix units', TMA's, bulk copies'
        self.async_proxy = self.wgmma or self.tma or ir.BulkCopy in kinds
        self.cluster_waits = ir.StoreAsync in kinds  # (its mbarrier waits acquire what peers stored)
        self.program = prog
        self.tables = self._table_names(prog, func_names)
        self.records = record_names(prog)
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

    def _function_names(self, prog: ir.Program) -> dict[int, str]:
        names: dict[int, str] = {}
        used = {global_identifier(prog.kernel.name)}
        for fd in prog.funcs:
            base = global_identifier(fd.name)
            cname, n = base, 1
            while cname in used:
                n += 1
                cname = f"{base}_{n}"
            used.add(cname)
            names[id(fd)] = cname
        names[id(prog.kernel)] = global_identifier(prog.kernel.name)
        return names

    # ------------------------------------------------------------ functions
    def function(self, fd: ir.FuncDef, func_names: dict[int, str]) -> str:
        self.func_names = func_names
        self.phasing = fd.is_kernel and self.phases is not None
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
            if self.phases is not None:
                params += self.phase_params()
            prefix = self.d.kernel_prefix
            if fd.launch_bounds and self.d.launch_bounds:
                bounds = fd.launch_bounds
                prefix += " " + self.d.launch_bounds.format(args=", ".join(map(str, bounds)), threads=bounds[0])
            if fd.cluster is not None:
                x, y, z = fd.cluster
                prefix += " " + self.hopper(fd)["cluster_dims"].format(x=x, y=y, z=z)
            head = f"{prefix} void {func_names[id(fd)]}({', '.join(params)})"
        else:
            params = []
            for p in fd.params:
                params += self.func_param(p, fd)
            ret = self.type(fd.ret) if fd.ret is not None else "void"
            head = f"{self.d.func_prefix}{ret} {func_names[id(fd)]}({', '.join(params) or 'void'})"
        lines = [head, "{"]
        if dynamic and self.d.dynamic_shared_decl:
            align = wgmma_ops.ATOM_BYTES if self.wgmma else 128
            lines.append(f"    {self.d.dynamic_shared_decl.format(align=align)}")
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
        lines += [f"    {line}" for line in self.special_locals(fd)]
        for v in fd.locals:
            zero = " = 0" if v.name in fd.partial else ""  # (set on some paths only: read as a shuffle's value)
            lines.append(f"    {self.type(v.type)} {self.name(v.name)}{zero};")
        if fd.is_kernel and self.phases is not None:
            lines += [f"    {line}" for line in self.phase_declarations(fd)]
            lines += self.phased_body(fd, 1)
        else:
            lines += self.block(fd.body, 1)
        lines.append("}")
        return "\n".join(lines)

    def _no_grid_sync_in(self, fd: ir.FuncDef) -> None:
        """A @func's grid barrier cannot be one where the kernel runs in phases (no call resumes)."""
        for n in ir.walk_body(fd.body):
            if isinstance(n, ir.Barrier) and n.scope == "grid":
                raise CompileError(
                    f"grid_sync() in a @func cannot be compiled to {self.d.name}: it runs a kernel with grid "
                    "barriers in phases, a launch each, which resume in the kernel's own body only",
                    n.loc,
                    "call grid_sync() in the kernel, or run on CUDA or the simulator",
                )

    def _reserve_names(self, fd: ir.FuncDef) -> None:
        taken = set(self.func_names.values()) | set(self.tables.values())
        self.names.update(self.tables)
        pyname_nodes = [p for p in fd.params] + [
            n
            for n in ir.walk_body(fd.body)
            if isinstance(n, (ir.Var, ir.ArrayRef, ir.VecLoad, ir.Fragment, ir.TensorMap))
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

    def kernel_param(self, p: ir.KernelParam, fd: ir.FuncDef) -> str:
        if p.kind == "array":
            assert isinstance(p.type, ArrayType)
            return self.global_param(p.name, p.type, fd)
        if p.kind == "shape":
            ref = ir.ArrayRef(p.name, p.type)  # type: ignore[arg-type]
            return f"{self.type(int64)} {self.shape_name(ref, p.dim)}"
        if p.kind == "tensor_map":
            return self.hopper(p.map)["map_param"].format(name=self.name(p.name))
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
        for i, s in enumerate(stmts):
            self.previous = stmts[i - 1] if i else None  # (a run of wgmma's is fenced once)
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
        if isinstance(t.elem, BarrierType):
            self.hopper(s)  # (mbarriers only where the dialect has them: a CompileError at the line else)
        qual = self.d.qualifiers[t.space]
        if (self.wgmma or self.tma) and t.space == "shared":  # wgmma's operands, TMA's boxes: 1024-byte swizzled atoms
            qual += self.d.align.format(n=wgmma_ops.ATOM_BYTES)
        elif self.matrix:  # fragments need a tile's first element 256-bit aligned (ir.TILE_ALIGNMENT)
            qual += self.d.align.format(n=ir.TILE_ALIGNMENT)
        elif self.overaligned:
            qual += self.d.align.format(n=16)
        dims = "".join(f"[{n}]" for n in t.shape or ())
        return [self.line(depth, f"{qual}{self.storage(t.elem)} {self.name(s.array.name)}{dims};", s)]

    def stmt_Assign(self, s: ir.Assign, depth: int) -> list[str]:
        target, v = self.name(s.target.name), s.value
        if s.declare and not self.declared_at_top(s.target.name):
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
        copied = s.copied()
        if fmt is not None and copied is not None:  # an element stored as bits: its bits (ir.Store.copied)
            return [self.line(depth, f"{target} = {self.element(copied.array, copied.indices)};", s)]
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

    # ------------------------------------------------------------ matrix units (gpukern.language.mma)
    def matrix_table(self, node: ir.Node, t: FragmentType | None) -> dict[str, str]:
        """The dialect's spellings for fragments of type ``t`` (its lowering's table, whose preamble
        the kernel then includes; None: a warpgroup statement's, which names no fragment); a
        CompileError where the dialect has no matrix units."""
        if not self.d.matrix:
            what, where = (
                ("gk.wgmma() and its commit and wait", "sm_90a")
                if t is None or wgmma_ops.is_warpgroup(t)
                else ("gk.fragment() and gk.mma()", "sm_70 and later; bfloat16 and TF32 sm_80")
            )
            raise CompileError(
                f"{what} cannot be compiled to {self.d.name}: they need {self.d.matrix_missing}",
                node.loc,
                f"run the kernel on CUDA ({where}) or on the simulator",
            )
        table = self.d.matrix[wgmma_ops.LOWERING if t is None else mma_ops.lowering(t)]
        self.preambles.setdefault(table["preamble"], None)
        return table

    @staticmethod
    def value_precision(t: FragmentType) -> str:
        """What a fragment's elements are spelt as: its input precision, float32 for an accumulator."""
        return mma_ops.precision(t) if t.use != "accumulator" else "float32"

    def stmt_DeclFragment(self, s: ir.DeclFragment, depth: int) -> list[str]:
        t = s.fragment.type
        m = self.matrix_table(s, t)
        T = m.get("type:" + self.value_precision(t), "")  # (a table of one type's own structs has none)
        layout = m.get("layout:" + t.layout, "") if t.layout else ""
        text = m["fragment"].format(
            use=m["use:" + t.use], m=t.m, n=t.n, k=t.k, T=T, layout=layout, name=self.name(s.fragment.name)
        )
        return [self.line(depth, text, s)]

    def expr_FragmentElement(self, e: ir.FragmentElement) -> tuple[str, int]:
        m = self.matrix_table(e, e.fragment.type)
        return m["element"].format(f=self.name(e.fragment.name), i=e.index), ATOM

    def stmt_SetFragmentElement(self, s: ir.SetFragmentElement, depth: int) -> list[str]:
        m = self.matrix_table(s, s.fragment.type)
        target = m["element"].format(f=self.name(s.fragment.name), i=s.index)
        return [self.line(depth, f"{target} = {self.expr(s.value)};", s)]

    def stmt_FillFragment(self, s: ir.FillFragment, depth: int) -> list[str]:
        t = s.fragment.type
        m = self.matrix_table(s, t)
        v = m["value:" + self.value_precision(t)].format(self.expr(s.value))
        return [self.line(depth, m["fill"].format(f=self.name(s.fragment.name), v=v), s)]

    def tile_pointer(self, m: dict[str, str], array: ir.ArrayRef, indices: list[ir.Expr]) -> str:
        return f"{m.get('pointer:' + array.type.elem.name, '')}&{self.element(array, indices)}"

    def stmt_LoadMatrix(self, s: ir.LoadMatrix, depth: int) -> list[str]:
        t, f = s.fragment.type, self.name(s.fragment.name)
        m = self.matrix_table(s, t)
        if t.use == "accumulator":
            key = "load_accumulator"
        elif mma_ops.by_ldmatrix(t, s.array.type.space) and "load_ldmatrix" in m:  # (wmma chooses itself)
            key = "load_ldmatrix"
        else:
            key = "load"
        p, col = self.tile_pointer(m, s.array, s.indices), str(t.layout == "col").lower()
        return [self.line(depth, m[key].format(f=f, p=p, ldm=self.expr(s.ldm), col=col), s)]

    def stmt_StoreMatrix(self, s: ir.StoreMatrix, depth: int) -> list[str]:
        m = self.matrix_table(s, s.fragment.type)
        p, f = self.tile_pointer(m, s.array, s.indices), self.name(s.fragment.name)
        elem = s.array.type.elem.name
        key = f"store:{elem}" if elem != "float32" else "store:scaled" if s.scale is not None else "store"
        if f"store_preamble:{key[6:]}" in m:  # (a warpgroup's rounded or scaled store: its helper)
            self.preambles.setdefault(m[f"store_preamble:{key[6:]}"], None)
        scale = self.expr(s.scale) if s.scale is not None else "1.0f"
        return [self.line(depth, m[key].format(p=p, f=f, ldm=self.expr(s.ldm), scale=scale), s)]

    def stmt_Mma(self, s: ir.Mma, depth: int) -> list[str]:
        names = {k: self.name(getattr(s, k).name) for k in "dabc"}
        return [self.line(depth, self.matrix_table(s, s.a.type)["mma"].format(**names), s)]

    def stmt_WarpgroupMma(self, s: ir.WarpgroupMma, depth: int) -> list[str]:
        t, elem = s.d.type, s.a.type.elem
        m = self.matrix_table(s, t)
        row_major = s.b_width is not None or s.b_panel is not None
        name = wgmma.helper_name(elem.name, t.n, row_major)
        self.helpers.setdefault(name, wgmma.mma_helper(elem.name, t.n, row_major))
        lbo, sbo = wgmma_ops.b_strides(s.b_width, s.b_panel, elem.itemsize)
        a, b = (f"&{self.element(x, [at])}" for x, at in ((s.a, s.a_at), (s.b, s.b_at)))
        d, acc = self.name(s.d.name), int(s.accumulate)
        text = m["mma_async"].format(name=name, d=d, a=a, b=b, lbo=lbo, sbo=sbo, acc=acc)
        if not isinstance(self.previous, (ir.WarpgroupMma, ir.WarpgroupMmaRegs)):
            text = f"{m['fence']} {text}"
        return [self.line(depth, text, s)]

    def stmt_WarpgroupMmaRegs(self, s: ir.WarpgroupMmaRegs, depth: int) -> list[str]:
        """A from registers: the eight floats of step ``s.step`` of accumulator ``s.p`` (their pairs
        rounded to B's type in the helper)."""
        t, elem = s.d.type, s.b.type.elem
        m = self.matrix_table(s, t)
        row_major = s.b_width is not None or s.b_panel is not None
        name = wgmma.regs_helper_name(elem.name, t.n, row_major)
        self.helpers.setdefault(name, wgmma.regs_helper(elem.name, t.n, row_major))
        self.preambles.setdefault(wgmma.NARROW[elem.name][0])
        lbo, sbo = wgmma_ops.b_strides(s.b_width, s.b_panel, elem.itemsize)
        p = self.name(s.p.name)
        floats = ", ".join(m["element"].format(f=p, i=8 * s.step + i) for i in range(8))
        b = f"&{self.element(s.b, [s.b_at])}"
        text = f"{name}({self.name(s.d.name)}, {floats}, {b}, {lbo}, {sbo}, {int(s.accumulate)});"
        if not isinstance(self.previous, (ir.WarpgroupMma, ir.WarpgroupMmaRegs)):
            text = f"{m['fence']} {text}"
        return [self.line(depth, text, s)]

    def stmt_WgmmaCommit(self, s: ir.WgmmaCommit, depth: int) -> list[str]:
        return [self.line(depth, self.matrix_table(s, None)["commit"], s)]

    def stmt_WgmmaWait(self, s: ir.WgmmaWait, depth: int) -> list[str]:
        return [self.line(depth, self.matrix_table(s, None)["wait"].format(n=s.pending), s)]

    def vector_type(self, t: ScalarType, n: int) -> str:
        return f"{self.d.vector_types[t]}{n}"

    def bits16_vector(self, array: ir.ArrayRef, indices: list[ir.Expr], width: int, const: str) -> tuple[str, str, int]:
        """16-bit elements moved as one vector of their bits: its type, the pointer, its length."""
        words = self.d.bits16_words
        V = self.d.bits16_vector.format(n=width, m=width // 2)
        q = self.d.pointer_spaces.get(array.type.space, "")
        p = self.d.bits16_pointer.format(p=f"&{self.element(array, indices)}", c=const, q=q)
        return V, p, width // 2 if words else width

    def stmt_VecLoad(self, s: ir.VecLoad, depth: int) -> list[str]:
        if s.array.type.elem.itemsize == 2:  # half, bfloat16, int16, uint16: the bits (expr_Lane converts)
            V, p, n = self.bits16_vector(s.array, s.indices, s.width, "const ")
            self.bits16[s.name] = s.array.type.elem
        else:
            V, p, n = self.vector_type(s.array.type.elem, s.width), f"&{self.element(s.array, s.indices)}", s.width
        load = self.d.vload.format(V=V, n=n, p=p)
        return [self.line(depth, f"const {V} {self.name(s.name)} = {load};", s)]

    def stmt_VecStore(self, s: ir.VecStore, depth: int) -> list[str]:
        elem = s.array.type.elem
        if elem.itemsize == 2:  # the values' bits, packed two to a word where the dialect moves words
            bits = [self.support(self.d.bits16_of[elem].format(self.expr(v))) for v in s.values]
            if self.d.bits16_words:
                bits = [f"((unsigned int){a} | ((unsigned int){b} << 16))" for a, b in zip(bits[::2], bits[1::2])]
            V, p, n = self.bits16_vector(s.array, s.indices, s.width, "")
            values = ", ".join(bits)
        else:
            values = ", ".join(self.expr(v) for v in s.values)
            V, p, n = self.vector_type(elem, s.width), f"&{self.element(s.array, s.indices)}", s.width
        return [self.line(depth, self.d.vstore.format(V=V, n=n, p=p, values=values), s)]

    def stmt_ExprStmt(self, s: ir.ExprStmt, depth: int) -> list[str]:
        return [self.line(depth, f"{self.expr(s.value)};", s)]

    def stmt_Print(self, s: ir.Print, depth: int) -> list[str]:
        """One printf: the texts as its format (``%`` doubled), a conversion per value."""
        fmt, args = [formats.c_string(s.texts[0])], []
        for v, text in zip(s.values, s.texts[1:]):
            f = formats.print_format(v.type)
            length = self.d.print_lengths.get(component(v.type).kind, "")  # a complex number's: its parts'
            spec = f.spec[:-1] + length + f.spec[-1] if f.wide else f.spec
            fmt.append(f"{f.template.format(spec=spec)}{formats.c_string(text)}")
            value = ir.Cast(v, f.cast, loc=v.loc) if f.cast is not None and f.cast != v.type else v
            args.append(f.c_arg.format(self.expr(value, TERNARY + 1)))
        return [self.line(depth, self.d.print_call.format(args=", ".join([f'"{"".join(fmt)}"', *args])), s)]

    def stmt_Barrier(self, s: ir.Barrier, depth: int) -> list[str]:
        # threads' shared accesses (the generic proxy) ordered before what the barrier lets happen next
        # through the async proxy -- wgmma's reads, a TMA or bulk copy's reads and writes (its refill of
        # a buffer just read) -- as PTX's memory model asks (a dialect without them refuses them at the
        # statement itself, not here)
        fence = self.hopper(s)["fence:proxy_async"] + " " if self.async_proxy and self.d.hopper else ""
        if s.scope == "cluster":
            return [self.line(depth, fence + self.hopper(s)["cluster_sync"], s)]
        if s.scope == "grid":
            if not self.d.grid_sync:
                raise CompileError(
                    f"grid_sync() cannot be compiled to {self.d.name}: it has no barrier across work-groups",
                    s.loc,
                    "end the kernel there and launch a second one for the rest (a launch boundary syncs the "
                    "grid), or run on CUDA or the simulator",
                )
            self.preambles.setdefault(self.d.grid_sync_preamble)
            return [self.line(depth, fence + self.d.grid_sync, s)]
        if s.vote is None or s.pred is None or s.result is None:
            return [self.line(depth, fence + self.d.barrier, s)]
        text = self.d.block_votes[s.vote].format(r=self.name(s.result.name), p=self.expr(s.pred))
        return [self.line(depth, fence + self.support(text), s)]

    def stmt_Fence(self, s: ir.Fence, depth: int) -> list[str]:
        if s.scope in self.d.fences:
            return [self.line(depth, self.d.fences[s.scope], s)]
        return [self.line(depth, self.hopper(s)[f"fence:{s.scope}"], s)]

    # ------------------------------------------------------------ mbarriers and TMA (gpukern.language.hopper)
    def hopper(self, node: ir.Node) -> dict[str, str]:
        """The dialect's spellings of sm_90's machinery (mbarriers, TMA, warp specialization), their
        helpers included; a CompileError naming the construct where it has none."""
        if not self.d.hopper:
            what = _HOPPER_NAMES.get(type(node).__name__, "mbarriers and TMA copies")
            raise CompileError(
                f"{what} cannot be compiled to {self.d.name}: it needs {self.d.hopper_missing}",
                node.loc,
                "run the kernel on CUDA (sm_90) or on the simulator",
            )
        self.preambles.setdefault(self.d.hopper["preamble"], None)
        return self.d.hopper

    def tma_copy(self, node: ir.TmaLoad | ir.TmaStore, key: str, **operands: str) -> str:
        """A TMA copy's statement (``key``: 'tma_load' or 'tma_store'): the box's rank, its
        descriptor, its first element's coordinates innermost first (as PTX takes them)."""
        table = self.hopper(node)
        if len(node.coords) > hopper_codegen.MAX_RANK:
            raise CompileError(
                f"{key}() of a {len(node.coords)}-dimensional box: gpukern's CUDA copies boxes of 1 to "
                f"{hopper_codegen.MAX_RANK} dimensions",
                node.loc,
            )
        coords = ", ".join(self.expr(c) for c in reversed(node.coords))
        return table[key].format(rank=len(node.coords), map=self.name(node.map.name), coords=coords, **operands)

    def stmt_TmaLoad(self, s: ir.TmaLoad, depth: int) -> list[str]:
        d, b = f"&{self.element(s.dst, s.dst_indices)}", f"&{self.element(s.bar, s.bar_indices)}"
        if s.multicast is not None:
            return [self.line(depth, self.tma_copy(s, "tma_load_mc", d=d, b=b, mask=self.expr(s.multicast)), s)]
        return [self.line(depth, self.tma_copy(s, "tma_load", d=d, b=b), s)]

    def stmt_BulkCopy(self, s: ir.BulkCopy, depth: int) -> list[str]:
        d, src = f"&{self.element(s.dst, s.dst_indices)}", f"&{self.element(s.src, s.src_indices)}"
        size = s.dst.type.elem.itemsize
        nbytes = f"{self.expr(s.count, PREC['*'])} * {size}u" if size != 1 else self.expr(s.count)
        if s.bar is None:
            return [self.line(depth, self.hopper(s)["bulk_store"].format(d=d, s=src, bytes=nbytes), s)]
        b = f"&{self.element(s.bar, s.bar_indices)}"
        return [self.line(depth, self.hopper(s)["bulk_load"].format(d=d, s=src, bytes=nbytes, b=b), s)]

    def stmt_StoreAsync(self, s: ir.StoreAsync, depth: int) -> list[str]:
        table = self.hopper(s)
        rank = self.expr(s.dst.peer) if s.dst.peer is not None else table["rank"]
        d = self.element(replace(s.dst, peer=None), s.dst_indices)  # (mapped into block rank)
        b = self.element(replace(s.bar, peer=None), s.bar_indices)
        values = ", ".join(self.expr(v) for v in s.values)
        return [self.line(depth, table["store_async"].format(d=d, rank=rank, b=b, values=values), s)]

    def stmt_TmaStore(self, s: ir.TmaStore, depth: int) -> list[str]:
        return [self.line(depth, self.tma_copy(s, "tma_store", s=f"&{self.element(s.src, s.src_indices)}"), s)]

    def stmt_BulkCommit(self, s: ir.BulkCommit, depth: int) -> list[str]:
        return [self.line(depth, self.hopper(s)["bulk_commit"], s)]

    def stmt_BulkWait(self, s: ir.BulkWait, depth: int) -> list[str]:
        key = "bulk_wait_read" if s.read else "bulk_wait"
        return [self.line(depth, self.hopper(s)[key].format(n=s.pending), s)]

    def stmt_NamedBarrier(self, s: ir.NamedBarrier, depth: int) -> list[str]:
        text = self.hopper(s)["named_sync" if s.wait else "named_arrive"]
        return [self.line(depth, text.format(id=self.expr(s.id), count=self.expr(s.count)), s)]

    def stmt_SetMaxNreg(self, s: ir.SetMaxNreg, depth: int) -> list[str]:
        return [self.line(depth, self.hopper(s)["setmaxnreg_inc" if s.inc else "setmaxnreg_dec"].format(n=s.count), s)]

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

    def for_condition(self, s: ir.For) -> str:
        v, stop = self.name(s.var.name), self.expr(s.stop, PREC["<"] + 1)
        if s.step_sign > 0:
            return f"{v} < {stop}"
        if s.step_sign < 0:
            return f"{v} > {stop}"
        step = self.expr(s.step, PREC[">"] + 1)
        return f"({step} > 0 ? {v} < {stop} : {v} > {stop})"

    def for_increment(self, s: ir.For) -> str:
        v = self.name(s.var.name)
        if isinstance(s.step, ir.Lit) and s.step.value in (1, -1):
            return f"{v}++" if s.step.value == 1 else f"{v}--"
        return f"{v} += {self.expr(s.step)}"

    def stmt_For(self, s: ir.For, depth: int) -> list[str]:
        v = self.name(s.var.name)
        declare = s.declare and not self.declared_at_top(s.var.name)
        init = f"{self.type(s.var.type) + ' ' if declare else ''}{v} = {self.expr(s.start)}"
        cond, inc = self.for_condition(s), self.for_increment(s)
        out = [self.line(depth, f"for ({init}; {cond}; {inc}) {{", s)]
        if self.d.unroll_pragma and _trip_count(s) <= MAX_PRAGMA_UNROLL:
            out.insert(0, "    " * depth + self.d.unroll_pragma)
        return out + self.block(s.body, depth + 1) + ["    " * depth + "}"]
