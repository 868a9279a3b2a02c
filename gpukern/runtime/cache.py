"""The compiled-binary cache shared by every backend: in memory, and on disk.

A binary (a CUDA cubin, an OpenCL program binary) is stored under a key that is a
SHA-256 of everything that could change it: the generated source, the backend,
the device (architecture, or name and driver version), the compiler's version and
options, and gpukern's version.  Changing any of them misses; changing none hits.

Disk entries are plain bytes behind a small header holding the entry's own key and a
SHA-256 of the payload, written to a temporary file and renamed into place, so readers
never see half an entry and concurrent writers of one key all succeed.  An entry is
used only when its file is a regular file (never a link, FIFO or device: those could
block the reader or feed it without end), its size agrees with its header, its
checksum matches, and its key is the one asked for (an entry copied or linked over
another kernel's is not run in its place).  Anything else is reported once
(``CacheWarning``), recompiled, and replaced; entries of an older format are replaced
quietly.  Nothing read from the cache is ever unpickled or executed as Python: it is
handed to the driver as a binary, after its checksum.

A key is built once however many threads and processes miss it at the same moment: the
build ("look on disk again, compile, write") runs under a lock per key, a ``threading``
lock within the process and ``flock`` on ``<key>.lock`` beside the entry across processes
(the lock file is removed by its holder).  The others wait, then load the new entry.  A
lock that cannot be had (a read-only or lockless file system, or one held past
``lock_timeout``, 300 s) is given up with a debug log line: the build goes ahead, at
worst twice.  Hits take no lock.

The directory is created private (0700).  An existing one that group or others may
write to is made private if it is ours (with a warning), and otherwise not used (a
warning; kernels are then kept in memory only): whoever can write it could plant entries.

``GPUKERN_CACHE_DIR`` moves the disk cache; ``GPUKERN_NO_CACHE=1`` turns it off (then no
directory, entry or lock file is made).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import struct
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import _version
from ..errors import GpukernError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: threads are serialised per key, processes are not
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("gpukern")

_MAGIC = b"GPUKERN2"
_STALE_MAGICS = (b"GPUKERN1",)  # earlier formats (no key in the header): rebuilt without a warning
_HEADER = struct.Struct("<8s32s32sQ")  # magic, key (32 raw bytes), sha256 of payload, payload length
_SUFFIX = ".bin"
_ABOUT_SUFFIX = ".about"  # beside an entry: JSON of what it is (kernel, backend, source), for `gpukern cache list`
_LOCK_SUFFIX = ".lock"
_LOCK_TIMEOUT = 300.0  # seconds to wait for another build of the same key before building anyway
_KEY = re.compile(r"[0-9a-f]{64}")
# O_NOFOLLOW: a link swapped in after our lstat is not followed; O_NONBLOCK: nor does a FIFO block the open
_NOFOLLOW, _NONBLOCK, _CLOEXEC = (getattr(os, name, 0) for name in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC"))
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | getattr(os, "O_BINARY", 0)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class CacheWarning(UserWarning):
    """The disk cache could not be used as intended (it degrades, it does not fail)."""


class CacheKeyError(GpukernError, ValueError):
    """A cache key that ``make_key`` did not make (it names a file, so it must be 64 hex digits)."""


class _Miss(Exception):
    """Why a disk entry cannot be used: ``what`` entry (no, damaged, ...) and a detail; ``warn``
    when the user should hear of it (not for an absent or merely outdated entry)."""

    def __init__(self, what: str, detail: str = "", warn: bool = True):
        super().__init__(what)
        self.what, self.detail, self.warn = what, detail, warn


def make_key(**parts: Any) -> str:
    """A hex SHA-256 of named key parts (sorted, so the order of arguments is irrelevant)."""
    h = hashlib.sha256()
    for name, value in sorted({**parts, "gpukern": _version.__version__}.items()):
        data = value if isinstance(value, bytes) else repr(value).encode()
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def _key_bytes(key: str) -> bytes:
    """The 32 bytes of a ``make_key`` key (stored in the header so that an entry names its key)."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise CacheKeyError(f"not a gpukern cache key (64 lowercase hex digits from make_key): {key!r:.80}")
    return bytes.fromhex(key)


