"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tracktale.errors import TracktaleError


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = "\n",
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` and rename it over ``path`` on success.

    The data is flushed and fsynced before the rename, so a crash (even ``kill -9``) leaves
    either the previous file or the complete new one. On an exception the temporary file is
    removed and ``path`` is untouched.

    Args:
        path: The destination file.
        mode: ``"w"`` for text or ``"wb"`` for bytes.
        encoding: Text encoding (ignored for binary mode).
        newline: Newline translation for text mode; a bare line feed keeps files byte-identical
            across platforms.

    Yields:
        The open temporary file.
    """
    target = Path(path)
    binary = "b" in mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file readable by its owner only; give it the usual permissions.
        os.chmod(tmp_name, 0o666 & ~_current_umask())
        text_options: dict[str, Any] = {} if binary else {"encoding": encoding, "newline": newline}
        with os.fdopen(fd, mode, **text_options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(target.parent)


def make_folder(path: str | os.PathLike[str]) -> Path:
    """Create a folder and its parents (if missing) for files about to be written.

    Raises:
        TracktaleError: Naming the folder when it cannot be created.
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TracktaleError(f"cannot create {folder}: {error.strerror}") from None
    return folder


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_write(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    # The rename itself lives in the directory entry; without this a power cut can undo it.
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
