"""Re-draw the PNG of benchmark results from their JSON, e.g. on a machine with matplotlib for results
measured on one without it.

    python benchmarks/plot.py benchmarks/results/latest/*.json          # writes X.png beside each X.json
    python benchmarks/plot.py launch.json compile.json --out /tmp/plots

Draws the ``{"kind": "bars" | "lines", "title", "xlabel", "ylabel", "series"}`` block of each file
(under ``"plot"`` or at the top level); the format is described in ``benchmarks/_common.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import _common


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", type=Path, nargs="+", help="results files written by the benchmarks")
    p.add_argument("--out", type=Path, help="folder for the PNGs (default: beside each JSON file)")
    args = p.parse_args(argv)
    status = 0
    for path in args.json:
        try:
            doc = json.loads(path.read_text())
            if "series" not in doc.get("plot", doc):
                raise ValueError("no plot block (kind, series) in it")
            drawn = _common.render(doc, (args.out or path.parent) / f"{path.stem}.png")
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"error: {path}: {type(e).__name__}: {e}", file=sys.stderr)
            status = 1
            continue
        if not drawn:
            return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
