"""The sanitizer corpus under NVIDIA's compute-sanitizer, beside the simulator's ``gk.sanitize``.

    python benchmarks/sanitizer_vs_sim.py --sim-only               # anywhere: the simulator's side
    python benchmarks/sanitizer_vs_sim.py --out DIR                # on an NVIDIA GPU with compute-sanitizer

Every buggy kernel of ``tests/sanitizer_corpus.py`` that gpukern compiles is launched on the
CUDA backend by this script run again as a worker (``--worker NAME``: that one case, arrays
through ``gk.to_device``/``gk.empty``, then ``gk.synchronize()``), once without a tool (does it
run at all?) and once under each of ``compute-sanitizer --tool racecheck|memcheck|initcheck|
synccheck --error-exitcode 99`` (racecheck with ``--racecheck-report all``), one process per run
with a timeout, so a case that hangs or kills its process is reported, not fatal.  A tool
*found* the bug when it exited with 99 or its summary counts an error or hazard.  Kernels that
gpukern's static check rejects never reach the GPU and are marked so.  ``--correct`` runs the
correct kernels the same way (no tool and no simulator check should report anything).

The simulator's side is ``gk.sanitize`` of the same case.

Writes OUT/sanitizer.md (one row per case: category, the simulator's findings, one column per
tool) and OUT/sanitizer.json (device, compute-sanitizer version, date, command, per case and
tool the exit status, error counts and the first lines of the report).  The summary lists,
loudly, every case a compute-sanitizer tool finds and the simulator does not, and the cases
only the simulator finds.

Exit status: 1 if some case is found by compute-sanitizer but not by the simulator, 2 if
compute-sanitizer cannot be run, else 0.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import _common

sys.path.insert(0, str(_common.ROOT / "tests"))

import numpy as np  # noqa: E402
import sanitizer_corpus as corpus  # noqa: E402

import gpukern as gk  # noqa: E402

TOOLS = corpus.TOOLS
TIMEOUT_S = 60
ERROR_EXIT = 99  # compute-sanitizer's exit status when its tool reported an error
WORKER_DONE = "sanitizer_vs_sim worker: launch finished"
WORKER_FAILED = 3  # the worker's exit status when its launch raised
REJECTED = "rejected by gpukern's static check"
HEAD_LINES = 20

_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)"
)


# ---------------------------------------------------------------- the GPU side (worker)
def worker(name: str) -> int:
    """Launch one case on the CUDA backend: the process compute-sanitizer watches."""
    try:
        gk.set_backend("cuda")
        setup = corpus.by_name(name).build()
        args = tuple(gk.to_device(a) if isinstance(a, np.ndarray) else a for a in setup.args)
        setup.launch(*args)
        gk.synchronize()
    except Exception:  # anything: the parent reads it from our output
        traceback.print_exc()
        sys.stdout.flush()
        return WORKER_FAILED
    print(WORKER_DONE, flush=True)
    return 0


def device_probe() -> int:
    """Print the CUDA device gpukern would use (run as a child: the parent keeps no GPU context)."""
    try:
        gk.set_backend("cuda")
        print(json.dumps({"device": gk.get_backend().device_name()}))
    except gk.GpukernError as e:
        print(json.dumps({"error": str(e)}))
        return 1
    return 0


def run_worker(name: str, tool: str | None, sanitizer: str | None, timeout: float) -> dict[str, Any]:
    """Run the worker for case ``name``, under ``sanitizer --tool tool`` unless ``tool`` is None."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name]
    if tool is not None:
        extra = ["--racecheck-report", "all"] if tool == "racecheck" else []
        cmd = [str(sanitizer), "--tool", tool, "--error-exitcode", str(ERROR_EXIT), *extra, *cmd]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,  # its own process group: a timeout kills the sanitizer and python both
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        rc = None
    return judge(out or "", rc, tool, timeout)


