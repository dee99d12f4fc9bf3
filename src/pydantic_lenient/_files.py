"""The files the library saves, written one way: atomically, fsynced, and shared between processes.

Every file the library writes goes through `write_atomically` (bytes) or `write_json_atomically`
(a JSON document): a temporary file beside the target, flushed and fsynced, then renamed over it,
so a reader sees the old file or the new one, never half of one, and a crash leaves no torn file.
A file that several processes add counts to (``outcomes.json``, ``normalizer_stats.json``,
``repair-stats.json`` in a shared log directory) is saved under `locked`: the save takes the
file's lock, reads what the file holds *now*, adds only its own counts and writes the sum, so no
process's counts are lost. `read_regular_file` reads such a file back, boundedly, and only if it is
a regular file.

Standard library only, at the bottom of the layers: any subsystem may save through it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if sys.platform != "win32":
    import fcntl

__all__ = ("locked", "read_regular_file", "write_atomically", "write_json_atomically")

# Opening never waits (a FIFO would block until a writer came) and never follows a final symlink.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | getattr(os, "O_BINARY", 0)
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_atomically(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``path``: a temporary file beside it, flushed and fsynced, then renamed
    over it (a symlink at ``path`` is replaced, never followed). ``mode``: the new file's
    permission bits (by default the temporary file's, 0o600). Returns ``path`` as a `Path`.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_atomically(Path(folder) / "a.txt", b"one").read_bytes()
    b'one'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_directory(target.parent)
    return target


def write_json_atomically(path: str | os.PathLike[str], document: Any) -> Path:
    """Write ``document`` as JSON to ``path`` with `write_atomically`. ASCII-escaped, so even a lone
    surrogate in a value is written as valid JSON text; NaN is refused (``ValueError``)."""
    text = json.dumps(document, ensure_ascii=True, allow_nan=False, indent=2)
    return write_atomically(path, text.encode("ascii"))


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); where a directory cannot be opened, nothing to do."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock of ``path`` against other processes (and other threads' calls) until the block ends.

    The lock is a separate file beside it, ``.NAME.lock``, since ``path`` itself is replaced by
    every atomic write; it is opened through no symlink. Where there is no ``flock`` (Windows),
    nothing is held, as for the audit log.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_name(f".{target.name}.lock")
    handle = os.open(lock_path, _LOCK_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(lock_path))
        if sys.platform != "win32":
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # and with it the lock


def read_regular_file(path: str | os.PathLike[str], max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` bytes.

    Raises ``OSError`` when it cannot be opened (``FileNotFoundError`` when it does not exist, and
    a symlink is refused unless ``follow_symlinks``: a file the user named, such as a rules file
    mounted from a Kubernetes ConfigMap, may be one), and ``ValueError`` saying why for a FIFO, a
    device, a directory or a file that is too large: nothing is read from those, so nothing hangs
    or fills memory.
    """
    handle = os.open(path, _READ_FLAGS & ~_NOFOLLOW if follow_symlinks else _READ_FLAGS)
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise ValueError("not a regular file (a FIFO, a device or a directory); it was not read")
    with os.fdopen(handle, "rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes; it was not read")
    return data
