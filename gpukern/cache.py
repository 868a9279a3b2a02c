"""The compiled-binary cache shared by every backend: in memory, and on disk.

A binary (a CUDA cubin, an OpenCL program binary) is stored under a key that is a
SHA-256 of everything that could change it: the generated source, the backend,
the device (architecture, or name and driver version), the compiler's version and
options, and gpukern's version.  Changing any of them misses; changing none hits.

Disk entries are plain bytes behind a small header with a SHA-256 of the payload,
written to a temporary file and renamed into place, so readers never see half an
entry and concurrent writers of one key all succeed.  A damaged entry is noticed,
reported once, and recompiled.  Nothing read from the cache is ever unpickled or
executed as Python: it is handed to the driver as a binary, after its checksum.

``GPUKERN_CACHE_DIR`` moves the disk cache; ``GPUKERN_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import threading
import warnings
from collections.abc import Callable
from typing import Any

from . import _version

log = logging.getLogger("gpukern")

_MAGIC = b"GPUKERN1"
_HEADER = struct.Struct("<8s32sQ")  # magic, sha256 of payload, payload length
_SUFFIX = ".bin"


class CacheWarning(UserWarning):
    """The disk cache could not be used as intended (it degrades, it does not fail)."""


def make_key(**parts: Any) -> str:
    """A hex SHA-256 of named key parts (sorted, so the order of arguments is irrelevant)."""
    h = hashlib.sha256()
    for name, value in sorted({**parts, "gpukern": _version.__version__}.items()):
        data = value if isinstance(value, bytes) else repr(value).encode()
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def _default_dir() -> str:
    env = os.environ.get("GPUKERN_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    try:
        import platformdirs

        return platformdirs.user_cache_dir("gpukern", appauthor=False)
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return os.path.join(os.path.expanduser("~"), ".cache", "gpukern")


class BinaryCache:
    """Process-wide cache of compiled binaries; see the module docstring."""

    def __init__(self, directory: str | None = None, disk: bool | None = None):
        self.directory = directory or _default_dir()
        self.disk = (os.environ.get("GPUKERN_NO_CACHE", "") in ("", "0")) if disk is None else disk
        self.memory: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0
        self.disk_loads = 0
        self._lock = threading.Lock()
        self._dir_ready = False

    # ------------------------------------------------------------ public
    def get_or_compile(self, key: str, compile: Callable[[], bytes], what: str = "") -> bytes:
        """The binary for ``key``: from memory, from disk, or compiled now (and stored)."""
        with self._lock:
            data = self.memory.get(key)
            if data is not None:
                self.hits += 1
                return data
            data = self._read(key)
            if data is not None:
                self.hits += 1
                self.disk_loads += 1
                log.debug("cache: loaded %s from %s", what or key[:16], self._path(key))
                self.memory[key] = data
                return data
            self.misses += 1
        log.debug("cache: compiling %s (key %s not cached)", what or "kernel", key[:16])
        data = compile()
        with self._lock:
            self.memory[key] = data
            self._write(key, data)
        return data

    def get(self, key: str) -> bytes | None:
        """The entry for ``key`` if there is one (memory, then disk), without compiling anything."""
        with self._lock:
            data = self.memory.get(key)
            if data is None:
                data = self._read(key)
                if data is not None:
                    self.memory[key] = data
            return data

    def put(self, key: str, data: bytes) -> None:
        """Store an entry (in memory, and on disk when the disk cache is on)."""
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
    ) -> Any:
        """``load(binary)`` of the cached or freshly compiled binary.  A cached binary that the
        driver rejects (``rejected`` exceptions) is reported once, dropped and rebuilt."""
        fresh = False

        def build() -> bytes:
            nonlocal fresh
            fresh = True
            return compile()

        data = self.get_or_compile(key, build, what)
        try:
            return load(data)
        except rejected as e:
            if fresh:
                raise
            warnings.warn(
                f"gpukern: the driver rejected the cached binary of {what or 'a kernel'} ({e}); rebuilding it",
                CacheWarning,
                stacklevel=3,
            )
            log.debug("cache: miss, driver rejected the entry %s", self._path(key))
            self.discard(key)
            return load(self.get_or_compile(key, compile, what))

    def discard(self, key: str) -> None:
        """Forget one entry, in memory and on disk."""
        with self._lock:
            self.memory.pop(key, None)
            if self.disk:
                try:
                    os.unlink(self._path(key))
                except OSError:
                    pass

    def info(self) -> dict[str, Any]:
        entries, size = 0, 0
        if self.disk and os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                if name.endswith(_SUFFIX):
                    try:
                        size += os.path.getsize(os.path.join(self.directory, name))
                        entries += 1
                    except OSError:
                        pass
        return {
            "dir": self.directory if self.disk else None,
            "entries": entries,
            "bytes": size,
            "memory_entries": len(self.memory),
            "hits": self.hits,
            "misses": self.misses,
            "disk_loads": self.disk_loads,
        }

    def clear(self) -> None:
        with self._lock:
            self.memory.clear()
            if self.disk and os.path.isdir(self.directory):
                for name in os.listdir(self.directory):
                    if name.endswith(_SUFFIX) or name.startswith(".tmp-"):
                        try:
                            os.unlink(os.path.join(self.directory, name))
                        except OSError:
                            pass

    # ------------------------------------------------------------ disk
    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key + _SUFFIX)

    def _ready(self) -> bool:
        if not self.disk:
            return False
        if not self._dir_ready:
            try:
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
                probe = tempfile.NamedTemporaryFile(dir=self.directory, prefix=".tmp-probe-", delete=True)
                probe.close()
            except OSError as e:
                self._degrade(f"cannot write the cache directory {self.directory}: {e}")
                return False
            self._dir_ready = True
        return True

    def _degrade(self, why: str) -> None:
        warnings.warn(f"gpukern: {why}; keeping compiled kernels in memory only", CacheWarning, stacklevel=4)
        log.debug("cache: %s", why)
        self.disk = False

    def _read(self, key: str) -> bytes | None:
        if not self.disk:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            log.debug("cache: miss, no entry %s", path)
            return None
        except OSError as e:
            log.debug("cache: miss, cannot read %s: %s", path, e)
            return None
        if len(blob) >= _HEADER.size:
            magic, digest, length = _HEADER.unpack_from(blob)
            payload = blob[_HEADER.size :]
            if magic == _MAGIC and length == len(payload) and hashlib.sha256(payload).digest() == digest:
                return payload
        warnings.warn(f"gpukern: damaged cache entry {path} ignored; recompiling", CacheWarning, stacklevel=4)
        log.debug("cache: miss, damaged entry %s", path)
        try:
            os.unlink(path)
        except OSError:
            pass
        return None

    def _write(self, key: str, data: bytes) -> None:
        if not self._ready():
            return
        header = _HEADER.pack(_MAGIC, hashlib.sha256(data).digest(), len(data))
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(header + data)
                os.replace(tmp, self._path(key))  # atomic: readers see all or nothing
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError as e:
            self._degrade(f"cannot write to the cache directory {self.directory}: {e}")


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
