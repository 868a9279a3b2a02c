"""Constant tables and record structs: the C the emitter writes at file scope, before the functions.

A module-level NumPy array a kernel reads becomes a constant table with its values; a record
dtype becomes a struct whose members sit at the dtype's offsets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ir import nodes as ir
from ..types import RecordType, ScalarType, component
from .expressions import ExpressionEmitter
from .names import c_identifier, global_identifier


class TableEmitter(ExpressionEmitter):
    """The declarations of a program's constant tables and record structs."""

    tables: dict[str, str]  # a table's Python name -> its C name

    @staticmethod
    def _table_names(prog: ir.Program, func_names: dict[int, str]) -> dict[str, str]:
        """C names of the constant tables, at file scope beside the functions."""
        used, out = set(func_names.values()), {}
        for ref, _ in prog.tables:
            cname = global_identifier(ref.name)
            while cname in used:
                cname += "_"
            used.add(cname)
            out[ref.name] = cname
        return out

    def table(self, ref: ir.ArrayRef, data: Any) -> str:
        """A constant table's declaration with its values (specials as constant expressions)."""
        t = ref.type.elem
        specials = {**self.d.float_specials, **self.d.constant_specials}
        shape = tuple(max(n, 1) for n in ref.type.shape or ()) or (1,)  # C: no 0 sides; a 0-D table has [1]
        if data.size == 0:  # C has no arrays of 0 elements: zeros, which no read reaches (bounds are the shape's)
            data = np.zeros(shape, data.dtype)
        if isinstance(t, RecordType):
            values = [self.record_value(t, r, specials) for r in data.reshape(-1)]
        else:
            values = [self.constant_value(v, t, specials) for v in data.reshape(-1)]
        dims = "".join(f"[{n}]" for n in shape)
        body = self._table_rows(values, shape)
        where = f"  // a table of the module, first read at line {ref.loc.lineno}" if ref.loc is not None else ""
        head = f"{self.d.qualifiers['constant']}{self.storage(t)} {self.tables[ref.name]}{dims} = {{{where}"
        return f"{head}\n    {body}\n}};"

    def record_value(self, t: RecordType, record: Any, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One record of a constant table: its members in the struct's order, pads as zeros (``struct``)."""
        parts, at = [], 0
        for f in t.fields:
            if f.offset > at:
                parts.append("{0}")
            value = record[f.name]
            if f.shape:  # a sub-array member: nested braces, a pair per dimension
                flat = [self.constant_value(v, f.type, specials) for v in np.asarray(value).reshape(-1)]
                parts.append("{" + self._table_rows(flat, f.shape).replace("\n    ", " ") + "}")
            else:
                parts.append(self.constant_value(value, f.type, specials))
            at = f.offset + f.nbytes
        if t.itemsize > at:
            parts.append("{0}")
        return "{" + ", ".join(parts) + "}"

    def constant_value(self, v: Any, t: ScalarType, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One element of a constant table, as a constant expression."""
        if t.itemsize == 2 and t.is_float:  # float16, bfloat16: stored bits (or the dialect's spelling of them)
            bits = int(np.asarray(v).view(np.uint16))
            return self.d.constant_bits.get(t, "{0}").format(f"0x{bits:04x}")
        v = v.item() if isinstance(v, np.generic) else v
        if t.is_complex:  # an aggregate of its parts (make_float2 is no constant expression)
            f = component(t)
            return "{" + ", ".join(self.table_value(p, f, specials) for p in (v.real, v.imag)) + "}"
        if t.is_float:
            return self.table_value(v, t, specials)
        return self.expr(ir.Lit(v, t))

    @staticmethod
    def _table_rows(values: list[str], shape: tuple[int, ...]) -> str:
        """A table's initializer body: eight values a line for one dimension, else one brace per
        innermost row, nested per dimension (brace elision would mis-assign aggregate elements)."""
        if len(shape) <= 1:
            return ",\n    ".join(", ".join(values[i : i + 8]) for i in range(0, len(values), 8))

        def nest(flat: list[str], dims: tuple[int, ...]) -> str:
            if len(dims) == 1:
                return "{" + ", ".join(flat) + "}"
            step = len(flat) // dims[0]
            return "{" + ", ".join(nest(flat[i : i + step], dims[1:]) for i in range(0, len(flat), step)) + "}"

        step = len(values) // shape[0]
        return ",\n    ".join(nest(values[i : i + step], shape[1:]) for i in range(0, len(values), step))

    def table_value(self, v: float, t: ScalarType, specials: dict[tuple[str, ScalarType], str]) -> str:
        """One float of a constant table (inf and nan as constant expressions)."""
        if math.isfinite(v):
            return self.expr(ir.Lit(v, t))
        spelled = specials[("nan" if math.isnan(v) else "inf", t)]
        return f"-{spelled}" if math.copysign(1.0, v) < 0 else spelled

    def struct(self, t: RecordType) -> str:
        """The C struct of a record type, member by member at the dtype's offsets: a gap becomes a
        ``gk_pad`` member; every member sits at a multiple of its size, so C adds no padding of its
        own, and the size is the dtype's (``types.record_type`` refused the layouts C cannot have)."""
        cname, members = self.records[t]
        lines = [f"typedef struct {{  // NumPy dtype {t.dtype}, {t.itemsize} bytes"]
        at = 0
        for f in t.fields:
            if f.offset > at:
                lines.append(f"    unsigned char gk_pad{at}[{f.offset - at}];")
            dims = "".join(f"[{n}]" for n in f.shape)  # a sub-array field: a C array member
            ctype = self.storage(f.type)
            if f.offset % f.type.itemsize:  # a complex member where NumPy aligns it to its components
                align = f.type.itemsize // 2
                under = f"{cname}_{members[f.name]}_t"
                lines.insert(0, f"typedef {ctype} __attribute__((aligned({align}))) {under};")
                ctype = under
            lines.append(f"    {ctype} {members[f.name]}{dims};  // byte {f.offset}")
            at = f.offset + f.nbytes
        if t.itemsize > at:
            lines.append(f"    unsigned char gk_pad{at}[{t.itemsize - at}];")
        lines.append(f"}} {cname};")
        if self.d.layout_assert:
            # the compiler proves the layout is NumPy's: the members and gaps add up to the
            # itemsize, so the size is the itemsize exactly when C padded nowhere, and then every
            # member is at its dtype offset (no offsetof: NVRTC 13.0 refuses it in a static_assert)
            what = f"{cname} is {t.itemsize} bytes, its members at the dtype's offsets"
            lines.append(self.d.layout_assert.format(cond=f"sizeof({cname}) == {t.itemsize}", what=what))
        return "\n".join(lines)


def record_names(prog: ir.Program) -> dict[RecordType, tuple[str, dict[str, str]]]:
    """Per record type of the program's arrays, in order of first use: its struct's C name
    (``gk_record0``...) and its members' C names (a field named like a C word gets a ``_``, one
    that is no identifier is ``gk_field<k>``)."""
    out: dict[RecordType, tuple[str, dict[str, str]]] = {}
    arrays = [p for fd in prog.funcs + [prog.kernel] for p in fd.params] + [ref for ref, _ in prog.tables]
    for p in arrays:
        t = p.type.elem if isinstance(p, ir.ArrayRef) else None
        if isinstance(t, RecordType) and t not in out:
            members: dict[str, str] = {}
            for k, f in enumerate(t.fields):  # a name C cannot spell ("a b", "x-1") is the k-th field's
                cname = c_identifier(f.name) if f.name.isidentifier() and f.name.isascii() else f"gk_field{k}"
                while cname in members.values():  # c_identifier keeps gk_ names (the pads') for gpukern
                    cname += "_"
                members[f.name] = cname
            out[t] = (f"gk_record{len(out)}", members)
    return out