def judge(out: str, rc: int | None, tool: str | None, timeout: float) -> dict[str, Any]:
    """What one run says: found / not found / crashed, with the numbers it is decided on."""
    lines = out.splitlines()
    errors = [int(m.group(1)) for m in map(_ERROR_SUMMARY.search, lines) if m]
    races = [tuple(int(g) for g in m.groups()) for m in map(_RACE_SUMMARY.search, lines) if m]
    report = [line for line in lines if line.startswith("=====")] or lines
    result: dict[str, Any] = {
        "exit_status": rc,
        "error_summary": errors[-1] if errors else None,
        "racecheck_summary": dict(zip(("hazards", "errors", "warnings"), races[-1])) if races else None,
        "finished": WORKER_DONE in out,
        "report_head": report[:HEAD_LINES],
    }
    hazards = races[-1][0] if races else 0
    if rc is None:
        result["status"], result["why"] = "crashed", f"timed out after {timeout:g} s"
    elif tool is not None and (rc == ERROR_EXIT or (errors and errors[-1] > 0) or hazards > 0):
        result["status"] = "found"
    elif rc == 0 and WORKER_DONE in out:
        result["status"] = "not found" if tool is not None else "ran"
    else:
        why = f"exit status {rc}" + (f" (signal {-rc})" if rc < 0 else "")
        result["status"], result["why"] = "crashed", why
        result["output_tail"] = lines[-HEAD_LINES:]
    return result


# ---------------------------------------------------------------- the simulator's side
def simulate(case: corpus.Buggy | corpus.Correct) -> dict[str, Any]:
    """The simulator's findings for one case: every fault ``gk.sanitize`` reports."""
    gk.set_backend("sim")
    mode = "gk.sanitize"
    try:
        setup = case.build()
        faults = gk.sanitize(setup.launch, *setup.args)  # a kernel rejected by the static checks: one fault
    except Exception as e:
        return {"mode": mode, "faults": [], "found": False, "error": f"{type(e).__name__}: {e}"}
    finally:
        gk.set_backend(None)
    listed = [
        {
            "class": type(f).__name__,
            "line": f.loc.lineno if f.loc is not None else None,
            "message": str(getattr(f, "message", f)).splitlines()[0],
        }
        for f in faults
    ]
    result: dict[str, Any] = {"mode": mode, "faults": listed, "found": bool(listed)}
    if isinstance(case, corpus.Buggy):
        result["expected_found"] = any(f["class"] == case.fault.__name__ and f["line"] == case.line for f in listed)
    return result


# ---------------------------------------------------------------- the run
def find_sanitizer(given: str | None) -> str | None:
    if given:
        return given if Path(given).exists() or shutil.which(given) else None
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "compute-sanitizer").exists():
            return str(Path(home) / "bin" / "compute-sanitizer")
    return None


