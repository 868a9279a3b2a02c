"""The gpukern command: each subcommand, in-process (gpukern.tools.cli.main) and as
`python -m gpukern`, and that bad input is one line on stderr with exit status 2.

The sample kernel file lives at one path for the whole module, so its kernels' CUDA C
(which names the file) is the same in every test and conftest nvcc-compiles it once.
"""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from compilers import needs_opencl

from gpukern.tools import cli

REPO = Path(__file__).resolve().parents[2]

KERNELS = textwrap.dedent(
    """\
    import gpukern as gk
    from gpukern import Array, Const, barrier, block_idx, float32, int32, shared, thread_idx


    @gk.kernel
    def add(a: Array[float32], b: Array[float32], out: Array[float32], n: int32):
        i = gk.global_id(0)
        if i < n:
            out[i] = a[i] + b[i]


    @gk.kernel
    def scale(x, out, s):
        i = gk.global_id(0)
        out[i] = x[i] * s


    @gk.kernel
    def reverse_tiles(a: Array[float32], out: Array[float32], TILE: Const[int]):
        t = shared(float32, TILE)
        t[thread_idx.x] = a[block_idx.x * TILE + thread_idx.x]
        barrier()
        out[block_idx.x * TILE + thread_idx.x] = t[TILE - 1 - thread_idx.x]


    def helper():
        return 1
    """
)

