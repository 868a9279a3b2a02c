"""The compiled-binary cache: hits and misses (on every key part), corruption recovery, the key
in the header (another kernel's entry in a kernel's place), entries that are not regular files
(FIFOs, devices, links), one build per key across threads and processes (rounds of cold
concurrent first builds), locks that cannot be had, the directory's permissions, concurrent
writers, unusable directories, GPUKERN_NO_CACHE, clearing, a second process loading from disk,
and its debug log.

Tested on OpenCL (PoCL here and in CI) and with the CUDA compile step alone (nvcc, no GPU).
Every test works in its own directory; the session's process cache is put back afterwards.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import struct
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from compilers import needs_opencl

import gpukern as gk
from gpukern import Array, Const, float32, int32
from gpukern.backends import cuda_compile as cuda_mod
from gpukern.backends import get_backend
from gpukern.backends.opencl import OpenCLBackend
from gpukern.runtime import cache
from gpukern.runtime.cache import BinaryCache, CacheWarning, make_key

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parents[1] / "cache_helpers" / "worker.py"
STAMPEDE = Path(__file__).resolve().parents[1] / "cache_helpers" / "stampede.py"
HEADER = struct.Struct("<8s32s32sQ")  # magic, key, sha256 of the payload, payload length
MAGIC = b"GPUKERN2"
HAVE_NVCC = cuda_mod.find_nvcc() is not None
needs_nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not installed")
N = 1000


@gk.kernel
def scale(a: Array[float32], out: Array[float32], n: int32, K: Const[int]):
    i = gk.global_id(0)
    if i < n:
        out[i] = a[i] * K


# ---------------------------------------------------------------- helpers
@pytest.fixture(autouse=True)
def _restore_process_cache():
    """Put the session's process cache (its directory and disk setting) and backend choice back."""
    before = cache.binary_cache()
    directory, disk = before.directory, before.disk
    yield
    cache.reset_cache(directory, disk)
    gk.set_backend(None)


class Counter:
    """A compile function that counts its calls."""

    def __init__(self, payload: bytes = b"\x7fELF pretend binary " * 8):
        self.payload = payload
        self.calls = 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.payload


def bins(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.bin")) if directory.is_dir() else []


def temp_leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".tmp-")) if directory.is_dir() else []


def read_valid_entry(path: Path) -> bytes:
    """The payload of an entry, after checking its header (its key too) and checksum ourselves."""
    blob = path.read_bytes()
    assert len(blob) >= HEADER.size, f"{path.name} is shorter than a header"
    magic, key, digest, length = HEADER.unpack_from(blob)
    payload = blob[HEADER.size :]
    assert magic == MAGIC
    assert key.hex() + ".bin" == path.name
    assert length == len(payload)
    assert hashlib.sha256(payload).digest() == digest
    return payload


