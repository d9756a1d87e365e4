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


GRADING = frozenset({"check", "watch", "grade", "run", "trace", "explore", "verify"})
"""Commands that fork graded children: their zygote starts before anything else is imported."""
HEAVY = "checker.setting.lab:import_heavy"
"""What such a zygote does first: import torch and scikit-learn (about three fifths of its start; torch._dynamo,
most of the rest, comes after its early twin is forked: ``checker.setting.lab.warm_up_late``)."""


def _grades(argv: list[str]) -> bool:
    """Whether the command line names a grading command (``kata [options] check ...``, ``kata mutants ... verify``)
    and asks for no help page or version."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return False
    words = [arg for arg in argv[:6] if not arg.startswith("-")]
    return bool(GRADING.intersection(words[:3]))


def main() -> None:
    if _grades(sys.argv[1:]):
        # The zygote's imports take seconds and need nothing of the command line: they start now, while this
        # process imports the command line itself. A command that turns out to be a usage error only wasted
        # them (the zygote dies with kata).
        from checker.sandbox.zygote import start_early

        start_early(HEAVY)
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
