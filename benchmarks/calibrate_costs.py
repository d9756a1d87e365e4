"""Measure how long each check takes on a track's reference and keep it as the track's [costs] table.

`kata check` runs a file's checks in two processes at once; it shares them out by cost so that both end
together (``checker.engine.grading.split_checks``). A check's own declared cost (``Check.cost``) was measured on
the moons reference; a track whose data, model or epochs differ (three-classes trains 50 epochs with a best-epoch
copy, data-pipeline 100 epochs with BatchNorm and dropout) has checks of other lengths, and a split by the moons
figures leaves one process working while the other has finished. This script runs `kata check --json` of the
track's reference ``-n`` times, cold, takes each check's median seconds and prints them as milliseconds;
``--write`` puts them in the track file's ``[costs]`` table (replacing the one there, everything else in the file
kept as it is). Costs only decide how checks are shared between processes: never what a check observes or how it
is judged. Any track `kata tracks` lists works, a course's own included:

    python benchmarks/calibrate_costs.py --track three-classes [-n 3] [--write]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEADER = "[costs]"
COMMENT = ("# Milliseconds each check took on this track's reference (median of {runs} cold `kata check` runs, "
           "written by\n# benchmarks/calibrate_costs.py): how kata shares the checks between its processes, "
           "nothing more.")


def measure(kata: str, track_id: str, reference: Path, runs: int) -> dict[str, float]:
    """Each check's median milliseconds over ``runs`` cold `kata check --json` runs of the reference."""
    seconds: dict[str, list[float]] = {}
    for i in range(runs):
        proc = subprocess.run([kata, "check", "--json", "--track", track_id, str(reference)], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"kata check of {reference} exited {proc.returncode}: {proc.stderr[-800:]}")
        report = json.loads(proc.stdout)
        for check in report["checks"]:
            if check["status"] in ("pass", "fail"):  # a skipped or timed-out check says nothing of its length
                seconds.setdefault(check["id"], []).append(float(check["seconds"]))
        print(f"  run {i + 1}/{runs}: {len(report['checks'])} checks", file=sys.stderr)
    return {cid: max(1.0, round(1000 * statistics.median(ts))) for cid, ts in seconds.items()}


def costs_table(costs: dict[str, float], runs: int) -> str:
    """The [costs] table as TOML text, its comment first, the checks by id."""
    lines = [HEADER, COMMENT.format(runs=runs)]
    lines += [f'"{cid}" = {int(ms)}' for cid, ms in sorted(costs.items())]
    return "\n".join(lines) + "\n"


def with_costs(text: str, table: str) -> str:
    """The track file's text with ``table`` in place of its [costs] table (from its header to the next table's
    header, or to the end), or added at the end where it has none; every other line kept as it is."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
    if start is None:
        body = text if text.endswith("\n") or not text else text + "\n"
        return body + ("\n" if body.strip() else "") + table
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    tail = lines[end:]
    gap = ["\n"] if tail else []
    return "".join(lines[:start]) + table + "".join(gap + tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--track", action="append", help="a track (repeatable; default: every track)")
    parser.add_argument("-n", type=int, default=3, help="cold runs of `kata check` per track (default 3)")
    parser.add_argument("--write", action="store_true", help="write the table into each track file")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("-n must be at least 1")
    kata = shutil.which("kata") or parser.error("`kata` is not on PATH: pip install -e . first")
    sys.path.insert(0, str(ROOT))
    from checker.base.errors import UsageProblem
    from checker.setting.tracks import all_tracks, track_named

    try:
        tracks = [track_named(name) for name in args.track] if args.track else list(all_tracks().values())
    except UsageProblem as exc:
        parser.error(str(exc))
    for track in tracks:
        print(f"{track.id}: {args.n} run(s) of `kata check` of {track.reference_path}", file=sys.stderr)
        costs = measure(kata, track.id, track.reference, args.n)
        table = costs_table(costs, args.n)
        print(f"# {track.file}\n{table}")
        if args.write:
            track.file.write_text(with_costs(track.file.read_text(encoding="utf-8"), table), encoding="utf-8")
            print(f"written to {track.file}", file=sys.stderr)


if __name__ == "__main__":
    main()
