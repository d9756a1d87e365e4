"""The `kata` executable: the click group, then a quick exit.

Once torch is imported, the interpreter's own shutdown (tearing down thousands of modules and the
objects they hold) takes about 0.6 s on two cores, longer than most checks. Nothing of kata's needs it:
every child process is already gone and every file already written when a command returns. So
``main`` runs the atexit handlers itself (temporary folders, logging), flushes stdout and stderr, and
leaves with ``os._exit``. A command that never imported torch exits the usual way.
"""

from __future__ import annotations

import atexit
import os
import sys


def _code(code: object) -> int:
    """``SystemExit.code`` as an exit status, printing a message code as Python would."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main() -> None:
    from checker.cli import main as kata

    try:
        kata(prog_name="kata")
        code = 0
    except SystemExit as exc:
        code = _code(exc.code)
    if "torch" not in sys.modules:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            pass
    os._exit(code)