BROKEN = textwrap.dedent(
    """\
    import gpukern as gk
    from gpukern import Array, float32, int32


    @gk.kernel
    def ok(a: Array[float32]):
        a[gk.global_id(0)] = 1.0


    @gk.kernel
    def divergent(a: Array[float32], n: int32):
        i = gk.global_id(0)
        if a[i] < n:
            gk.barrier()
    """
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("cli")
    paths = {
        "kernels": KERNELS,
        "broken": BROKEN,
        "raises": "raise RuntimeError('no GPU in this file')\n",
        "syntax": "def f(:\n",
    }
    for name, text in paths.items():
        (d / f"{name}.py").write_text(text)
    (d / "notes.txt").write_text("not python")
    return {name: str(d / f"{name}.py") for name in paths} | {"dir": str(d)}


def run(args: list[str], cache_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "GPUKERN_CACHE_DIR": str(cache_dir)}
    env.pop("GPUKERN_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "gpukern", *args], capture_output=True, text=True, env=env)


def main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(code: int, out: str, err: str, fragment: str) -> None:
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("gpukern: error: ") and fragment in err, err
    assert "Traceback" not in err + out


# ---------------------------------------------------------------- info
def test_info_subprocess(tmp_path):
    p = run(["info"], tmp_path)
    assert p.returncode == 0, p.stderr
    for part in ("gpukern 0.1.0", "python ", "numpy ", "backends:", "nvcc", "pyopencl", "default backend:"):
        assert part in p.stdout
    assert re.search(r"^  sim\s+available\s+gpukern simulator", p.stdout, re.M)
    assert f"cache: {tmp_path} (0 entries, 0 B)" in p.stdout


def test_info_says_why_a_backend_is_missing(capsys):
    import gpukern as gk
    from gpukern import backends

    code, out, _ = main(["info"], capsys)
    assert code == 0
    for name in ("cuda", "hip", "opencl", "sim"):
        if name in gk.available_backends():
            assert re.search(rf"^  {name}\s+available\s+\S", out, re.M)
            assert f"max {gk.get_backend(name).max_group} threads per block" in out
        else:
            assert f"unavailable  {backends.backend_status()[name]}" in out


# ---------------------------------------------------------------- show
def test_show_annotated_kernel_both_dialects(files, capsys):
    code, out, _ = main(["show", f"{files['kernels']}:add"], capsys)
    assert code == 0
    assert 'extern "C" __global__ void add(' in out and "out[i] = a[i] + b[i];" in out
    assert "\x1b[" not in out, "no colours when stdout is not a terminal"
    code, out, _ = main(["show", f"{files['kernels']}:add", "--backend", "opencl"], capsys)
    assert code == 0 and "__kernel void add(__global const float* restrict a" in out


def test_show_arg_types_and_consts(files, capsys):
    target = f"{files['kernels']}:scale"
    code, out, _ = main(["show", target, "--arg-types", "float32[:]", "float32[:]", "float32"], capsys)
    assert code == 0 and "void scale(const float* __restrict__ x, float* out, float s)" in out
    code, named, _ = main(["show", target, "--arg-types", "s=float32", "x=float32[:]", "out=float32[:]"], capsys)
    assert code == 0 and named == out
    code, out, _ = main(["show", target, "--arg-types", "int32[:]", "float64[ : ]", "int64"], capsys)
    assert code == 0 and "const int* __restrict__ x" in out and "double* out" in out
    # a kernel that does not compile for these types: the compiler's message, exit status 1
    code, out, err = main(["show", target, "--arg-types", "int32[:,:]", "float64[:,:]", "int64"], capsys)
    assert code == 1 and out == "" and re.match(r".*kernels\.py:\d+:\d+: error: ", err), err
    code, out, _ = main(["show", f"{files['kernels']}:reverse_tiles", "--const", "TILE=8"], capsys)
    assert code == 0 and "__shared__ float t[8];" in out and "TILE=8" in out


def test_parse_type():
    import gpukern as gk

    assert cli.parse_type("float32[:]") == gk.Array[gk.float32]
    assert cli.parse_type(" float32[ :, : ] ") == gk.Array[gk.float32, 2]
    assert cli.parse_type("uint32[:,:,:]") == gk.Array[gk.uint32, 3]
    assert cli.parse_type("int8[:,:,:,:]") == gk.Array[gk.int8, 4]  # any number of dimensions, as NumPy's
    assert cli.parse_type("int32") is gk.int32 and cli.parse_type("bool") is gk.bool_
    for bad in ("float32[x]", "float8", "Array[float32]", "", "float32[]"):
        with pytest.raises(cli.UsageError, match="malformed type"):
            cli.parse_type(bad)
    assert cli.parse_const("TILE=16") == ("TILE", 16)
    assert cli.parse_const("EPS=1e-3") == ("EPS", 1e-3) and cli.parse_const("ON=true") == ("ON", True)


def test_show_colours_with_pygments(files, capsys):
    pytest.importorskip("pygments")
    code, out, _ = main(["show", f"{files['kernels']}:add", "--color", "always"], capsys)
    assert code == 0 and "\x1b[" in out


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["show", "{dir}/missing.py:add"], "missing.py: no such file"),
        (["show", "{kernels}"], "name a kernel as FILE.py:KERNEL"),
        (["show", "{kernels}:helper"], "'helper' in {kernels} is a function, not a @gk.kernel"),
        (["show", "{kernels}:nothing"], "has no kernel named 'nothing' (its kernels: add, scale, reverse_tiles)"),
        (["show", "{kernels}:scale", "--arg-types", "float32[x]", "float32[:]", "float32"], "malformed type"),
        (["show", "{kernels}:scale"], "needs --arg-types x=TYPE"),
        (["show", "{kernels}:scale", "--arg-types", "float32[:]"], "needs --arg-types out=TYPE"),
        (["show", "{kernels}:reverse_tiles"], "needs --const TILE=VALUE"),
        (["show", "{kernels}:reverse_tiles", "--const", "TILE=big"], "'big' is not an int"),
        (["show", "{kernels}:reverse_tiles", "--const", "TILE=8", "--const", "T=2"], "has no parameter 'T'"),
        (["show", "{kernels}:reverse_tiles", "--const", "TILE=8.5"], "TILE"),
        (["show", "{kernels}:add", "--arg-types", "a=int32[:]"], "must be an array of float32"),
        (["show", "{raises}:k"], "importing it raised RuntimeError: no GPU in this file"),
        (["show", "{syntax}:f"], "syntax.py:1:7: error: invalid syntax"),
        (["check", "{dir}/notes.txt"], "cannot be imported as Python"),
        (["check", "{dir}/missing"], "no such file or directory"),
        (["show", "{kernels}:add", "--backend", "sim"], "invalid choice: 'sim'"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(files, capsys, args, fragment):
    code, out, err = main([a.format(**files) for a in args], capsys)
    assert_usage_error(code, out, err, fragment.format(**files))


def test_bad_input_subprocess_has_no_traceback(files, tmp_path):
    for args in (["show", f"{files['raises']}:k"], ["check", f"{files['dir']}/missing.py"], ["frobnicate"]):
        p = run(args, tmp_path)
        assert_usage_error(p.returncode, p.stdout, p.stderr, "")


# ---------------------------------------------------------------- check
def test_check_reports_errors_in_compiler_format(files, capsys):
    code, out, err = main(["check", files["broken"]], capsys)
    assert code == 1 and err == ""
    path = files["broken"]
    assert re.search(rf"^{re.escape(path)}:14:9: error: this barrier\(\) is inside an if", out, re.M), out
    assert f"{path}: 2 kernels: 1 ok, 1 with errors, 0 not checked (cuda, opencl)" in out


def test_check_fails_on_kernels_it_cannot_check_unless_allowed(files, capsys):
    """A kernel without the types to compile it is not checked, which fails the check (a CI job must
    not pass having compiled nothing) unless --allow-skipped."""
    code, out, _ = main(["check", files["kernels"]], capsys)
    assert code == 1
    assert re.search(r"kernels\.py:\d+:1: error: kernel scale not checked: it needs --arg-types x=TYPE", out)
    assert "error: kernel reverse_tiles not checked: it needs --const TILE=VALUE" in out
    assert "3 kernels: 1 ok, 0 with errors, 2 not checked" in out and "or pass --allow-skipped" in out
    code, out, _ = main(["check", files["kernels"], "--allow-skipped"], capsys)
    assert code == 0 and "warning: kernel scale not checked" in out
    args = ["check", files["kernels"], "--const", "TILE=8", "--arg-types", "float32[:]", "float32[:]", "float32"]
    code, out, _ = main([*args, "--backend", "opencl"], capsys)
    assert code == 0 and "3 kernels: 3 ok, 0 with errors, 0 not checked (opencl)" in out
    code, out, _ = main(["check", "-q", "--allow-skipped", files["kernels"]], capsys)
    assert code == 0 and out == ""


def test_check_takes_files_and_directories(files, tmp_path, capsys):
    """Several files, and directories (their .py files, hidden and __pycache__ folders left out);
    a Const's default in the file is the value checked."""
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / ".hidden").mkdir()
    (tree / "sub" / "tiles.py").write_text(
        "import gpukern as gk\nfrom gpukern import Array, Const, float32\n\n@gk.kernel\n"
        "def fill(a: Array[float32], TILE: Const[int] = 8):\n    a[gk.global_id(0)] = TILE\n"
    )
    (tree / ".hidden" / "bad.py").write_text("raise RuntimeError('never imported')\n")
    (tree / "notes.py").write_text("x = 1\n")
    code, out, _ = main(["check", str(tree), files["broken"]], capsys)
    assert code == 1 and "3 files: 3 kernels: 2 ok, 1 with errors, 0 not checked" in out, out
    code, out, _ = main(["check", str(tree)], capsys)
    assert code == 0 and "1 kernel: 1 ok" in out


def test_check_subprocess(files, tmp_path):
    p = run(["check", files["broken"]], tmp_path)
    assert p.returncode == 1 and ": error: this barrier() is inside an if" in p.stdout
    assert "Traceback" not in p.stdout + p.stderr
    p = run(["check", files["kernels"], "--const", "TILE=16"], tmp_path)
    assert p.returncode == 1 and "2 ok, 0 with errors, 1 not checked" in p.stdout
    p = run(["check", files["kernels"], "--const", "TILE=16", "--allow-skipped"], tmp_path)
    assert p.returncode == 0


# ---------------------------------------------------------------- cache
def test_cache_list_and_clear(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / ("ab" * 32 + ".bin")).write_bytes(b"x" * 100)
    p = run(["cache", "list"], cache)
    assert p.returncode == 0 and f"{cache}: 1 entry, 100 B" in p.stdout and "ab" * 8 in p.stdout
    assert "(no description: an older entry)" in p.stdout
    assert run(["cache"], cache).stdout == p.stdout
    p = run(["cache", "clear"], cache)
    assert p.returncode == 0 and f"removed 1 entry (100 B) from {cache}" in p.stdout
    assert not list(cache.glob("*.bin"))
    p = run(["cache", "wipe"], cache)
    assert_usage_error(p.returncode, p.stdout, p.stderr, "invalid choice: 'wipe'")


@needs_opencl
def test_cache_list_says_which_kernel_backend_and_source(files, tmp_path):
    """Each entry: when, the kernel (with its constants), the backend and device, the file and line."""
    cache = tmp_path / "described"
    code = (
        "import importlib.util, numpy as np, gpukern as gk\n"
        f"spec = importlib.util.spec_from_file_location('k', {files['kernels']!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "gk.set_backend('opencl')\n"
        "x = np.arange(32, dtype=np.float32); m.reverse_tiles[4, 8](x, np.zeros_like(x), 8)\n"
    )
    env = {**os.environ, "GPUKERN_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    p = run(["cache", "list"], cache)
    assert p.returncode == 0 and ": 1 entry," in p.stdout, p.stdout
    line = p.stdout.splitlines()[1]
    assert "reverse_tiles, TILE=8" in line and "opencl (" in line and f"{files['kernels']}:" in line, line


def test_cache_in_process(capsys):
    import gpukern as gk

    directory = gk.cache_info()["dir"]
    code, out, _ = main(["cache", "list"], capsys)
    assert code == 0 and out.startswith(directory if directory else "the disk cache is off")


# ---------------------------------------------------------------- packaging
def test_version_and_entry_point(tmp_path):
    p = run(["--version"], tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "gpukern 0.1.0"
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert cfg["options.entry_points"]["console_scripts"].strip() == "gpukern = gpukern.tools.cli:main"
