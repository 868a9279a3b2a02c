"""The corpus's own accounting: at least 150 kernels from at least six public sources, each file
naming its source and licence, and the passing rate on the simulator and on OpenCL that README.md
states (a case is a test on one backend; a refusal, ``@pytest.mark.refused``, is one that does not
pass there; a finding, ``@pytest.mark.finds``, is a bug of the source's that the simulator reports,
and passes).  Counted from the files' syntax."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).parent
BACKENDS = ("sim", "opencl")
LICENCES = ("BSD-2-Clause", "MIT", "Apache-2.0")


def _is_jit(call: ast.expr) -> bool:
    """``cuda.jit``/``cuda.jit(...)``/``jit.rawkernel(...)`` that makes a kernel (not device=True), or
    ``vectorize(..., target="cuda")`` / ``guvectorize(..., target="cuda")``, whose function runs in one."""
    target = call.func if isinstance(call, ast.Call) else call
    name = ast.unparse(target)
    if name.split(".")[-1] in ("vectorize", "guvectorize") and isinstance(call, ast.Call):  # (target="cuda": a kernel)
        return any(k.arg == "target" and ast.literal_eval(k.value) == "cuda" for k in call.keywords)
    if name not in ("cuda.jit", "jit.rawkernel"):
        return False
    return not any(k.arg == "device" and ast.literal_eval(k.value) for k in getattr(call, "keywords", []))


def kernels(tree: ast.Module) -> set[str]:
    """The kernels a file defines: decorated functions (each definition: tests define their own ``f``),
    and functions passed to ``cuda.jit(...)`` (each function once, however many tests jit it)."""
    found: set[str] = set()
    functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}  # (cuda.jit(sig): no kernel)
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and any(_is_jit(d) for d in n.decorator_list):
            found.add(f"{n.name}@{n.lineno}")
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Call) and _is_jit(n.func) and n.args:
            if isinstance(n.args[0], ast.Name):
                found.add(n.args[0].id)  # cuda.jit(sig)(fn)
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "cuda.jit" and n.args:
            if isinstance(n.args[0], ast.Name) and not n.keywords and n.args[0].id in functions:
                found.add(n.args[0].id)  # cuda.jit(fn)
    return found


def _on(mark: ast.Call) -> tuple[str, ...]:
    for k in mark.keywords:
        if k.arg == "on":
            return tuple(ast.literal_eval(k.value))
    return BACKENDS


def cases(tree: ast.Module) -> list[tuple[str, str, str]]:
    """(test, backend, outcome) for every test that runs on the backends: 'pass', 'refused', 'finds'."""
    out = []
    for n in tree.body:
        if not (isinstance(n, ast.FunctionDef) and n.name.startswith("test_") and n.args.args):
            continue
        if n.args.args[0].arg != "backend":
            continue
        marks = {b: "pass" for b in BACKENDS}
        for d in n.decorator_list:
            if isinstance(d, ast.Call) and ast.unparse(d.func) in ("pytest.mark.refused", "pytest.mark.finds"):
                kind = "refused" if d.func.attr == "refused" else "finds"
                for b in _on(d):
                    if marks[b] == "pass" or kind == "refused":
                        marks[b] = kind
        out += [(n.name, b, marks[b]) for b in BACKENDS]
    return out


def corpus() -> dict[str, dict[str, list]]:
    """Per source directory: its kernels and cases."""
    by_source: dict[str, dict[str, list]] = {}
    for path in sorted(HERE.glob("*/test_*.py")):
        tree = ast.parse(path.read_text())
        entry = by_source.setdefault(path.parent.name, {"kernels": [], "cases": [], "files": []})
        entry["kernels"] += [f"{path.name}:{k}" for k in sorted(kernels(tree))]
        entry["cases"] += cases(tree)
        entry["files"].append(path)
    return by_source


def test_every_file_names_its_source_and_licence():
    for path in HERE.glob("*/test_*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert "Ported from" in doc, path
        assert any(lic in doc for lic in LICENCES), path


def test_at_least_150_kernels_from_six_sources():
    c = corpus()
    assert len(c) >= 6, sorted(c)
    total = sum(len(e["kernels"]) for e in c.values())
    assert total >= 150, {k: len(e["kernels"]) for k, e in c.items()}


def rates() -> dict[str, tuple[int, int]]:
    """Per backend: (passing cases, cases)."""
    everything = [case for e in corpus().values() for case in e["cases"]]
    out = {}
    for b in BACKENDS:
        mine = [o for _, backend, o in everything if backend == b]
        out[b] = (sum(o != "refused" for o in mine), len(mine))
    return out


def test_readme_states_the_counts():
    """README.md's figures are the corpus's (the goal is 95 % on each backend: README.md says where
    the corpus stands and what is refused)."""
    text = (HERE / "README.md").read_text()
    total = sum(len(e["kernels"]) for e in corpus().values())
    assert f"**{total} kernels**" in text
    for b, (ok, n) in rates().items():
        assert f"{b}: **{ok} of {n}**" in text, (b, ok, n)


def test_counting_sees_refusals():
    """The counter itself: a refusal on one backend and a finding are told apart."""
    tree = ast.parse(
        "@pytest.mark.refused('x', on=('opencl',))\ndef test_a(backend): pass\n"
        "@pytest.mark.finds('y', error=E)\ndef test_b(backend): pass\n"
        "@cuda.jit\ndef k(a): pass\n"
        "def test_c(backend): cuda.jit('void()')(g)\n"
        "def test_d(): cuda.jit(sig)(h); cuda.jit(kernel)\n"
    )
    assert cases(tree) == [
        ("test_a", "sim", "pass"), ("test_a", "opencl", "refused"),
        ("test_b", "sim", "finds"), ("test_b", "opencl", "finds"),
        ("test_c", "sim", "pass"), ("test_c", "opencl", "pass"),
    ]  # fmt: skip
    assert kernels(tree) == {"k@6", "g", "h"}  # (not the signature sig, nor kernel: no function of the file)


if __name__ == "__main__":  # the numbers README.md states
    c = corpus()
    for name, e in c.items():
        res = {b: sum(o != "refused" for _, bb, o in e["cases"] if bb == b) for b in BACKENDS}
        n = len(e["cases"]) // len(BACKENDS)
        print(f"{name}: {len(e['kernels'])} kernels, {n} cases; passing: {res}")
    total = sum(len(e["kernels"]) for e in c.values())
    print("total kernels", total)
    for b in BACKENDS:
        allc = [o for e in c.values() for _, bb, o in e["cases"] if bb == b]
        print(b, sum(o != "refused" for o in allc), "/", len(allc), "findings", sum(o == "finds" for o in allc))
