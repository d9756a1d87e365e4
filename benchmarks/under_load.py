"""Run tests beside CPU hogs, as a busy machine or a second test suite would run them, and repeat them.

Issue 34: `kata watch` once watched on after Ctrl-C in CI, when a second test suite ran beside the first.
The cause was not the load but how the second suite was started: a shell script ignores Ctrl-C (SIGINT) for
every job it starts with ``&``, a child inherits that, and Python leaves an inherited "ignore" alone, so
every `kata` that suite started ignored the test's SIGINT. This script makes both conditions part of
testing: N processes spinning on the CPU, and the tests started with SIGINT ignored (``--sigint default``
to start them as a terminal's foreground job instead). A test that passes here does not depend on the
machine being idle, nor on how its runner was started.

    python benchmarks/under_load.py                      # the process-handling tests, 6 hogs, once
    python benchmarks/under_load.py --hogs 6 --repeat 20 -- tests/test_learner.py -k ctrl_c
    python benchmarks/under_load.py --hogs 2 -- tests/   # the whole suite beside two hogs

One line per run (passed or not, and pytest's last line; a failing run's whole output is kept in
benchmarks/results/under_load-TIME.log); exit 0 when every run passed, 1 otherwise. The hogs
are this script's children and end with it.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

PROCESS_TESTS = ["tests/test_learner.py", "-k", "watch or subprocess or ctrl_c", "tests/test_zygote.py"]
"""The tests that start, signal and wait on processes: `kata watch` and its Ctrl-C, `kata` as a subprocess, the
zygote (forking, killing and restarting its children)."""

HOG = "while True: pass"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_once(pytest_args: list[str], *, sigint: str) -> tuple[bool, str, float]:
    """One pytest run; (passed, its last line, seconds)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           *pytest_args], cwd=ROOT, capture_output=True, text=True,
                          preexec_fn=_ignore_sigint if sigint == "ignored" else None)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:  # what failed, kept for reading
        RESULTS.mkdir(parents=True, exist_ok=True)
        kept = RESULTS / f"under_load-{time.strftime('%Y%m%d-%H%M%S')}.log"
        kept.write_text(done.stdout + done.stderr, encoding="utf-8")
        lines.append(f"(output in {kept.relative_to(ROOT)})")
    return done.returncode == 0, (lines[-1] if lines else done.stderr.strip()[-200:]), time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=6, help="processes spinning on the CPU beside the tests")
    parser.add_argument("--repeat", type=int, default=1, help="how many times to run the tests")
    parser.add_argument("--sigint", choices=("ignored", "default"), default="ignored",
                        help="SIGINT as the tests start: ignored (as a script's `cmd &` leaves it) or default")
    parser.add_argument("pytest_args", nargs="*", help="what pytest runs (after --); default: the "
                        "process-handling tests")
    args = parser.parse_args(argv)
    if args.hogs < 0 or args.repeat < 1:
        parser.error("--hogs must be 0 or more and --repeat 1 or more")
    pytest_args = args.pytest_args or PROCESS_TESTS
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(args.hogs)]
    failed = 0
    try:
        print(f"{args.hogs} CPU hogs; SIGINT {args.sigint}; pytest {' '.join(pytest_args)}", flush=True)
        for i in range(1, args.repeat + 1):
            passed, last, seconds = run_once(pytest_args, sigint=args.sigint)
            failed += not passed
            print(f"run {i}/{args.repeat}: {'passed' if passed else 'FAILED'} in {seconds:.0f} s: {last}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
    print(f"{args.repeat - failed} of {args.repeat} runs passed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