def _warn(message: str) -> None:
    """A ``CacheWarning`` attributed to the first caller outside gpukern, so it names the user's line."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, CacheWarning, stacklevel=level)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _read_entry(path: str, key: bytes) -> bytes:
    """The payload of the entry at ``path`` for ``key``, or ``_Miss`` saying why not.

    Only a regular file is opened, never through a link: a FIFO would block the open and a
    device (or a link to /dev/zero) would read forever.  At most the header, the declared
    length and one byte more are read, and only when the file's size agrees with the header.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise _Miss("no entry", warn=False) from None
    except OSError as e:
        raise _Miss("unreadable entry", e.strerror or str(e), warn=False) from None
    if not stat.S_ISREG(st.st_mode):
        raise _Miss("refused entry", f"{_kind(st.st_mode)}, not a regular file")
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as e:
        raise _Miss("unreadable entry", e.strerror or str(e), warn=False) from None
    with open(fd, "rb", closefd=True) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the lstat and the open
            raise _Miss("refused entry", f"{_kind(st.st_mode)}, not a regular file")
        head = f.read(_HEADER.size)
        if head[:8] in _STALE_MAGICS:
            raise _Miss("stale entry", "an older gpukern cache format", warn=False)
        if len(head) < _HEADER.size:
            raise _Miss("damaged entry", "shorter than its header")
        magic, stored_key, digest, length = _HEADER.unpack(head)
        if magic != _MAGIC:
            raise _Miss("damaged entry", "not a gpukern cache entry")
        if st.st_size != _HEADER.size + length:
            raise _Miss("damaged entry", "its size does not match its header")
        payload = f.read(length + 1)
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        raise _Miss("damaged entry", "its checksum does not match")
    if stored_key != key:
        raise _Miss("misplaced entry", f"it holds the entry of key {stored_key.hex()[:16]}...")
    return payload


def _lock_file(path: str, timeout: float) -> int | None:
    """An fd holding ``flock`` on ``path`` (created if need be), or None where it cannot be had
    within ``timeout`` seconds: a build then goes ahead unlocked (at worst compiled twice, as
    entries are renamed into place) rather than hang on a read-only or lockless file system."""
    if fcntl is None:
        return None
    deadline = time.monotonic() + timeout
    fd = -1
    try:
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise OSError(f"{_kind(mode)}, not a regular file")
            delay = 0.002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise OSError(f"still held by another build after {timeout:g} s") from None
                    time.sleep(delay)
                    delay = min(2 * delay, 0.05)
            try:  # the previous holder removed the file it held: ours must be the one at the path
                if os.path.samestat(os.fstat(fd), os.lstat(path)):
                    return fd
            except FileNotFoundError:
                pass
            os.close(fd)  # that file was removed: take the one there now
            fd = -1
            if time.monotonic() > deadline:
                raise OSError(f"the lock file kept being replaced for {timeout:g} s")
    except OSError as e:
        if fd >= 0:
            os.close(fd)
        log.debug("cache: building without the lock %s: %s", path, e)
        return None


def _unlock_file(path: str, fd: int) -> None:
    """Remove the lock file while still holding it (so none is left behind), then release it."""
    try:
        if os.path.samestat(os.fstat(fd), os.lstat(path)):
            os.unlink(path)
    except OSError:
        pass
    finally:
        os.close(fd)


