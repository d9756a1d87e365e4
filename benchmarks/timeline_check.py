"""Where the time of one cold `kata check` goes: when the zygote is ready, when each child starts and ends.

    python benchmarks/timeline_check.py [--track ID] [--events] [--no-early]

Runs `kata check` of the track's reference in this process (as the `kata` command does, zygote included),
with kata's job runner watched from outside, and prints on stderr, in seconds since this script started:
each job's spawn (and how long the spawn waited: a job that must wait for the zygote blocks there), the
zygote's ready time, each job's end and its own length, kata's own CPU time and the exit. ``--events`` adds
every event a child sent (each check's start and figures); ``--no-early`` grades without the early split
(``grade(..., early=False)``), to compare: it imports kata's grading layer before kata starts its zygote, so
that mode's zygote starts about 0.08 s later (compare the time from "zygote ready" on). Only kata's job runner
and zygote are imported before, as the `kata` command itself does. A diagnostic, like the other benchmarks:
nothing is asserted.
"""

from __future__ import annotations

import argparse
import atexit
import resource
import sys
import time
from pathlib import Path

T0 = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--track", default="moons")
    parser.add_argument("--events", action="store_true", help="also every event the children sent")
    parser.add_argument("--no-early", action="store_true", help="grade without the early split")
    args = parser.parse_args()

    from checker.sandbox import jobs
    from checker.sandbox import zygote as zygote_module

    log: list[tuple[float, str]] = []

    def now() -> float:
        return time.perf_counter() - T0

    def name_of(job) -> str:
        tag = job.tag
        if isinstance(tag, tuple) and tag[0] == "reference":
            return "reference" + (" (early)" if job.early else "")
        if isinstance(tag, tuple) and tag[0] == "confirm":
            return f"confirm ({len(tag[1].entries)} file(s))"
        return ",".join(tag[1])[:70] if isinstance(tag, tuple) else str(tag)

    init, reap, on_events = jobs._Running.__init__, jobs._Running.reap, jobs._Running.on_events
    wait_ready = zygote_module.Zygote._wait_ready

    def watched_init(self, job):
        start = now()
        init(self, job)
        log.append((start, f"spawn {name_of(job)} (waited {now() - start:.2f})"))

    def watched_reap(self):
        outcome = reap(self)
        log.append((now(), f"end   {name_of(self.job)} ({outcome.seconds:.2f} s)"))
        return outcome

    def watched_events(self, data):
        before = len(self.events)
        on_events(self, data)
        for event in self.events[before:]:
            what = getattr(event, "step", None) or getattr(event, "check", None) or ""
            log.append((now(), f"      {name_of(self.job)[:12]} {type(event).__name__} {what}"))

    def watched_wait(self, **kwargs):
        asked = now()
        ready = wait_ready(self, **kwargs)
        if ready:
            log.append((now(), f"zygote ready (asked at {asked:.2f})"))
        return ready

    jobs._Running.__init__, jobs._Running.reap = watched_init, watched_reap
    if args.events:
        jobs._Running.on_events = watched_events
    zygote_module.Zygote._wait_ready = watched_wait
    if args.no_early:
        from checker.engine import grading

        grade = grading.grade
        grading.grade = lambda *a, **k: grade(*a, **{**k, "early": False})

    def report() -> None:
        for at, line in sorted(log):
            print(f"{at:6.2f} {line}", file=sys.stderr)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(f"{now():6.2f} exit (kata's own CPU time {usage.ru_utime + usage.ru_stime:.2f} s)", file=sys.stderr)

    atexit.register(report)
    reference = "solutions/loop.py" if args.track == "moons" else f"solutions/{args.track}/loop.py"
    sys.argv = ["kata", "check", "--track", args.track, "--format", "json", str(ROOT / reference)]
    from checker.entry import main as kata

    kata()


if __name__ == "__main__":
    main()
