"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
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
