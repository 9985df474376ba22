"""Every file a quiver command writes goes through here: a fresh temporary file beside the target,
created exclusively and never through a link, renamed over the target when complete.

Why one place: an output path is a user's careless choice or an attacker's plant in a shared
directory (a symlink at ``run.arrow.part`` pointing at someone's 0600 file). A temporary created with
``O_CREAT | O_EXCL | O_NOFOLLOW`` under a random name cannot be pre-planted, and ``rename`` replaces a
link at the target itself instead of writing through it. Readers never see half a file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class OutputError(OSError):
    """The output cannot be written where asked; the message is one line naming the path."""


def current_umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def create_temp(target: str | os.PathLike, suffix: str = ".part") -> tuple[int, Path]:
    """A new empty file beside ``target`` (``<name>.<random><suffix>``), opened for writing: (fd, path).
    Its mode is what a plain ``open(target, "w")`` would give (0666 & ~umask)."""
    target = Path(target)
    if target.name in ("", ".", ".."):
        raise OutputError(f"{str(target)!r}: not a file name")
    parent = target.parent
    if not parent.is_dir():
        raise OutputError(f"{target}: directory {parent} does not exist")
    try:
        existing = os.stat(target).st_mode          # through a link: what writing there would reach
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing):
        # renaming over /dev/null or a FIFO would replace the device node itself (as root: for everyone)
        raise OutputError(f"{target} is not a regular file; choose another output")
    for _ in range(100):
        tmp = parent / f"{target.name}.{os.urandom(4).hex()}{suffix}"
        try:
            fd = os.open(tmp, CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue
        except OSError as e:
            raise OutputError(f"{target}: cannot write ({e.strerror})") from None
        try:
            os.fchmod(fd, 0o666 & ~current_umask())
        except OSError:
            pass
        return fd, tmp
    raise OutputError(f"{target}: cannot create a temporary file beside it")


def commit(tmp: Path, target: str | os.PathLike) -> None:
    """Rename the finished temporary over ``target`` (a link there is replaced, never followed)."""
    try:
        os.replace(tmp, target)
    except OSError as e:
        discard(tmp)
        raise OutputError(f"{target}: cannot write ({e.strerror})") from None


def discard(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


@contextmanager
def atomic_output(target: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """``with atomic_output(path) as f: f.write(...)``: ``path`` appears complete or not at all."""
    fd, tmp = create_temp(target)
    binary = "b" in mode
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else encoding) as f:
            yield f
    except BaseException:
        discard(tmp)
        raise
    commit(tmp, target)


def write_atomic(target: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``target`` through an exclusive temporary; returns ``target``."""
    with atomic_output(target, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return Path(target)


def fd_path(fd: int) -> str:
    """A path that reopens exactly the file behind ``fd`` (for libraries that want a path, e.g. Arrow),
    whatever was renamed or planted at its name since."""
    return f"/proc/self/fd/{fd}"


def make_private_dir(path: str | os.PathLike) -> Path:
    """Create ``path`` as a new directory only this user can enter; FileExistsError if anything is there."""
    p = Path(path)
    os.mkdir(p, 0o700)
    return p


def make_temp_dir(target: str | os.PathLike, suffix: str = ".part") -> Path:
    """A new private directory beside ``target`` (``<name>.<random><suffix>``, mode 0700)."""
    import tempfile

    target = Path(target)
    if not target.parent.is_dir():
        raise OutputError(f"{target}: directory {target.parent} does not exist")
    try:
        return Path(tempfile.mkdtemp(prefix=f"{target.name}.", suffix=suffix, dir=target.parent))
    except OSError as e:
        raise OutputError(f"{target}: cannot write ({e.strerror})") from None