def _not_private(directory: str) -> str | None:
    """Why ``directory`` must not hold the cache, or None.  Others who can write to it could plant
    entries that we would hand to the driver, so a directory open to group or world writes is made
    private (0700) when it is ours (with a warning), and refused when it is not."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows: no POSIX modes
        return None
    st = os.stat(directory)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if st.st_uid != os.geteuid():
        return (
            f"the cache directory {directory} is writable by other users (mode {mode:o}) "
            f"and belongs to uid {st.st_uid}, not to us: not using it"
        )
    os.chmod(directory, 0o700)
    _warn(f"gpukern: the cache directory {directory} was writable by other users (mode {mode:o}); made it private")
    return None


def _default_dir() -> str:
    env = os.environ.get("GPUKERN_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    try:
        import platformdirs

        return platformdirs.user_cache_dir("gpukern", appauthor=False)
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return os.path.join(os.path.expanduser("~"), ".cache", "gpukern")


def _remove_quietly(path: str) -> None:
    """Remove a temporary file left by a write that did not finish ('' : none was left)."""
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


class BinaryCache:
    """Process-wide cache of compiled binaries; see the module docstring.  ``lock_timeout`` is how
    long (seconds) a miss waits for another build of its key before building anyway."""

    def __init__(self, directory: str | None = None, disk: bool | None = None):
        self.directory = directory or _default_dir()
        self.disk = (os.environ.get("GPUKERN_NO_CACHE", "") in ("", "0")) if disk is None else disk
        self.memory: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0
        self.disk_loads = 0
        self.lock_timeout = _LOCK_TIMEOUT
        self._lock = threading.Lock()  # guards memory, the counters, _building and the directory's set-up
        self._building: dict[str, list[Any]] = {}  # key -> [its build lock, how many threads use it]
        self._dir_ready = False

    # ------------------------------------------------------------ public
    def get_or_compile(
        self, key: str, compile: Callable[[], bytes], what: str = "", about: dict[str, str] | None = None
    ) -> bytes:
        """The binary for ``key``: from memory, from disk, or compiled now (and stored).

        A miss is built under a lock per key, shared by the threads of this process and (through
        ``<key>.lock``) by every process using the directory: the first one compiles, the others
        wait and then load its entry, so a kernel is compiled once however many ask at once."""
        _key_bytes(key)
        data = self._cached(key, what, report=False)  # no lock: an entry on disk is whole or absent
        if data is not None:
            return data
        with self._key_lock(key), self._file_lock(key):
            data = self._cached(key, what, report=True)  # built while we waited, or a bad entry to report
            if data is not None:
                return data
            with self._lock:
                self.misses += 1
            log.debug("cache: compiling %s (key %s not cached)", what or "kernel", key[:16])
            data = compile()
            with self._lock:
                self.memory[key] = data
            if self._write(key, data) and about:
                self._write_about(key, about)
        return data

    def _cached(self, key: str, what: str, report: bool) -> bytes | None:
        """A hit from memory or disk (counted), or None; ``report`` says why the disk missed."""
        with self._lock:
            data = self.memory.get(key)
            if data is not None:
                self.hits += 1
                return data
        data = self._read(key, report)
        if data is not None:
            log.debug("cache: loaded %s from %s", what or key[:16], self._path(key))
            with self._lock:
                self.hits += 1
                self.disk_loads += 1
                self.memory[key] = data
        return data

    def get(self, key: str) -> bytes | None:
        """The entry for ``key`` if there is one (memory, then disk), without compiling anything."""
        _key_bytes(key)
        with self._lock:
            data = self.memory.get(key)
        if data is None:
            data = self._read(key, report=True)
            if data is not None:
                with self._lock:
                    self.memory[key] = data
        return data

    def put(self, key: str, data: bytes) -> None:
        """Store an entry (in memory, and on disk when the disk cache is on)."""
        _key_bytes(key)
        with self._lock:
            self.memory[key] = data
        self._write(key, data)

    def load_or_build(
        self,
        key: str,
        compile: Callable[[], bytes],
        load: Callable[[bytes], Any],
        rejected: tuple[type[BaseException], ...],
        what: str = "",
        about: dict[str, str] | None = None,
    ) -> Any:
        """``load(binary)`` of the cached or freshly compiled binary.  A cached binary that the
        driver rejects (``rejected`` exceptions) is reported once, dropped and rebuilt."""
        fresh = False

        def build() -> bytes:
            nonlocal fresh
            fresh = True
            return compile()

        data = self.get_or_compile(key, build, what, about)
        try:
            return load(data)
        except rejected as e:
            if fresh:
                raise
            _warn(f"gpukern: the driver rejected the cached binary of {what or 'a kernel'} ({e}); rebuilding it")
            log.debug("cache: miss, driver rejected the entry %s", self._path(key))
            self.discard(key)
            return load(self.get_or_compile(key, compile, what, about))

    def discard(self, key: str) -> None:
        """Forget one entry, in memory and on disk."""
        _key_bytes(key)
        with self._lock:
            self.memory.pop(key, None)
            if self.disk:
                for path in (self._path(key), self._about_path(key)):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass

    def _entry_files(self) -> Iterator[tuple[str, os.stat_result]]:
        """Each key on disk with its entry's stat: a regular file named ``<key>.bin`` (what could be
        an entry: not a link, a FIFO...)."""
        if not (self.disk and os.path.isdir(self.directory)):
            return
        for name in os.listdir(self.directory):
            key = name[: -len(_SUFFIX)]
            if not (name.endswith(_SUFFIX) and _KEY.fullmatch(key)):
                continue
            try:
                st = os.lstat(os.path.join(self.directory, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield key, st

    def info(self) -> dict[str, Any]:
        files = [st.st_size for _, st in self._entry_files()]
        entries, size = len(files), sum(files)
        return {
            "dir": self.directory if self.disk else None,
            "entries": entries,
            "bytes": size,
            "memory_entries": len(self.memory),
            "hits": self.hits,
            "misses": self.misses,
            "disk_loads": self.disk_loads,
        }

    def entries(self) -> list[dict[str, Any]]:
        """The entries on disk, newest first: each one's key, bytes and time, and what it holds
        (``kernel``, ``backend``, ``source``) where its ``.about`` file says."""
        out: list[dict[str, Any]] = []
        for key, st in self._entry_files():
            entry: dict[str, Any] = {"key": key, "bytes": st.st_size, "time": st.st_mtime}
            try:
                with open(self._about_path(key), encoding="utf-8") as f:
                    about = json.load(f)
                if isinstance(about, dict):
                    entry.update({k: str(v) for k, v in about.items() if k in ("kernel", "backend", "source")})
            except (OSError, ValueError):
                pass  # (an entry of an older gpukern, or one whose description was lost: its key and size)
            out.append(entry)
        out.sort(key=lambda e: e["time"], reverse=True)
        return out

    def clear(self) -> None:
        with self._lock:
            self.memory.clear()
            if self.disk and os.path.isdir(self.directory):
                for name in os.listdir(self.directory):
                    if name.endswith((_SUFFIX, _ABOUT_SUFFIX, _LOCK_SUFFIX)) or name.startswith(".tmp-"):
                        try:
                            os.unlink(os.path.join(self.directory, name))
                        except OSError:
                            pass

    # ------------------------------------------------------------ disk
    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key + _SUFFIX)

    def _dir_ok(self) -> bool:
        """Whether the disk cache is on and its directory usable (created on first use)."""
        if not self.disk:
            return False
        if not self._dir_ready:
            with self._lock:
                if not self._dir_ready and self.disk:
                    try:
                        os.makedirs(self.directory, mode=0o700, exist_ok=True)
                        why = _not_private(self.directory)
                    except OSError as e:
                        why = f"cannot write the cache directory {self.directory}: {e}"
                    if why:
                        self._degrade(why)
                        return False
                    self._dir_ready = True
        return self.disk

    @contextmanager
    def _key_lock(self, key: str) -> Iterator[None]:
        """Serialise the threads of this process that build ``key`` (a lock per key being built)."""
        with self._lock:
            entry = self._building.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        lock = entry[0]
        held = lock.acquire(timeout=self.lock_timeout)
        if not held:
            log.debug("cache: building %s without waiting longer for another thread", key[:16])
        try:
            yield
        finally:
            if held:
                lock.release()
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._building[key]

    @contextmanager
    def _file_lock(self, key: str) -> Iterator[None]:
        """Serialise the processes that build ``key``, through ``<key>.lock``; without a usable
        lock (no disk cache, a read-only or lockless file system, a timeout) it builds anyway."""
        path = os.path.join(self.directory, key + _LOCK_SUFFIX)
        fd = _lock_file(path, self.lock_timeout) if self._dir_ok() else None
        try:
            yield
        finally:
            if fd is not None:
                _unlock_file(path, fd)

    def _degrade(self, why: str) -> None:
        _warn(f"gpukern: {why}; keeping compiled kernels in memory only")
        log.debug("cache: %s", why)
        self.disk = False

    def _read(self, key: str, report: bool) -> bytes | None:
        """The valid entry for ``key`` on disk, or None; with ``report``, a bad one is reported
        (once: it is then replaced by the rebuilt entry) and a miss logged."""
        if not self._dir_ok():
            return None
        path = self._path(key)
        try:
            try:
                return _read_entry(path, _key_bytes(key))
            except OSError as e:  # a read error past the open (EIO): as if absent, the rebuild replaces it
                raise _Miss("unreadable entry", e.strerror or str(e), warn=False) from None
        except _Miss as miss:
            if not report:
                return None
            detail = f" ({miss.detail})" if miss.detail else ""
            if miss.warn:
                _warn(f"gpukern: {miss.what} {path} ignored{detail}; recompiling")
            log.debug("cache: miss, %s %s%s", miss.what, path, detail)
            return None

    def _about_path(self, key: str) -> str:
        return os.path.join(self.directory, key + _ABOUT_SUFFIX)

    def _write_about(self, key: str, about: dict[str, str]) -> None:
        """What entry ``key`` holds, beside it (best effort: a listing without it shows the key)."""
        tmp = ""
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(about, f)
            os.replace(tmp, self._about_path(key))
            tmp = ""
        except OSError as e:
            log.debug("cache: cannot describe %s: %s", key[:16], e)
        finally:
            _remove_quietly(tmp)

    def _write(self, key: str, data: bytes) -> bool:
        """Store an entry on disk; whether it is there now."""
        if not self._dir_ok():
            return False
        header = _HEADER.pack(_MAGIC, _key_bytes(key), hashlib.sha256(data).digest(), len(data))
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        except OSError as e:
            self._degrade(f"cannot write to the cache directory {self.directory}: {e}")
            return False
        try:
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(header)
                    f.write(data)
            except OSError as e:  # a full disk, a quota: the directory cannot take entries
                self._degrade(f"cannot write to the cache directory {self.directory}: {e}")
                return False
            try:
                os.replace(tmp, self._path(key))  # atomic: readers see all or nothing; a link is replaced, not followed
                tmp = ""
            except OSError as e:  # e.g. a directory in the entry's place: this entry only stays in memory
                log.debug("cache: cannot replace %s: %s", self._path(key), e)
                return False
        finally:
            _remove_quietly(tmp)
        return True


_cache: BinaryCache | None = None


def binary_cache() -> BinaryCache:
    """The process's cache (created on first use, reading the environment then)."""
    global _cache
    if _cache is None:
        _cache = BinaryCache()
    return _cache


def reset_cache(directory: str | None = None, disk: bool | None = None) -> BinaryCache:
    """Start a fresh process cache (re-reading the environment); used by tests and tools."""
    global _cache
    _cache = BinaryCache(directory, disk)
    return _cache


def cache_info() -> dict[str, Any]:
    """``{"dir", "entries", "bytes", "hits", "misses", ...}`` for this process's cache."""
    return binary_cache().info()


def clear_cache() -> None:
    """Remove every cached binary, in memory and on disk."""
    binary_cache().clear()