def environment(sanitizer: str | None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gpukern": gk.__version__,
        "cpu": _common._cpu(),
    }
    if sanitizer is None:
        return info
    version = _output([sanitizer, "--version"])
    info["compute_sanitizer"] = next((x for x in version.splitlines() if "Version" in x), version.strip() or "?")
    probe = _output([sys.executable, str(Path(__file__).resolve()), "--device-info"]).strip().splitlines()
    try:
        info.update(json.loads(probe[-1]))
    except (IndexError, ValueError):
        info["error"] = "the device probe printed nothing readable"
    smi = _output(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip()
    info["nvidia_smi"] = smi.splitlines()[0] if smi else "?"
    return info


def _output(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def gpu_side(case: corpus.Buggy | corpus.Correct, tools: list[str], sanitizer: str, timeout: float) -> dict[str, Any]:
    """The plain run and every tool's run of one case (or why there are none)."""
    if isinstance(case, corpus.Buggy) and case.static:
        return {tool: {"status": REJECTED} for tool in ["plain", *tools]}
    runs = {"plain": run_worker(case.name, None, None, timeout)}  # also fills the binary cache
    for tool in tools:
        runs[tool] = run_worker(case.name, tool, sanitizer, timeout)
    return runs


def case_record(case: corpus.Buggy | corpus.Correct) -> dict[str, Any]:
    if isinstance(case, corpus.Buggy):
        return {
            "name": case.name,
            "kind": "buggy",
            "category": case.category,
            "expected": {"class": case.fault.__name__, "line": case.line, "tool": case.tool, "static": case.static},
            "note": case.note,
        }
    return {"name": case.name, "kind": "correct", "category": case.category}


def summarize(records: list[dict[str, Any]], tools: list[str], gpu: bool) -> dict[str, Any]:
    missed, only_sim, static, sim_false, tool_false, crashed, plain_failed = [], [], [], [], [], [], []
    for r in records:
        finders = [t for t in tools if r.get("gpu", {}).get(t, {}).get("status") == "found"]
        sim = r["simulator"]["found"]
        if finders and not sim:
            missed.append({"case": r["name"], "tools": finders})
        if r["kind"] == "buggy" and r["expected"]["static"]:
            static.append(r["name"])
        elif r["kind"] == "buggy" and sim and gpu and not finders:
            only_sim.append(r["name"])
        if r["kind"] == "correct" and sim:
            sim_false.append(r["name"])
        if r["kind"] == "correct" and finders:
            tool_false.append({"case": r["name"], "tools": finders})
        runs = r.get("gpu", {})
        crashed += [f"{r['name']} ({t})" for t in tools if runs.get(t, {}).get("status") == "crashed"]
        if runs.get("plain", {}).get("status") == "crashed":
            plain_failed.append(r["name"])
    return {
        "found_by_compute_sanitizer_not_by_simulator": missed,
        "found_only_by_simulator": only_sim,
        "rejected_by_static_check": static,
        "plain_runs_that_failed": plain_failed,
        "simulator_faults_in_correct_kernels": sim_false,
        "compute_sanitizer_errors_in_correct_kernels": tool_false,
        "crashed_runs": crashed,
        "simulator_missed_expected": [
            r["name"] for r in records if r["kind"] == "buggy" and not r["simulator"].get("expected_found")
        ],
    }


def sim_cell(r: dict[str, Any]) -> str:
    s = r["simulator"]
    if s.get("error"):
        return f"error: {s['error'][:80]}"
    if not s["faults"]:
        return "nothing"
    seen = dict.fromkeys(f"{f['class']}:{f['line']}" for f in s["faults"])
    text = ", ".join(seen)
    if r["kind"] == "buggy":
        text += " ✓" if s.get("expected_found") else " ✗ (expected not among them)"
    return text


def gpu_cell(r: dict[str, Any], tool: str) -> str:
    run = r.get("gpu", {}).get(tool)
    if run is None:
        return "not run"
    status = run["status"]
    if status == REJECTED:
        return "rejected (static)"
    rs = run.get("racecheck_summary")
    if status == "found" and rs and rs["errors"] == 0:
        status = "found (warnings)"
    if r["kind"] == "buggy" and r["expected"]["tool"] == tool:
        status += " *"
    return status


def markdown(doc: dict[str, Any], tools: list[str]) -> str:
    m, records, summary = doc["machine"], doc["results"]["cases"], doc["results"]["summary"]
    out = [
        "# compute-sanitizer beside the gpukern simulator",
        "",
        f"- device: {m.get('device', 'none (simulator only)')}",
        f"- compute-sanitizer: {m['compute_sanitizer']} ({doc['params']['sanitizer_flags']})"
        if "compute_sanitizer" in m
        else "- compute-sanitizer: not run",
        f"- date: {doc['date']}",
        f"- command: `{doc['command']}`",
        f"- gpukern {m['gpukern']}, Python {m['python']}, NumPy {m['numpy']}",
        f"- simulator side: {doc['params']['sim_mode']}",
        "",
        "Simulator: the faults reported (class:line); ✓ when the expected one is among them.  No tool: the case",
        "run on the GPU without compute-sanitizer (ran / crashed).  Tools: found / not found / crashed; `*` marks",
        "the tool that should in principle find the case; kernels gpukern's static check rejects never reach the GPU.",
        "",
    ]
    for kind, title in (("buggy", "Buggy kernels"), ("correct", "Correct kernels")):
        rows = [r for r in records if r["kind"] == kind]
        if not rows:
            continue
        out += [f"## {title}", "", "| case | category | simulator | no tool | " + " | ".join(tools) + " |"]
        out.append("|" + "---|" * (4 + len(tools)))
        for r in rows:
            cells = [r["name"], r["category"], sim_cell(r), *(gpu_cell(r, t) for t in ["plain", *tools])]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
        notes = [f"- {r['name']}: {r['note']}" for r in rows if r.get("note")]
        if notes:
            out += ["Notes:", "", *notes, ""]
    out += ["## Summary", ""]
    missed = summary["found_by_compute_sanitizer_not_by_simulator"]
    if missed:
        out.append("**FOUND BY COMPUTE-SANITIZER BUT NOT BY THE SIMULATOR:**")
        out += [f"- **{x['case']}** ({', '.join(x['tools'])})" for x in missed]
    elif doc["params"]["gpu"]:
        out.append("Every case a compute-sanitizer tool finds is found by the simulator too.")
    else:
        out.append("compute-sanitizer was not run (--sim-only).")
    out.append("")
    lists = (
        ("Found only by the simulator", summary["found_only_by_simulator"]),
        ("Rejected by gpukern's static check (never reach the GPU)", summary["rejected_by_static_check"]),
        ("Buggy cases whose expected fault the simulator did not report", summary["simulator_missed_expected"]),
        ("Correct kernels the simulator reported faults in", summary["simulator_faults_in_correct_kernels"]),
        (
            "Correct kernels a compute-sanitizer tool reported",
            [x["case"] for x in summary["compute_sanitizer_errors_in_correct_kernels"]],
        ),
        ("Runs under a tool that crashed or timed out", summary["crashed_runs"]),
        ("Runs without a tool that failed (the bug itself may do that)", summary["plain_runs_that_failed"]),
    )
    for title, items in lists:
        if items or title.startswith("Found only"):
            out.append(f"{title} ({len(items)}): " + (", ".join(items) if items else "none"))
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sim-only", action="store_true", help="only the simulator's side (no GPU needed)")
    p.add_argument("--cases", help="comma-separated case names (default: every buggy case)")
    p.add_argument("--correct", action="store_true", help="the correct kernels too")
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated tools (default {','.join(TOOLS)})")
    p.add_argument("--compute-sanitizer", help="the compute-sanitizer executable (default: on PATH or in CUDA_HOME)")
    p.add_argument("--timeout", type=float, default=TIMEOUT_S, help=f"seconds per run (default {TIMEOUT_S})")
    p.add_argument("--jobs", type=int, default=4, help="cases run side by side on the GPU (default 4)")
    p.add_argument(
        "--out", type=Path, default=_common.DEFAULT_OUT, help=f"results folder (default {_common.DEFAULT_OUT})"
    )
    p.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--device-info", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.device_info:
        return device_probe()

    cases: list[corpus.Buggy | corpus.Correct] = [*corpus.BUGGY, *(corpus.CORRECT if args.correct else [])]
    if args.cases:
        try:
            cases = [corpus.by_name(n.strip()) for n in args.cases.split(",") if n.strip()]
        except KeyError as e:
            p.error(f"no case named {e.args[0]!r}")
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if unknown := [t for t in tools if t not in TOOLS]:
        p.error(f"unknown tools {unknown}; choose from {', '.join(TOOLS)}")
    sanitizer = None
    if not args.sim_only:
        sanitizer = find_sanitizer(args.compute_sanitizer)
        if sanitizer is None:
            print("error: compute-sanitizer not found; pass --compute-sanitizer PATH (or --sim-only)", file=sys.stderr)
            return 2

    machine = environment(sanitizer)
    if "error" in machine:
        print(f"error: the CUDA backend cannot run here: {machine['error']}", file=sys.stderr)
        return 2

    records = []
    for case in cases:
        record = case_record(case)
        record["simulator"] = simulate(case)
        records.append(record)
        print(f"simulator  {case.name:42s} {sim_cell(record)}", flush=True)
    if sanitizer is not None:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            runs = {case.name: pool.submit(gpu_side, case, tools, sanitizer, args.timeout) for case in cases}
            for record in records:
                record["gpu"] = runs[record["name"]].result()
                cells = "  ".join(f"{t}: {gpu_cell(record, t)}" for t in tools)
                print(f"gpu        {record['name']:42s} {cells}", flush=True)

    doc = {
        "benchmark": "sanitizer_vs_sim",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "machine": machine,
        "params": {
            "gpu": sanitizer is not None,
            "tools": tools,
            "timeout_s": args.timeout,
            "sanitizer_flags": f"--error-exitcode {ERROR_EXIT}; racecheck: --racecheck-report all",
            "sim_mode": records[0]["simulator"]["mode"] if records else "gk.sanitize",
        },
        "results": {"cases": records, "summary": summarize(records, tools, sanitizer is not None)},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sanitizer.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    text = markdown(doc, tools)
    (args.out / "sanitizer.md").write_text(text + "\n")
    print(text[text.index("## Summary") :])
    print(f"wrote {args.out / 'sanitizer.md'} and {args.out / 'sanitizer.json'}")
    return 1 if doc["results"]["summary"]["found_by_compute_sanitizer_not_by_simulator"] else 0


if __name__ == "__main__":
    sys.exit(main())
