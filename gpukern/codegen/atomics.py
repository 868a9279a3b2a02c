"""Atomics in C: the dialect's instruction where the device has one, else a compare-and-swap loop.

The loops are helper functions written once per operation, type and memory space; an 8- or
16-bit element is updated through the aligned 32-bit word holding it.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..semantics import ops
from ..types import ScalarType
from .expressions import ATOM, ExpressionEmitter


class AtomicEmitter(ExpressionEmitter):
    """``ir.Atomic`` as C, and the compare-and-swap helpers it needs."""

    def expr_Atomic(self, e: ir.Atomic) -> tuple[str, int]:
        ptr = f"&{self.element(e.array, e.indices)}"
        t = e.type
        operands = [self.expr(o) for o in e.operands]
        entry = ops.ATOMIC[e.op]
        op = entry.on_integers if t.is_int and entry.on_integers else e.op  # nanmax of integers: max
        native = self.d.native_atomics.get((op, t.name))
        extension = self.d.atomic_extensions.get((op if native is not None else "cas", t.itemsize))
        if extension is not None:
            self.extensions.setdefault(extension, e)
        if native is not None:
            return native.format(*operands, p=ptr, T=self.storage(t)), ATOM
        space = e.array.type.space
        # one helper per pointer qualifier the dialect writes (OpenCL's __global and __local differ)
        qualified = f"_{space}" if self.d.pointer_spaces.get(space) else ""
        name = f"gk_atomic_{op}_{t.name}{qualified}"
        if name not in self.helpers:
            self.helpers[name] = self._cas_helper(name, op, t, space)
        return f"{name}({ptr}, {', '.join(operands)})", ATOM

    def _cas_helper(self, name: str, op: str, t: ScalarType, space: str) -> str:
        """An atomic the hardware lacks, built from a compare-and-swap loop on the element's bits."""
        if t.itemsize < 4:
            return self._word_cas_helper(name, op, t, space)
        T, pre = self.storage(t), self.d.func_prefix
        U = self.unsigned(t)
        qual = self.d.pointer_spaces.get(space, "")
        to_bits, from_bits = self.d.bits[t]
        cas = self.d.cas_bits[t.itemsize]
        ptr = f"{qual}{T}* p"
        uptr = f"({qual}{U}*)p"
        if op == "cas":
            call = cas.format(f"{to_bits}(cmp)", f"{to_bits}(v)", p=uptr, T=U)
            return f"{pre}{T} {name}({ptr}, {T} cmp, {T} v)\n{{\n    return {from_bits}({call});\n}}"
        call = cas.format("assumed", f"{to_bits}({ops.ATOMIC[op].c_update})", p=uptr, T=U)
        return (
            f"{pre}{T} {name}({ptr}, {T} v)\n{{\n"
            f"    {U} seen = *({'volatile ' + qual if qual else 'volatile '}{U}*)p, assumed;\n"
            f"    do {{\n        assumed = seen;\n        {T} old = {from_bits}(assumed);\n"
            f"        seen = {call};\n    }} while (seen != assumed);\n"
            f"    return {from_bits}(seen);\n}}"
        )

    def _word_cas_helper(self, name: str, op: str, t: ScalarType, space: str) -> str:
        """An atomic on an 8- or 16-bit element, which no device has an instruction for: a
        compare-and-swap loop on the aligned 32-bit word holding the element (GPUs and OpenCL's
        CPU devices are little-endian: the element's byte offset in the word, times 8, is its
        shift), which puts back the other bytes as it found them.  A store of another thread to
        them between the read and the compare-and-swap makes it fail and try again, so no update
        is lost; the element is updated by ``ops.ATOMIC[op]``'s C form, as any CAS loop."""
        T, R, U, pre = self.storage(t), self.type(t), self.unsigned(t), self.d.func_prefix
        W, A = self.d.unsigned_types[4], self.d.address_int
        qual = self.d.pointer_spaces.get(space, "")
        to_bits, from_bits = self.d.bits[t]
        mask = f"0x{(1 << 8 * t.itemsize) - 1:X}u"
        found = f"({U})(assumed >> shift)"
        if op == "cas":
            params = f"{R} cmp, {R} v"
            new_bits = f"{found} == ({U}){to_bits}(cmp) ? ({U}){to_bits}(v) : {found}"
        else:
            params = f"{R} v"
            new_bits = f"({U}){to_bits}({ops.ATOMIC[op].c_update})"
        word = f"(assumed & ~(({W}){mask} << shift)) | (({W})({new_bits}) << shift)"
        call = self.d.cas_bits[4].format("assumed", word, p="w", T=W)
        return self.support(
            f"{pre}{R} {name}({qual}{T}* p, {params})\n{{\n"
            f"    {qual}{W}* w = ({qual}{W}*)(({A})p & ~({A})3);\n"
            f"    {W} shift = ({W})(({A})p & ({A})3) * 8u;\n"
            f"    {W} seen = *(volatile {qual}{W}*)w, assumed;\n"
            f"    do {{\n        assumed = seen;\n        {R} old = {from_bits}({found});\n"
            f"        seen = {call};\n    }} while (seen != assumed);\n"
            f"    return {from_bits}({found});\n}}"
        )
