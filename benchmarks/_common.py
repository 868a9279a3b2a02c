"""What the benchmark scripts share: backend selection, the results JSON, its plot, a text table.

Importing this module puts the repository root on ``sys.path``, so the scripts run from a checkout
where gpukern is not installed (the GPU machine runs them that way).  It imports only the standard
library: ``compile.py``'s child process times ``import gpukern`` itself and must find it not yet
imported.

Every script writes ``OUT/NAME.json``:

    {
      "benchmark": "launch",
      "date": "2026-11-22T10:00:00Z",                   # UTC, when the file was written
      "command": "python3 benchmarks/launch.py ...",    # as run
      "machine": {"device": ..., "backend": ..., "cpu": ..., "python": ..., "numpy": ..., ...},
      "params": {...},                                  # the script's options
      "results": {...},                                 # every measured number, per script
      "plot": {
        "kind": "bars" | "lines",
        "title": str, "xlabel": str, "ylabel": str,
        "log_x": bool, "log_y": bool,                   # optional, default false
        "series": {"NAME": {"x": [...], "y": [...]}, ...}
      }
    }

``plot`` is all that ``benchmarks/plot.py`` needs (a document with ``kind`` and ``series`` at its top
level instead is drawn the same way).  For ``lines`` each series is a line through its (x, y) points
(a series without points is left out); ``log_x`` draws x in powers of 2 and ``log_y`` y in powers of
10 (or ``"xscale"``/``"yscale"``: ``"linear"``, ``"log"``, ``"log2"``).  For ``bars`` the x values of
the series are category labels: one group of bars per label, one bar per series, drawn horizontally,
so ``ylabel`` (the values) names the horizontal axis and ``xlabel`` (the categories) the vertical one;
``log_y`` makes the value axis logarithmic.  The device (``machine.device``) is added to the title.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "latest"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def example(name: str) -> Any:
    """A module of ``examples/`` (not a package), imported from its file: benchmarks run the
    gallery's own kernels, never copies."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"gallery_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flagship_launches(
    n: int, kernels: Sequence[str]
) -> tuple[list[tuple[str, Any, Callable[[Any], tuple[Any, ...]]]], Callable[[Any], float]]:
    """The flagship's kernels (``"tiled 16"``, ``"naive 16"``...) at n x n x n on random data, for
    the simulator's cost benchmarks: per kernel its label, its launch and the arguments around an
    output array ``c``; and the relative error of a ``c`` against NumPy in float64."""
    import numpy as np

    mm = example("matmul_tiled")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n * n, dtype=np.float32)
    b = rng.standard_normal(n * n, dtype=np.float32)
    ref = a.reshape(n, n).astype(np.float64) @ b.reshape(n, n)
    out = []
    for name in kernels:
        kind, tile = name.split()
        grid, block = ((n + int(tile) - 1) // int(tile),) * 2, (int(tile),) * 2
        launch = (mm.matmul_naive if kind == "naive" else mm.matmul_tiled)[grid, block]
        extra = () if kind == "naive" else (int(tile),)
        out.append((name, launch, lambda c, extra=extra: (a, b, c, n, n, n, *extra)))
    return out, lambda c: float(np.abs(c.reshape(n, n) - ref).max() / np.abs(ref).max())


def paired(fns: Sequence[Any], reps: int, events: str = "cupy") -> list[list[float]]:
    """Seconds of each of ``fns`` per repetition, timed with ``events`` ("cupy" or "torch": that
    library's CUDA events on its current stream) one after the other in every repetition (after 3
    warm-up rounds), so that a ratio of two is taken under the same clocks."""
    if events == "torch":
        import torch

        def event() -> Any:
            return torch.cuda.Event(enable_timing=True)

        def elapsed(start: Any, end: Any) -> float:
            return start.elapsed_time(end)
    else:
        import cupy as cp

        event, elapsed = cp.cuda.Event, cp.cuda.get_elapsed_time
    for _ in range(3):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for fn, t in zip(fns, times):
            start, end = event(), event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            t.append(elapsed(start, end) * 1e-3)
    return times


def add_common_args(p: argparse.ArgumentParser) -> None:
    """``--backend`` and ``--out``, the options every benchmark has."""
    p.add_argument("--backend", choices=("cuda", "opencl"), help="default: gpukern's default backend")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"results folder (default {DEFAULT_OUT})")