def corrupt(path: Path, how: str) -> None:
    blob = bytearray(path.read_bytes())
    if how == "truncate_payload":
        path.write_bytes(bytes(blob[: HEADER.size + (len(blob) - HEADER.size) // 2]))
    elif how == "truncate_header":
        path.write_bytes(bytes(blob[: HEADER.size - 5]))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flip_payload":
        blob[HEADER.size + (len(blob) - HEADER.size) // 3] ^= 0x40
        path.write_bytes(bytes(blob))
    elif how == "flip_checksum":
        blob[40 + 3] ^= 0x01
        path.write_bytes(bytes(blob))
    elif how == "bad_magic":
        blob[0:8] = b"GPUKERN0"
        path.write_bytes(bytes(blob))
    elif how == "bad_length":
        blob[72:80] = (len(blob) - HEADER.size + 1).to_bytes(8, "little")
        path.write_bytes(bytes(blob))
    elif how == "appended":
        path.write_bytes(bytes(blob) + b"\0")
    elif how == "garbage":
        path.write_bytes(os.urandom(len(blob)))
    else:  # pragma: no cover
        raise AssertionError(how)


CORRUPTIONS = [
    "truncate_payload",
    "truncate_header",
    "empty",
    "flip_payload",
    "flip_checksum",
    "bad_magic",
    "bad_length",
    "appended",
    "garbage",
]


def cache_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


class recording:
    """``with recording() as rec:`` every warning, none filtered as already shown."""

    def __enter__(self) -> list[warnings.WarningMessage]:
        self._cm = warnings.catch_warnings(record=True)
        rec = self._cm.__enter__()
        warnings.simplefilter("always")
        return rec

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)


def run_scale(k: int, fresh: bool = True) -> None:
    """Launch ``scale`` on OpenCL and check the result; ``fresh`` drops the built kernels first,
    so the launch goes back to the binary cache."""
    if fresh:
        scale.variants.clear()
    a = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    scale[(N + 63) // 64, 64](a, out, N, k, backend="opencl")
    np.testing.assert_array_equal(out, a * k)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts real OpenCL builds from source (``OpenCLBackend._build_binary``)."""
    counter = Counter()
    original = OpenCLBackend._build_binary

    def counting(self, variant, src, options):
        counter.calls += 1
        return original(self, variant, src, options)

    monkeypatch.setattr(OpenCLBackend, "_build_binary", counting)
    return counter


@pytest.fixture
def nvcc_runs(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts real nvcc compiles (``gpukern.backends.cuda_compile.nvcc_compile``)."""
    counter = Counter()
    original = cuda_mod.nvcc_compile

    def counting(*args, **kwargs):
        counter.calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(cuda_mod, "nvcc_compile", counting)
    return counter


def cuda_source(k: int) -> str:
    return scale.source(Array[float32], Array[float32], int32, k, backend="cuda")


def subprocess_env(cache_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["GPUKERN_CACHE_DIR"] = str(cache_dir)
    env.pop("GPUKERN_NO_CACHE", None)
    env.pop("GPUKERN_BACKEND", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_worker(mode: str, cache_dir: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, str(WORKER), mode], env=subprocess_env(cache_dir), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- hit and miss (BinaryCache itself)
def test_memory_hit_compiles_once(tmp_path: Path):
    c = BinaryCache(str(tmp_path / "cache"))
    comp = Counter()
    key = make_key(source="x", backend="test")
    assert c.get_or_compile(key, comp) == comp.payload
    assert c.get_or_compile(key, comp) == comp.payload
    assert comp.calls == 1
    info = c.info()
    assert (info["hits"], info["misses"], info["disk_loads"], info["memory_entries"]) == (1, 1, 0, 1)
    assert info["entries"] == 1 and info["bytes"] == HEADER.size + len(comp.payload)
    assert info["dir"] == str(tmp_path / "cache")
    [entry] = bins(tmp_path / "cache")
    assert entry.name == key + ".bin"
    assert read_valid_entry(entry) == comp.payload


def test_disk_hit_in_a_fresh_cache(tmp_path: Path):
    d = tmp_path / "cache"
    key = make_key(source="y", backend="test")
    first = Counter(b"payload-\x00\x01\x02" * 100)
    BinaryCache(str(d)).get_or_compile(key, first)
    assert first.calls == 1

    c = BinaryCache(str(d))
    second = Counter(b"must not be used")
    assert c.get_or_compile(key, second) == first.payload
    assert second.calls == 0
    info = c.info()
    assert (info["hits"], info["misses"], info["disk_loads"]) == (1, 0, 1)
    # now from memory: disk_loads stays
    assert c.get_or_compile(key, second) == first.payload
    info = c.info()
    assert (info["hits"], info["misses"], info["disk_loads"]) == (2, 0, 1)
    assert second.calls == 0


def test_distinct_keys_are_distinct_entries(tmp_path: Path):
    c = BinaryCache(str(tmp_path / "cache"))
    a, b = Counter(b"AAAA"), Counter(b"BBBB")
    ka, kb = make_key(source="a"), make_key(source="b")
    assert c.get_or_compile(ka, a) == b"AAAA"
    assert c.get_or_compile(kb, b) == b"BBBB"
    assert c.get_or_compile(ka, b) == b"AAAA"
    assert (a.calls, b.calls) == (1, 1)
    assert c.info()["entries"] == 2
    assert temp_leftovers(tmp_path / "cache") == []


def test_readers_never_see_half_an_entry(tmp_path: Path):
    """Threads that keep deleting, rewriting and reading one big entry: every read finds it whole
    (or absent), never damaged, because entries are renamed into place."""
    d = tmp_path / "cache"
    key = make_key(source="atomic")
    payload = os.urandom(1 << 21)
    errors: list[BaseException] = []

    def hammer() -> None:
        try:
            for _ in range(25):
                try:
                    os.unlink(d / (key + ".bin"))
                except FileNotFoundError:
                    pass
                assert BinaryCache(str(d)).get_or_compile(key, Counter(payload)) == payload
        except BaseException as e:  # reported below
            errors.append(e)

    with recording() as rec:
        threads = [threading.Thread(target=hammer) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert cache_warnings(rec) == []
    assert temp_leftovers(d) == []
    [entry] = bins(d)
    assert read_valid_entry(entry) == payload


# ---------------------------------------------------------------- make_key
OPENCL_PARTS = dict(
    source="__kernel void f() {}",
    backend="opencl",
    device="dev",
    driver="1.0",
    platform="OpenCL 3.0 X",
    options=[],
    pyopencl="2026.1",
)


def test_make_key_is_stable_and_order_independent():
    k = make_key(**OPENCL_PARTS)
    assert len(k) == 64 and int(k, 16) >= 0
    assert make_key(**dict(reversed(list(OPENCL_PARTS.items())))) == k
    assert make_key(**OPENCL_PARTS) == k


@pytest.mark.parametrize(
    "part,other",
    [
        ("source", "__kernel void f() { }"),
        ("backend", "cuda"),
        ("device", "dev2"),
        ("driver", "1.1"),
        ("platform", "OpenCL 3.0 Y"),
        ("options", ["-cl-fast-relaxed-math"]),
        ("pyopencl", "2026.2"),
    ],
)
def test_make_key_changes_with_every_opencl_part(part: str, other: object):
    assert make_key(**{**OPENCL_PARTS, part: other}) != make_key(**OPENCL_PARTS)


def test_make_key_changes_with_an_extra_part_and_gpukern_version(monkeypatch: pytest.MonkeyPatch):
    k = make_key(**OPENCL_PARTS)
    assert make_key(**OPENCL_PARTS, extra=1) != k
    monkeypatch.setattr(gk._version, "__version__", gk.__version__ + ".post1")
    assert make_key(**OPENCL_PARTS) != k


@needs_opencl
def test_make_key_changes_with_the_real_device_parts():
    """The parts the OpenCL backend really uses, each replaced in turn."""
    gk.set_backend("opencl")
    b = get_backend("opencl")
    dev = b.device
    real = dict(
        source="s",
        backend="opencl",
        device=dev.name,
        driver=dev.driver_version,
        platform=dev.platform.version,
        options=b.build_options,
        pyopencl=b.cl.VERSION_TEXT,
    )
    base = make_key(**real)
    keys = {make_key(**{**real, part: str(value) + " (other)"}) for part, value in real.items()}
    assert base not in keys and len(keys) == len(real)


# ---------------------------------------------------------------- CUDA compile step: every key part
@pytest.fixture(scope="module")
def cubin_seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory holding the cubin of ``scale`` (K=2) for sm_80, compiled once by nvcc."""
    if not HAVE_NVCC:
        pytest.skip("nvcc is not installed")
    d = tmp_path_factory.mktemp("cubin-seed") / "cache"
    before = cache.binary_cache()
    try:
        cache.reset_cache(str(d))
        binary = cuda_mod.cubin(cuda_source(2), "sm_80", compiler="nvcc")
        assert binary[:4] == b"\x7fELF"
    finally:
        cache.reset_cache(before.directory, before.disk)
    assert len(bins(d)) == 1
    return d


@pytest.fixture
def cubin_cache(cubin_seed: Path, tmp_path: Path) -> Path:
    d = tmp_path / "cache"
    shutil.copytree(cubin_seed, d)
    cache.reset_cache(str(d))
    return d


@needs_nvcc
def test_cubin_same_parts_hit(cubin_cache: Path, nvcc_runs: Counter):
    seeded = read_valid_entry(bins(cubin_cache)[0])
    assert cuda_mod.cubin(cuda_source(2), "sm_80", compiler="nvcc") == seeded  # from disk
    assert cuda_mod.cubin(cuda_source(2), "sm_80", (), compiler="nvcc") == seeded  # from memory
    assert nvcc_runs.calls == 0
    info = gk.cache_info()
    assert (info["hits"], info["misses"], info["disk_loads"], info["entries"]) == (2, 0, 1, 1)


@needs_nvcc
@pytest.mark.parametrize("part", ["source", "arch", "options", "nvcc", "gpukern"])
def test_cubin_misses_on_every_key_part(
    part: str, cubin_seed: Path, cubin_cache: Path, nvcc_runs: Counter, monkeypatch: pytest.MonkeyPatch
):
    source, arch, options = cuda_source(2), "sm_80", ()
    if part == "source":
        source = cuda_source(3)
    elif part == "arch":
        arch = "sm_90"
    elif part == "options":
        options = ("-lineinfo",)
    elif part == "nvcc":
        real = cuda_mod.nvcc_fingerprint()
        monkeypatch.setattr(cuda_mod, "nvcc_fingerprint", lambda: real.rsplit(":", 1)[0] + ":99")  # a newer nvcc
    elif part == "gpukern":
        monkeypatch.setattr(gk._version, "__version__", "999.0.0")
    binary = cuda_mod.cubin(source, arch, options, compiler="nvcc")
    assert binary[:4] == b"\x7fELF"
    assert nvcc_runs.calls == 1
    info = gk.cache_info()
    assert (info["misses"], info["hits"], info["disk_loads"], info["entries"]) == (1, 0, 0, 2)
    # the same changed parts again: a hit, no second compile
    assert cuda_mod.cubin(source, arch, options, compiler="nvcc") == binary
    assert nvcc_runs.calls == 1
    # and the new entry is what a fresh process would load
    seeded = {p.name for p in bins(cubin_seed)}
    [new] = [p for p in bins(cubin_cache) if p.name not in seeded]
    assert read_valid_entry(new) == binary


# ---------------------------------------------------------------- OpenCL: hit, miss, key parts
@needs_opencl
def test_opencl_hit_miss_and_disk_load(tmp_path: Path, builds: Counter):
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    info = gk.cache_info()
    assert builds.calls == 1 and (info["misses"], info["hits"], info["entries"]) == (1, 0, 1)

    run_scale(2, fresh=False)  # the built kernel is reused; the cache is not even consulted
    assert builds.calls == 1 and gk.cache_info()["hits"] == 0

    run_scale(2)  # a fresh variant: a memory hit
    info = gk.cache_info()
    assert builds.calls == 1 and (info["misses"], info["hits"], info["disk_loads"]) == (1, 1, 0)

    cache.reset_cache(str(d))  # as a new process would: loaded from disk, not built
    run_scale(2)
    info = gk.cache_info()
    assert builds.calls == 1 and (info["misses"], info["hits"], info["disk_loads"]) == (0, 1, 1)
    read_valid_entry(bins(d)[0])


@needs_opencl
def test_opencl_source_change_misses(tmp_path: Path, builds: Counter):
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    run_scale(3)  # a different Const value: different OpenCL C
    assert builds.calls == 2 and len(bins(d)) == 2
    run_scale(2)
    run_scale(3)
    info = gk.cache_info()
    assert builds.calls == 2 and (info["misses"], info["hits"]) == (2, 2)


@needs_opencl
def test_opencl_build_options_change_misses(tmp_path: Path, builds: Counter, monkeypatch: pytest.MonkeyPatch):
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    monkeypatch.setattr(OpenCLBackend, "build_options", ["-DGPUKERN_CACHE_TEST=1"])
    run_scale(2)
    assert builds.calls == 2 and len(bins(d)) == 2
    monkeypatch.setattr(OpenCLBackend, "build_options", [])
    run_scale(2)
    info = gk.cache_info()
    assert builds.calls == 2 and (info["misses"], info["hits"]) == (2, 1)


@needs_opencl
def test_opencl_gpukern_version_change_misses(tmp_path: Path, builds: Counter, monkeypatch: pytest.MonkeyPatch):
    cache.reset_cache(str(tmp_path / "cache"))
    run_scale(2)
    monkeypatch.setattr(gk._version, "__version__", "999.0.0")
    run_scale(2)
    assert builds.calls == 2 and len(bins(tmp_path / "cache")) == 2


# ---------------------------------------------------------------- corruption
@pytest.mark.parametrize("how", CORRUPTIONS)
def test_damaged_entry_warns_once_and_is_rewritten(tmp_path: Path, how: str):
    d = tmp_path / "cache"
    key = make_key(source=how)
    payload = bytes(range(256)) * 4
    BinaryCache(str(d)).get_or_compile(key, Counter(payload))
    [entry] = bins(d)
    corrupt(entry, how)

    c = BinaryCache(str(d))
    comp = Counter(payload)
    with recording() as rec:
        assert c.get_or_compile(key, comp) == payload
        assert c.get_or_compile(key, comp) == payload  # then from memory, silently
    assert len(cache_warnings(rec)) == 1, cache_warnings(rec)
    assert "damaged" in cache_warnings(rec)[0]
    assert comp.calls == 1
    assert c.info()["misses"] == 1
    assert read_valid_entry(entry) == payload
    assert temp_leftovers(d) == []

    # the rewritten entry serves the next process without a warning
    fresh = BinaryCache(str(d))
    with recording() as rec:
        assert fresh.get_or_compile(key, Counter(b"unused")) == payload
    assert cache_warnings(rec) == [] and fresh.info()["disk_loads"] == 1


@needs_opencl
@pytest.mark.parametrize("how", ["truncate_payload", "flip_payload", "garbage"])
def test_opencl_runs_from_a_corrupted_cache(tmp_path: Path, builds: Counter, how: str):
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    [entry] = bins(d)
    corrupt(entry, how)

    cache.reset_cache(str(d))
    with recording() as rec:
        run_scale(2)
    assert len(cache_warnings(rec)) == 1, cache_warnings(rec)
    assert builds.calls == 2
    read_valid_entry(entry)

    cache.reset_cache(str(d))
    with recording() as rec:
        run_scale(2)
    assert cache_warnings(rec) == [] and builds.calls == 2 and gk.cache_info()["disk_loads"] == 1


@needs_opencl
def test_opencl_recovers_from_a_checksummed_entry_the_driver_rejects(tmp_path: Path, builds: Counter):
    """An entry with a valid header but a payload the driver cannot load (written by a broken
    writer, or by a driver build that reports the same version) must not break every later
    launch: like any damaged entry, it is reported once and rebuilt."""
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    [entry] = bins(d)
    junk = b"this is not an OpenCL program binary" * 8
    entry.write_bytes(HEADER.pack(MAGIC, bytes.fromhex(entry.stem), hashlib.sha256(junk).digest(), len(junk)) + junk)

    cache.reset_cache(str(d))
    with recording() as rec:
        run_scale(2)  # observed: BackendError "the OpenCL driver could not load a cached binary"
    assert len(cache_warnings(rec)) == 1
    assert builds.calls == 2
    assert read_valid_entry(entry) != junk


# ---------------------------------------------------------------- the key in the header
@pytest.mark.parametrize("how", ["copied", "hard_linked"])
def test_entry_of_another_key_is_refused_and_replaced(tmp_path: Path, how: str):
    """A valid entry of key A in the file of key B must not be served as B's binary."""
    d = tmp_path / "cache"
    ka, kb = make_key(source="kernel A"), make_key(source="kernel B")
    c = BinaryCache(str(d))
    c.get_or_compile(ka, Counter(b"binary of A"))
    c.get_or_compile(kb, Counter(b"binary of B"))
    a_path, b_path = d / (ka + ".bin"), d / (kb + ".bin")
    b_path.unlink()
    if how == "copied":
        shutil.copyfile(a_path, b_path)
    else:
        os.link(a_path, b_path)

    comp = Counter(b"binary of B")
    fresh = BinaryCache(str(d))
    with recording() as rec:
        assert fresh.get_or_compile(kb, comp) == b"binary of B"
    [message] = cache_warnings(rec)
    assert "misplaced entry" in message and str(b_path) in message and ka[:16] in message
    assert comp.calls == 1 and fresh.info()["misses"] == 1
    assert read_valid_entry(b_path) == b"binary of B"
    assert read_valid_entry(a_path) == b"binary of A"  # the link was replaced, not written through
    with recording() as rec:
        assert BinaryCache(str(d)).get_or_compile(kb, Counter(b"unused")) == b"binary of B"
    assert cache_warnings(rec) == []


@gk.kernel
def shift(a: Array[float32], out: Array[float32], n: int32):
    i = gk.global_id(0)
    if i < n:
        out[i] = a[i] + 7.0


@needs_opencl
@pytest.mark.parametrize("victim", ["same_kernel_other_constant", "other_kernel"])
def test_opencl_runs_its_own_code_when_another_entry_is_in_its_place(tmp_path: Path, builds: Counter, victim: str):
    """The entry of scale(K=2) copied over that of scale(K=3) used to run K=2 silently; over that of
    another kernel, pyopencl raised LogicError (no such kernel in the program) on every run."""
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    a = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)

    def run_victim() -> np.ndarray:
        out[:] = 0
        if victim == "other_kernel":
            shift.variants.clear()
            shift[(N + 63) // 64, 64](a, out, N, backend="opencl")
            return a + 7
        run_scale(3)
        return out

    run_scale(2)
    [scale2] = bins(d)
    expected = run_victim()
    [victim_entry] = [p for p in bins(d) if p != scale2]
    shutil.copyfile(scale2, victim_entry)

    cache.reset_cache(str(d))
    with recording() as rec:
        got = run_victim()
    np.testing.assert_array_equal(out if victim == "other_kernel" else got, expected)
    assert len(cache_warnings(rec)) == 1 and "misplaced entry" in cache_warnings(rec)[0]
    assert builds.calls == 3
    assert read_valid_entry(victim_entry) != read_valid_entry(scale2)


def test_entry_of_the_previous_format_is_rebuilt_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Entries of format 1 (no key in the header) are stale after the upgrade: rebuilt without a warning."""
    caplog.set_level(logging.DEBUG, logger="gpukern")
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    key = make_key(source="old format")
    old = b"binary written by the previous gpukern"
    entry = d / (key + ".bin")
    entry.write_bytes(struct.pack("<8s32sQ", b"GPUKERN1", hashlib.sha256(old).digest(), len(old)) + old)
    comp = Counter(b"rebuilt binary")
    with recording() as rec:
        assert BinaryCache(str(d)).get_or_compile(key, comp) == b"rebuilt binary"
    assert cache_warnings(rec) == [] and comp.calls == 1
    assert "miss, stale entry" in caplog.text
    assert read_valid_entry(entry) == b"rebuilt binary"


# ---------------------------------------------------------------- entries that are not regular files
def finishes(fn, timeout: float = 20.0):
    """``fn()`` run in a daemon thread; fails (instead of hanging the session) if it never returns."""
    result: list = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(fn())
        except BaseException as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"still blocked after {timeout} s"
    if errors:
        raise errors[0]
    return result[0]


def make_hostile(path: Path, how: str, valid_entry: Path) -> None:
    if how == "fifo":
        os.mkfifo(path)
    elif how == "link_to_dev_zero":
        path.symlink_to("/dev/zero")
    elif how == "link_to_a_valid_entry":
        path.symlink_to(valid_entry)
    elif how == "dangling_link":
        path.symlink_to(path.parent / "nowhere")
    elif how == "char_device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is on Linux
        except (PermissionError, AttributeError) as e:
            pytest.skip(f"cannot make a device node here: {e}")
    elif how == "directory":
        path.mkdir()
    else:  # pragma: no cover
        raise AssertionError(how)


HOSTILE = ["fifo", "link_to_dev_zero", "link_to_a_valid_entry", "dangling_link", "char_device", "directory"]


@pytest.mark.parametrize("how", HOSTILE)
def test_an_entry_that_is_not_a_regular_file_is_refused(tmp_path: Path, how: str):
    """Symbolic links are refused, even to a valid entry: entries are only ever regular files
    written by the cache itself (the directory may be a link; its entries may not)."""
    d = tmp_path / "cache"
    key, other = make_key(source=how), make_key(source="a valid entry")
    BinaryCache(str(d)).get_or_compile(other, Counter(b"payload"))
    entry = d / (key + ".bin")
    make_hostile(entry, how, d / (other + ".bin"))

    c = BinaryCache(str(d))
    comp = Counter(b"payload")
    with recording() as rec:
        assert finishes(lambda: c.get_or_compile(key, comp)) == b"payload"
        assert c.get_or_compile(key, comp) == b"payload"
    [message] = cache_warnings(rec)
    assert str(entry) in message and "not a regular file" in message
    assert comp.calls == 1 and c.info()["dir"] == str(d)  # the disk cache stays on
    if how == "directory":  # a directory cannot be replaced by a file: that entry stays in memory
        assert entry.is_dir() and c.info()["entries"] == 1  # and is not counted as an entry
    else:
        assert entry.is_file() and not entry.is_symlink()
        assert read_valid_entry(entry) == b"payload"
        with recording() as rec:
            assert BinaryCache(str(d)).get_or_compile(key, Counter(b"unused")) == b"payload"
        assert cache_warnings(rec) == []
    assert read_valid_entry(d / (other + ".bin")) == b"payload"  # a link's target is left alone


@pytest.mark.parametrize("how", ["fifo", "link_to_dev_zero", "directory"])
def test_get_does_not_block_or_read_forever_either(tmp_path: Path, how: str):
    """``get`` (autotune's way in) reads entries the same way: one warning, no entry."""
    d = tmp_path / "cache"
    key = make_key(source=how)
    d.mkdir(mode=0o700)
    make_hostile(d / (key + ".bin"), how, d / "unused")
    with recording() as rec:
        assert finishes(lambda: BinaryCache(str(d)).get(key)) is None
    assert len(cache_warnings(rec)) == 1


def test_an_entry_that_claims_a_huge_length_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A header that declares more than the file holds is refused before its payload is read."""
    d = tmp_path / "cache"
    key = make_key(source="huge")
    d.mkdir(mode=0o700)
    (d / (key + ".bin")).write_bytes(HEADER.pack(MAGIC, bytes.fromhex(key), bytes(32), 1 << 62) + b"tiny")
    with recording() as rec:
        assert BinaryCache(str(d)).get_or_compile(key, Counter(b"ok")) == b"ok"
    [message] = cache_warnings(rec)
    assert "damaged entry" in message and "size does not match" in message


def test_a_read_error_is_a_quiet_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An I/O error past the open (EIO on a failing disk) is a miss, not a traceback."""
    d = tmp_path / "cache"
    key = make_key(source="eio")
    BinaryCache(str(d)).get_or_compile(key, Counter(b"payload"))

    class Failing:
        def __init__(self, *args: object, **kwargs: object):
            os.close(args[0])

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def read(self, n: int) -> bytes:
            raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(cache, "open", Failing, raising=False)  # the module's open(), not the builtin
    c = BinaryCache(str(d))
    comp = Counter(b"payload")
    with recording() as rec:
        assert c.get_or_compile(key, comp) == b"payload"
    assert comp.calls == 1 and cache_warnings(rec) == []
    monkeypatch.undo()
    assert read_valid_entry(d / (key + ".bin")) == b"payload"


@pytest.mark.parametrize("key", ["", "0" * 63, "G" * 64, "A" * 64, "../" + "0" * 61, "0" * 65])
def test_a_key_that_make_key_did_not_make_is_an_error(tmp_path: Path, key: str):
    c = BinaryCache(str(tmp_path / "cache"))
    with pytest.raises(gk.GpukernError, match="not a gpukern cache key"):
        c.get_or_compile(key, Counter())
    with pytest.raises(cache.CacheKeyError):
        c.put(key, b"x")
    assert not (tmp_path / "cache").exists() or bins(tmp_path / "cache") == []


# ---------------------------------------------------------------- concurrent writers
def _run_concurrently(mode: str, cache_dir: Path, tmp_path: Path, n: int = 4) -> list[dict]:
    go = tmp_path / "go"
    readies = [tmp_path / f"ready-{i}" for i in range(n)]
    env = subprocess_env(cache_dir)
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), mode, str(go), str(r)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in readies
    ]
    try:
        deadline = time.monotonic() + 120
        while not all(r.exists() for r in readies):
            dead = [p.returncode for p in procs if p.poll() is not None]
            assert not dead, f"a worker exited before the start: {dead}"
            assert time.monotonic() < deadline, "workers never became ready"
            time.sleep(0.01)
        go.touch()  # all start compiling at once
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    reports = []
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def _check_single_valid_entry(cache_dir: Path, reports: list[dict]) -> None:
    assert all(r["correct"] for r in reports), reports
    assert len({r["pid"] for r in reports}) == len(reports)
    for r in reports:  # each process compiled it or loaded it, once, and never saw a damaged entry
        assert r["cache_warnings"] == [], r
        assert r["cache"]["misses"] + r["cache"]["disk_loads"] == 1, r
        assert r["cache"]["dir"] == str(cache_dir)
    entries = bins(cache_dir)
    assert len(entries) == 1, [p.name for p in entries]
    read_valid_entry(entries[0])
    assert temp_leftovers(cache_dir) == []
    about = entries[0].name[: -len(".bin")] + ".about"  # what a kernel's holds, for `gpukern cache list`
    names = sorted(p.name for p in cache_dir.iterdir())
    assert names in ([entries[0].name], [about, entries[0].name]), names
    if about in names:
        assert json.loads((cache_dir / about).read_text())["kernel"]


@needs_opencl
def test_concurrent_writers_opencl(tmp_path: Path):
    d = tmp_path / "cache"
    reports = _run_concurrently("opencl", d, tmp_path)
    _check_single_valid_entry(d, reports)
    # and the entry they left is what the next process loads
    again = run_worker("opencl", d)
    assert again["correct"] and again["cache"]["disk_loads"] == 1 and again["cache"]["misses"] == 0


@needs_nvcc
def test_concurrent_writers_cubin(tmp_path: Path):
    d = tmp_path / "cache"
    reports = _run_concurrently("cubin", d, tmp_path)
    _check_single_valid_entry(d, reports)
    assert len({r["size"] for r in reports}) == 1
    payload = read_valid_entry(bins(d)[0])
    assert payload[:4] == b"\x7fELF" and len(payload) == reports[0]["size"]


# ---------------------------------------------------------------- one build per key: threads and processes
def stampede(mode: str, processes: int, rounds: int, workdir: Path) -> list[dict]:
    """``rounds`` rounds of ``processes`` processes building one kernel at once, each round with
    cold caches (see tests/cache_helpers/stampede.py); one dict per round."""
    env = subprocess_env(workdir / "unused")
    env["OPENBLAS_NUM_THREADS"] = "1"
    proc = subprocess.run(
        [sys.executable, str(STAMPEDE), mode, str(processes), str(rounds), str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == rounds, proc.stdout
    for r in results:
        r["stderr"] = proc.stderr
    return results


def check_built_once(r: dict, processes: int, cache_dir: Path) -> None:
    assert r["statuses"] == [0] * processes, (r["statuses"], r["reports"], r["stderr"][-3000:])
    reports = r["reports"]
    assert all(rep["correct"] for rep in reports), reports
    assert all(rep["cache_warnings"] == [] for rep in reports), reports
    # one compile in the round, counted by the compiler wrappers; every other process loaded it
    assert sum(rep["compiles"] for rep in reports) == 1, reports
    assert sorted(rep["cache"]["misses"] for rep in reports) == [0] * (processes - 1) + [1]
    assert all(rep["cache"]["disk_loads"] == 1 - rep["cache"]["misses"] for rep in reports)
    # exactly one entry (with what it holds, where a kernel's), and no lock file or temporary left
    entries = [n for n in r["names"] if not n.endswith(".about")]
    assert len(entries) == 1 and entries[0].endswith(".bin"), r["names"]
    assert sorted(r["names"]) in ([entries[0]], [entries[0][: -len(".bin")] + ".about", entries[0]]), r["names"]
    read_valid_entry(cache_dir / entries[0])


@pytest.mark.slow  # (minutes of the README command's 2 cores: .ci/run runs it after)
@needs_opencl
def test_concurrent_first_builds_opencl_build_once(tmp_path: Path):
    """8 processes x 10 rounds, cold caches and one shared POCL_CACHE_DIR per round (the setting
    in which PoCL aborted 2 of 8 processes in pocl_binary_get_kernels_metadata): one build per round."""
    rounds = stampede("opencl", 8, 10, tmp_path)
    for i, r in enumerate(rounds):
        check_built_once(r, 8, tmp_path / f"round-{i}" / "cache")


@needs_nvcc
def test_concurrent_first_builds_cubin_run_nvcc_once(tmp_path: Path):
    rounds = stampede("cubin", 4, 2, tmp_path)
    for i, r in enumerate(rounds):
        check_built_once(r, 4, tmp_path / f"round-{i}" / "cache")


class SlowCounter(Counter):
    """A compile that takes a while, so that callers overlap."""

    def __call__(self) -> bytes:
        time.sleep(0.2)
        return super().__call__()


@pytest.mark.parametrize("disk", [True, False])
def test_threads_build_a_key_once(tmp_path: Path, disk: bool):
    d = tmp_path / "cache"
    c = BinaryCache(str(d), disk=disk)
    key = make_key(source="threads")
    comp = SlowCounter()
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(c.get_or_compile(key, comp))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [comp.payload] * 8
    assert comp.calls == 1
    info = c.info()
    assert info["misses"] == 1 and info["hits"] == 7
    assert c._building == {}  # the per-key locks are dropped once nobody builds
    if disk:
        assert sorted(p.name for p in d.iterdir()) == [key + ".bin"]
    else:
        assert not d.exists()  # no disk cache: no directory, no lock files


def test_instances_on_one_directory_build_a_key_once(tmp_path: Path):
    """Separate caches (as separate processes have) meet at the lock file."""
    d = tmp_path / "cache"
    key = make_key(source="instances")
    comp = SlowCounter()
    caches = [BinaryCache(str(d)) for _ in range(4)]
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda c=c: results.append(c.get_or_compile(key, comp))) for c in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [comp.payload] * 4 and comp.calls == 1
    assert sorted(c.info()["disk_loads"] for c in caches) == [0, 1, 1, 1]
    assert sorted(p.name for p in d.iterdir()) == [key + ".bin"]


def hold_lock(d: Path, key: str):
    """Hold ``<key>.lock`` as another process building ``key`` would; returns the open file."""
    import fcntl

    d.mkdir(mode=0o700, exist_ok=True)
    f = open(d / (key + ".lock"), "wb")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def test_a_lock_held_too_long_is_given_up(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="gpukern")
    d = tmp_path / "cache"
    key = make_key(source="held")
    with hold_lock(d, key):
        c = BinaryCache(str(d))
        c.lock_timeout = 0.3
        comp = Counter()
        start = time.monotonic()
        with recording() as rec:
            assert finishes(lambda: c.get_or_compile(key, comp)) == comp.payload
        waited = time.monotonic() - start
    assert 0.3 <= waited < 10
    assert comp.calls == 1 and cache_warnings(rec) == []
    assert "building without the lock" in caplog.text and "still held" in caplog.text
    assert read_valid_entry(d / (key + ".bin")) == comp.payload


def test_a_hit_does_not_wait_for_a_build(tmp_path: Path):
    """Only a miss takes the lock: a process building a key does not hold up those loading it."""
    d = tmp_path / "cache"
    key = make_key(source="hit while held")
    BinaryCache(str(d)).get_or_compile(key, Counter(b"there"))
    with hold_lock(d, key):
        c = BinaryCache(str(d))
        start = time.monotonic()
        assert finishes(lambda: c.get_or_compile(key, Counter(b"unused"))) == b"there"
        assert time.monotonic() - start < 5 and c.info()["disk_loads"] == 1


@pytest.mark.parametrize("how", ["lock_is_a_directory", "lock_is_a_fifo", "flock_unsupported"])
def test_an_unusable_lock_builds_without_it(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """A lock file that cannot be made or locked (NFS without locks: ENOLCK) costs the lock, not the build."""
    caplog.set_level(logging.DEBUG, logger="gpukern")
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    key = make_key(source=how)
    lock = d / (key + ".lock")
    if how == "lock_is_a_directory":
        lock.mkdir()
    elif how == "lock_is_a_fifo":
        os.mkfifo(lock)
    else:

        class NoLocks:
            LOCK_EX, LOCK_NB = 2, 4

            @staticmethod
            def flock(fd: int, op: int) -> None:
                raise OSError(errno.ENOLCK, "No locks available")

        monkeypatch.setattr(cache, "fcntl", NoLocks)
    c = BinaryCache(str(d))
    c.lock_timeout = 60
    comp = Counter()
    start = time.monotonic()
    with recording() as rec:
        assert finishes(lambda: c.get_or_compile(key, comp)) == comp.payload
    assert time.monotonic() - start < 10  # no waiting out the timeout
    assert comp.calls == 1 and cache_warnings(rec) == []
    assert "building without the lock" in caplog.text
    assert read_valid_entry(d / (key + ".bin")) == comp.payload
    assert c.info()["dir"] == str(d)


def test_a_stale_lock_file_is_taken_and_removed(tmp_path: Path):
    """A lock file left by a killed process (nobody holds it) does not delay the build."""
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    key = make_key(source="stale lock")
    (d / (key + ".lock")).write_bytes(b"")
    c = BinaryCache(str(d))
    c.lock_timeout = 60
    start = time.monotonic()
    c.get_or_compile(key, Counter())
    assert time.monotonic() - start < 5
    assert sorted(p.name for p in d.iterdir()) == [key + ".bin"]


def test_a_failed_build_releases_its_locks(tmp_path: Path):
    d = tmp_path / "cache"
    c = BinaryCache(str(d))
    c.lock_timeout = 5
    key = make_key(source="fails")

    def broken() -> bytes:
        raise gk.errors.BackendError("the compiler failed")

    with pytest.raises(gk.errors.BackendError):
        c.get_or_compile(key, broken)
    assert c._building == {} and list(d.iterdir()) == []
    start = time.monotonic()
    assert c.get_or_compile(key, Counter(b"second try")) == b"second try"
    assert time.monotonic() - start < 2


# ---------------------------------------------------------------- second process loads from disk
@needs_opencl
def test_second_process_loads_from_disk(tmp_path: Path):
    d = tmp_path / "cache"
    first = run_worker("opencl", d)
    assert first["correct"] and first["cache_warnings"] == []
    assert (first["cache"]["misses"], first["cache"]["disk_loads"], first["cache"]["entries"]) == (1, 0, 1)
    second = run_worker("opencl", d)
    assert second["correct"]
    assert second["cache"]["misses"] == 0 and second["cache"]["disk_loads"] >= 1
    assert second["cache"]["entries"] == 1


# ---------------------------------------------------------------- unusable directory
@pytest.mark.parametrize("where", ["through_a_file", "is_a_file"])
def test_unusable_directory_degrades_to_memory(tmp_path: Path, where: str):
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    d = afile / "cache" if where == "through_a_file" else afile
    c = BinaryCache(str(d))
    one, two = Counter(b"one"), Counter(b"two")
    with recording() as rec:
        assert c.get_or_compile(make_key(source="1"), one) == b"one"
        assert c.get_or_compile(make_key(source="2"), two) == b"two"
        assert c.get_or_compile(make_key(source="1"), one) == b"one"
    assert len(cache_warnings(rec)) == 1, cache_warnings(rec)
    assert (one.calls, two.calls) == (1, 1)
    info = c.info()
    assert info["dir"] is None and info["entries"] == 0 and info["memory_entries"] == 2
    assert (info["hits"], info["misses"]) == (1, 2)
    assert afile.read_text() == "not a directory"


@needs_opencl
def test_unusable_directory_opencl_still_runs(tmp_path: Path, builds: Counter):
    afile = tmp_path / "afile"
    afile.write_text("x")
    cache.reset_cache(str(afile / "cache"))
    with recording() as rec:
        run_scale(2)
        run_scale(3)
        run_scale(2)
    assert len(cache_warnings(rec)) == 1, cache_warnings(rec)
    assert builds.calls == 2
    info = gk.cache_info()
    assert info["dir"] is None and info["entries"] == 0 and info["hits"] == 1


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_directory_is_created_private(tmp_path: Path, umask: int):
    d = tmp_path / "deep" / "er" / "cache"
    old = os.umask(umask)
    try:
        BinaryCache(str(d)).get_or_compile(make_key(source="mode"), Counter())
    finally:
        os.umask(old)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert len(bins(d)) == 1


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o1777, 0o720, 0o702])
def test_an_open_directory_of_ours_is_made_private(tmp_path: Path, mode: int):
    d = tmp_path / "cache"
    d.mkdir()
    os.chmod(d, mode)
    c = BinaryCache(str(d))
    with recording() as rec:
        c.get_or_compile(make_key(source="open dir"), Counter())
        c.get_or_compile(make_key(source="open dir 2"), Counter())
    [message] = cache_warnings(rec)
    assert str(d) in message and "made it private" in message and f"{mode:o}" in message
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert len(bins(d)) == 2 and c.info()["dir"] == str(d)


@pytest.mark.parametrize("mode", [0o700, 0o750, 0o755])
def test_a_directory_nobody_else_writes_is_left_as_it_is(tmp_path: Path, mode: int):
    d = tmp_path / "cache"
    d.mkdir()
    os.chmod(d, mode)
    with recording() as rec:
        BinaryCache(str(d)).get_or_compile(make_key(source="closed dir"), Counter())
    assert cache_warnings(rec) == []
    assert stat.S_IMODE(d.stat().st_mode) == mode and len(bins(d)) == 1


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a directory to another uid (os.chown) needs root"
)
def test_an_open_directory_of_another_user_is_not_used(tmp_path: Path):
    """Another user could plant entries there: nothing is read from it or written to it."""
    d = tmp_path / "cache"
    key = make_key(source="planted")
    BinaryCache(str(d)).get_or_compile(key, Counter(b"planted by someone else"))
    os.chown(d, 54321, 54321)
    os.chmod(d, 0o777)

    c = BinaryCache(str(d))
    comp = Counter(b"our own build")
    with recording() as rec:
        assert c.get_or_compile(key, comp) == b"our own build"
        assert c.get_or_compile(make_key(source="another"), Counter(b"x")) == b"x"
        assert c.get_or_compile(key, comp) == b"our own build"
    [message] = cache_warnings(rec)
    assert str(d) in message and "54321" in message and "not to us" in message and "memory only" in message
    assert comp.calls == 1 and c.info()["dir"] is None and c.info()["memory_entries"] == 2
    assert stat.S_IMODE(d.stat().st_mode) == 0o777 and d.stat().st_uid == 54321  # not ours to change
    assert [read_valid_entry(p) for p in bins(d)] == [b"planted by someone else"]  # nothing written


# ---------------------------------------------------------------- environment, clear, info
def test_cache_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPUKERN_CACHE_DIR", str(tmp_path / "envcache"))
    monkeypatch.delenv("GPUKERN_NO_CACHE", raising=False)
    cache.reset_cache()
    assert gk.cache_info()["dir"] == str(tmp_path / "envcache")
    cache.binary_cache().get_or_compile(make_key(source="env"), Counter())
    assert len(bins(tmp_path / "envcache")) == 1


@needs_opencl
def test_no_cache_env_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: Counter):
    d = tmp_path / "cache"
    monkeypatch.setenv("GPUKERN_CACHE_DIR", str(d))
    monkeypatch.setenv("GPUKERN_NO_CACHE", "1")
    cache.reset_cache()
    with recording() as rec:
        run_scale(2)
        run_scale(2)
        assert cache.binary_cache().get_or_compile(make_key(source="nc"), Counter(b"nc")) == b"nc"
    assert cache_warnings(rec) == []
    assert not d.exists()
    info = gk.cache_info()
    assert info["dir"] is None and info["entries"] == 0
    assert builds.calls == 1 and info["hits"] == 1 and info["disk_loads"] == 0  # memory still works


def test_no_cache_env_zero_keeps_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("GPUKERN_CACHE_DIR", str(d))
    monkeypatch.setenv("GPUKERN_NO_CACHE", "0")
    cache.reset_cache()
    cache.binary_cache().get_or_compile(make_key(source="z"), Counter())
    assert len(bins(d)) == 1


@needs_opencl
def test_clear_cache_empties_memory_and_disk(tmp_path: Path, builds: Counter):
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    cache.binary_cache().get_or_compile(make_key(source="other"), Counter())
    info = gk.cache_info()
    assert {"dir", "entries", "bytes", "hits", "misses"} <= set(info)
    assert info["entries"] == 2 and info["bytes"] == sum(p.stat().st_size for p in bins(d)) > 0
    assert info["memory_entries"] == 2
    (d / ".tmp-stale").write_bytes(b"half an entry")

    gk.clear_cache()
    info = gk.cache_info()
    assert (info["entries"], info["bytes"], info["memory_entries"]) == (0, 0, 0)
    assert list(d.iterdir()) == []
    run_scale(2)  # built again, as nothing is left
    assert builds.calls == 2 and len(bins(d)) == 1
    assert gk.clear_cache is cache.clear_cache and gk.cache_info is cache.cache_info


# ---------------------------------------------------------------- logging
def test_debug_log_says_compile_load_and_why(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="gpukern")
    d = tmp_path / "cache"
    key = make_key(source="log")
    BinaryCache(str(d)).get_or_compile(key, Counter(), what="logged_kernel")
    text = caplog.text
    assert "compiling logged_kernel" in text
    assert "miss, no entry" in text and key + ".bin" in text

    caplog.clear()
    BinaryCache(str(d)).get_or_compile(key, Counter(), what="logged_kernel")
    assert "loaded logged_kernel from" in caplog.text and "compiling" not in caplog.text

    caplog.clear()
    corrupt(bins(d)[0], "flip_payload")
    with recording():
        BinaryCache(str(d)).get_or_compile(key, Counter(), what="logged_kernel")
    assert "miss, damaged entry" in caplog.text and "compiling logged_kernel" in caplog.text

    caplog.clear()
    afile = tmp_path / "afile"
    afile.write_text("x")
    with recording():
        BinaryCache(str(afile / "cache")).get_or_compile(key, Counter(), what="logged_kernel")
    assert "cannot write the cache directory" in caplog.text


@needs_opencl
def test_debug_log_names_the_opencl_kernel(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="gpukern")
    d = tmp_path / "cache"
    cache.reset_cache(str(d))
    run_scale(2)
    assert "compiling scale" in caplog.text
    caplog.clear()
    cache.reset_cache(str(d))
    run_scale(2)
    assert "loaded scale from" in caplog.text and str(d) in caplog.text
