"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from checker.base.proc import proc_status


def current_umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc/self/status``), else by
    setting and restoring it."""
    try:
        return int(proc_status()["Umask"], 8)
    except (KeyError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file: 0666 less the umask (readable by group and others under the
    usual 022)."""
    return 0o666 & ~current_umask()


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path`` (never partial). The
    file gets the mode ``open()`` would give it, per the umask (``mkstemp``'s own 0600 would hide a gradebook
    from a course's other accounts)."""
    path = Path(path)
    mode = new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- reading only what was given


class NotGiven(Exception):
    """A path that is not a regular file inside the folder given: ``kind`` says what it is (``outside``: a link
    or a folder that leaves it; ``loop``: links that lead to each other; ``link``, ``fifo``, ``socket``,
    ``device``, ``folder``, ``other``: not a regular file; ``swapped``: it changed between the check and the
    opening; ``missing``); nothing of it was read."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(kind)
        self.kind, self.detail = kind, detail


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in one word (``regular`` for a plain file)."""
    for test, kind in ((stat.S_ISREG, "regular"), (stat.S_ISDIR, "folder"), (stat.S_ISLNK, "link"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"),
                       (stat.S_ISBLK, "device")):
        if test(mode):
            return kind
    return "other"


def resolved_inside(path: Path, root: Path, exclude: Sequence[Path] = ()) -> Path:
    """``path`` with every link resolved, when it lies inside ``root`` (itself resolved) and inside none of
    ``exclude`` (a gradebook's folder within the class folder); else ``NotGiven`` (``outside``, ``missing``)."""
    base = Path(root).resolve()
    try:
        real = Path(path).resolve(strict=True)
    except FileNotFoundError:
        raise NotGiven("missing") from None
    except RuntimeError as exc:  # a loop of links (Python before 3.13)
        raise NotGiven("loop", str(exc)) from None
    except OSError as exc:  # a loop of links (3.13 on), a folder that cannot be searched
        raise NotGiven("loop" if exc.errno == errno.ELOOP else "outside", exc.strerror or str(exc)) from None
    if real != base and base not in real.parents:
        raise NotGiven("outside")
    for other in exclude:
        other = Path(other).resolve()
        if real == other or other in real.parents:
            raise NotGiven("outside")
    return real


def read_inside(path: Path, root: Path, limit: int, exclude: Sequence[Path] = ()) -> bytes:
    """The bytes of ``path`` (at most ``limit`` + 1, so a caller can tell a file too big), read only when it is a
    regular file inside ``root`` once every link is resolved; else ``NotGiven``, with nothing read.

    Checked before and after opening: the path is resolved and found inside ``root``, its last component
    ``lstat``-ed; then each folder from ``root`` down is opened relative to the one above it with
    ``O_NOFOLLOW`` (a link swapped in anywhere on the way fails to open), the file itself with ``O_NOFOLLOW |
    O_NONBLOCK`` (a FIFO swapped in cannot block), and the opened descriptor's ``fstat`` must be the same
    regular file (``st_dev``/``st_ino``) that was checked. ``exclude``: folders inside ``root`` never read
    (``resolved_inside``)."""
    base = Path(root).resolve()
    real = resolved_inside(path, base, exclude)
    before = os.lstat(real)
    kind = file_kind(before.st_mode)
    if kind != "regular":
        raise NotGiven(kind)
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    cloexec = getattr(os, "O_CLOEXEC", 0)
    fds: list[int] = []
    try:
        fds.append(os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | cloexec))
        parts = real.relative_to(base).parts
        for part in parts[:-1]:
            fds.append(os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow | cloexec,
                               dir_fd=fds[-1]))
        fd = os.open(parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | cloexec, dir_fd=fds[-1])
        fds.append(fd)
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(after.st_mode):
            raise NotGiven("swapped")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except (NotADirectoryError, IsADirectoryError) as exc:
        raise NotGiven("swapped", exc.strerror) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link: swapped in since the check
            raise NotGiven("swapped", exc.strerror) from None
        raise
    finally:
        for fd in reversed(fds):
            os.close(fd)