def select_backend(name: str | None) -> Any:
    """The gpukern backend to measure; a clear message and exit 2 when it cannot run here.

    The simulator is refused: it has no device, so there is no launch or compile cost to measure.
    """
    import gpukern as gk

    try:
        if name:
            gk.set_backend(name)
        backend = gk.get_backend()
    except gk.GpukernError as e:
        raise SystemExit(f"error: cannot use backend {name or '(default)'!r} here: {e}") from None
    if backend.name not in ("cuda", "opencl"):
        raise SystemExit(f"error: the default backend here is {backend.name!r}; pass --backend cuda or opencl")
    return backend


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(backend: Any) -> dict[str, Any]:
    """The device, the host CPU (launch costs are host costs) and the versions of what was used."""
    info: dict[str, Any] = {
        "device": backend.device_name(),
        "backend": backend.name,
        "cpu": _cpu(),
        "cpu_count": os.cpu_count(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    for module, attr in (
        ("gpukern", "__version__"),
        ("numpy", "__version__"),
        ("pycuda", "VERSION_TEXT"),
        ("cupy", "__version__"),
        ("pyopencl", "VERSION_TEXT"),
        ("torch", "__version__"),
    ):
        if module in sys.modules:  # only what this run imported: importing torch to ask would take seconds
            info[module] = str(getattr(sys.modules[module], attr, "?"))
    if backend.name == "cuda":  # the driver, and the compiler that made this run's kernels
        from gpukern.backends.cuda_compile import cuda_compiler
        from gpukern.backends.cuda_driver import driver_version

        info["cuda_driver"] = driver_version()
        try:
            c = cuda_compiler(None, backend.arch)
            info["cuda_compiler"] = f"{c.name} {c.version}"
        except Exception as e:  # noqa: BLE001  (the run compiled already; say why it cannot tell now)
            info["cuda_compiler"] = f"unknown ({e})"
    return info


def save(
    name: str, out: Path, backend: Any, params: dict[str, Any], results: dict[str, Any], plot: dict[str, Any]
) -> Path:
    """Write ``out/NAME.json`` and, when matplotlib imports, ``out/NAME.png``; returns the JSON's path."""
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": name,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "machine": machine_info(backend),
        "params": {k: str(v) if isinstance(v, Path) else v for k, v in params.items()},
        "results": results,
        "plot": plot,
    }
    path = out / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}")
    render(doc, out / f"{name}.png")
    return path


def _scale(spec: dict[str, Any], axis: str) -> str:
    """'linear', 'log' or 'log2' for axis 'x' or 'y': from ``xscale``/``yscale``, else ``log_x``/``log_y``."""
    if spec.get(f"{axis}scale"):
        return str(spec[f"{axis}scale"])
    return ("log2" if axis == "x" else "log") if spec.get(f"log_{axis}") else "linear"


def _set_scale(setter: Any, scale: str) -> None:
    if scale == "log2":
        setter("log", base=2)
    elif scale.startswith("log"):
        setter("log")


def render(doc: dict[str, Any], png: Path) -> bool:
    """Draw the plot block of ``doc`` (see the module docstring) into ``png``; False, with a note, without
    matplotlib.  The block is ``doc["plot"]``, or ``doc`` itself when it has ``kind`` and ``series``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: matplotlib is not installed; no {png.name} (make it later: python benchmarks/plot.py JSON)")
        return False
    spec = doc.get("plot", doc)
    series: dict[str, dict[str, list[Any]]] = {k: s for k, s in spec["series"].items() if s["x"]}
    if spec["kind"] == "bars":
        labels = list(dict.fromkeys(x for s in series.values() for x in s["x"]))
        height = 0.8 / max(len(series), 1)
        fig, ax = plt.subplots(figsize=(9, 1.2 + 0.45 * len(labels) * max(len(series), 1)))
        for i, (sname, s) in enumerate(series.items()):
            values = dict(zip(s["x"], s["y"]))
            pos = [j - 0.4 + height * (i + 0.5) for j, lab in enumerate(labels) if lab in values]
            vals = [values[lab] for lab in labels if lab in values]
            bars = ax.barh(pos, vals, height=height, label=sname)
            texts = [f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}" for v in vals]
            ax.bar_label(bars, labels=texts, padding=2, fontsize=8)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()  # first category on top, as in the printed table
        ax.set_xlabel(spec.get("ylabel", ""))  # horizontal bars: the values run along x
        ax.set_ylabel(spec.get("xlabel", ""))
        _set_scale(ax.set_xscale, _scale(spec, "y"))
        ax.margins(x=0.15)
    elif spec["kind"] == "lines":
        fig, ax = plt.subplots(figsize=(8, 5))
        for sname, s in series.items():
            ax.plot(s["x"], s["y"], marker="o", label=sname)
        ax.set_xlabel(spec.get("xlabel", ""))
        ax.set_ylabel(spec.get("ylabel", ""))
        _set_scale(ax.set_xscale, _scale(spec, "x"))
        _set_scale(ax.set_yscale, _scale(spec, "y"))
        if _scale(spec, "x") != "linear":  # label the measured x values, not powers of the base
            xs = sorted({x for s in series.values() for x in s["x"]})
            ax.set_xticks(xs, [f"{x:g}" for x in xs])
            ax.minorticks_off()
        ax.grid(True, alpha=0.3)
    else:
        raise ValueError(f"unknown plot kind {spec['kind']!r}; expected 'bars' or 'lines'")
    title = spec.get("title", "")
    device = doc.get("machine", {}).get("device") or doc.get("device") or ""
    if device and device not in title:
        title = f"{title}\n{device}"
    fig.suptitle("\n".join(textwrap.fill(t, 100) for t in title.split("\n")), fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    plt.close(fig)
    print(f"wrote {png}")
    return True


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])
