"""A kernel variant: one specialisation's typed IR, and its C source per dialect.

Below the kernel layer and the runtimes alike: a backend compiles a ``Variant`` and
keeps the binary in ``compiled``; ``gpukern.kernel`` makes variants.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..codegen import lines
from ..codegen.dialects import dialect
from ..codegen.emitter import Emitter
from ..errors import CompileError, LaunchError
from ..ir import nodes as ir
from ..semantics import mma as mma_ops
from .compile_options import CompileOptions
from .plan import TupleKey, array_facts, flatten


@dataclass(eq=False)
class Variant:
    """One specialisation of a kernel: its IR, and its source per C dialect."""

    kernel: Any  # the gpukern.kernel.Kernel it specialises
    key: tuple[Any, ...]
    program: ir.Program
    arg_types: tuple[Any, ...]  # per parameter: ArrayType, ScalarType, or ('const', value)
    sources: dict[str, str] = field(default_factory=dict)  # per dialect: the C as compiled (with #line)
    # per dialect: the language extensions its source enables, each with the first node needing it
    extensions: dict[str, dict[str, ir.Node]] = field(default_factory=dict)
    # per backend key: its loaded binary (a CUDA function, an OpenCL kernel), and what lives as long
    # as that does under (key, what): (key, "lock") the lock of an OpenCL kernel's argument slots
    compiled: dict[Any, Any] = field(default_factory=dict)
    # per (backend key, grid, block, dynamic shared bytes): the backend's launcher (``Backend.launcher``)
    launchers: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    options: CompileOptions = field(default_factory=CompileOptions)  # the kernel's: what it is compiled with
    # per dialect: where it has no grid barrier, the scratch a kernel with grid_sync() run in phases
    # needs (codegen.phases.Layout), else None
    phase_layouts: dict[str, Any] = field(default_factory=dict)

    @property
    def kernel_params(self) -> list[ir.KernelParam]:
        return self.program.kernel.kernel_params

    def launch_args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """What the backends take for a launch's arguments: tuples opened into their items
        (``plan.flatten``) and, after them, the device arrays the kernel's module names
        (``ir.Program.captured``), each as its name holds it now: a kernel reads a module's array
        in place, as Numba's do, on whichever backend the launch runs."""
        if self.tuples:  # each tuple's items are C parameters of their own
            args = flatten(args, self.key)
        if not self.program.captured:
            return args
        extra = []
        for ref, name in self.program.captured:
            found, value = self.kernel.parsed.resolve_global(name)
            try:
                dtype, shape = array_facts(value, name) if found else (None, ())
            except LaunchError:
                dtype, shape = None, ()
            if dtype != ref.type.elem.dtype or len(shape) != ref.type.ndim:
                now = f"{type(value).__name__}" if found else "nothing"
                raise LaunchError(
                    f"{self.kernel.__name__} reads the device array {name!r} of its module, compiled as "
                    f"{ref.type}; {name} now holds {now}: give it an array of that dtype and rank"
                )
            extra.append(value)
        return (*args, *extra)

    @property
    def written(self) -> set[str]:
        return self.program.kernel.written

    @functools.cached_property
    def tuples(self) -> bool:
        """Whether an argument is a tuple: the arguments are then flattened for the backends
        (``plan.flatten``), and launches take the checked path (no plan)."""
        return any(isinstance(k, TupleKey) for k in self.key)

    @functools.cached_property
    def grid_sync(self) -> bool:
        """Whether the kernel (or a function it calls) has a ``grid_sync()``: a cooperative launch."""
        return any(
            isinstance(n, ir.Barrier) and n.scope == "grid"
            for fd in [self.program.kernel, *self.program.funcs]
            for n in ir.walk_body(fd.body)
        )

    @functools.cached_property
    def shared_bytes(self) -> int:
        """Static shared memory per block, in bytes."""
        return sum(
            int(np.prod(s.array.type.shape)) * s.array.type.elem.itemsize
            for s in self.program.kernel.body
            if isinstance(s, ir.DeclArray) and s.array.type.space == "shared" and s.array.type.shape is not None
        )

    @functools.cached_property
    def dynamic_shared(self) -> tuple[ir.ArrayRef, ...]:
        """The kernel's dynamic_shared() arrays (each from byte 0 of the launch's dynamic shared memory)."""
        return tuple(
            s.array
            for s in self.program.kernel.body
            if isinstance(s, ir.DeclArray) and s.array.type.space == "shared" and s.array.type.shape is None
        )

    @functools.cached_property
    def uses_warp_ops(self) -> bool:
        """Whether the kernel or a function it calls uses a warp intrinsic (``ir.WarpOp``)."""
        fds = [self.program.kernel, *self.program.funcs]
        return any(isinstance(n, ir.WarpOp) for fd in fds for n in ir.walk_body(fd.body))

    @functools.cached_property
    def matrix_capability(self) -> mma_ops.Capability | None:
        """The least CUDA compute capability the kernel's fragments and warpgroup statements need
        (a wgmma commit or wait without a fragment too: sm_90a, exactly) and why
        (``semantics.mma.capability``), or None."""
        fds = [self.program.kernel, *self.program.funcs]
        nodes = [n for fd in fds for n in ir.walk_body(fd.body)]
        warpgroup = any(isinstance(n, ir.WarpgroupOp) for n in nodes)  # (a commit or wait alone too)
        types = [n.fragment.type for n in nodes if isinstance(n, ir.DeclFragment)]
        return mma_ops.capability(types, warpgroup) if types or warpgroup else None

    @functools.cached_property
    def vector_alignment(self) -> dict[str, int]:
        """Per array parameter accessed more than an element at a time (vectors, copies, fragment
        tiles), the byte alignment its data must have."""
        return _vector_alignment(self.program.kernel)

    def about(self, backend: str) -> dict[str, str]:
        """What a cached binary of this variant holds, for ``gpukern cache list``: the kernel (with
        its constants), ``backend`` (which one, for which device) and the Python file and line."""
        k = self.program.kernel
        where = f"{k.loc.filename}:{k.loc.lineno}" if k.loc is not None else ""
        return {"kernel": k.description or k.name, "backend": backend, "source": where}

    def source(self, backend: str, line_directives: bool = False) -> str:
        """The C of ``backend``'s dialect: as compiled, with ``#line`` directives naming the Python
        lines (``line_directives``), else as shown to people, without them."""
        if self.program.lanes != 32:
            raise CompileError(
                f"{self.kernel.__name__}: this variant is compiled for the simulator's 64-lane wavefronts "
                "(GPUKERN_SIM_LANES=64), which no C dialect runs; the compiled languages' warps are 32 lanes"
            )
        if backend not in self.sources:
            emitter = Emitter(dialect(backend))
            with ir.deep_recursion():
                self.sources[backend] = emitter.program(self.program)
            self.extensions[backend] = emitter.extensions
            self.phase_layouts[backend] = emitter.phases.layout if emitter.phases is not None else None
        return self.sources[backend] if line_directives else lines.strip(self.sources[backend])


def _vector_alignment(fd: ir.FuncDef) -> dict[str, int]:
    """Per global array of ``fd``, the widest alignment its accesses need beyond the element's
    (``ir.MemoryAccess.overaligned``: vectors, asynchronous copies' sources, fragment tiles; through its
    callees too)."""
    out: dict[str, int] = {}
    for n in ir.walk_body(fd.body):
        for a in n.accesses():
            if a.overaligned and a.array.type.space == "global":
                out[a.array.name] = max(out.get(a.array.name, 0), a.aligned_bytes)
        if isinstance(n, ir.Call):
            inner = _vector_alignment(n.func)
            for param, arg in zip(n.func.params, n.args):
                if isinstance(arg, ir.ArrayRef) and param.name in inner:
                    out[arg.name] = max(out.get(arg.name, 0), inner[param.name])
    return out
