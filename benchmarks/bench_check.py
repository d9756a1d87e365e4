"""How long one `kata check` of the reference takes, against a bare `python -c "import torch"`,
and how much memory its largest process holds at its peak, against the same baseline.

All commands run alternately in the same session (so machine load affects all alike), N times
each; the report gives medians and the ratios, against `import torch` and against the import floor.
With --tracks, `kata check` of every track's reference is timed too (each against the same floor).
With --baseline ROOT, an older kata's `kata check` of the moons reference (its checkout's `checker/` package, run
as this interpreter's `python -c` with PYTHONPATH=ROOT, e.g. a `git archive a26ca29` unpacked there) is timed in
the same alternation, and the report adds the paired ratio this checkout / baseline: the import floor moves with
torch and the machine, a baseline timed beside it does not. Run:

    python benchmarks/bench_check.py [-n 7] [--tracks] [--baseline /tmp/kata-base]

Results are printed and written to benchmarks/results/check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


FLOOR = "import torch, torch._dynamo, sklearn.datasets, sklearn.model_selection"


# Runs a command and prints the peak resident set size (KiB) of its largest process, descendants included. kata's
# zygote and the children it forks are not kata's to wait for (kata leaves with os._exit; the zygote's children are
# reaped by their shepherds), so waiting alone (RUSAGE_CHILDREN) would miss them: this process becomes the
# subreaper of everything the command starts and reads each live descendant's high-water mark (VmHWM) every
# 10 ms, keeping the largest, beside RUSAGE_CHILDREN for what it did wait for.
PEAK = r"""
import ctypes, os, resource, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
me, peak = os.getpid(), 0
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def descendants():
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    parents[int(name)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, stack = set(), [me]
    while stack:
        pid = stack.pop()
        for kid, parent in parents.items():
            if parent == pid and kid not in found:
                found.add(kid)
                stack.append(kid)
    return found

def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0

while True:
    peak = max([peak, *map(hwm, descendants())])
    if proc.poll() is not None and not descendants():
        break
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:  # orphans handed to this subreaper
            pass
    except ChildProcessError:
        pass
    time.sleep(0.01)
if proc.returncode:
    sys.exit(proc.returncode)
print(max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"""


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    # a baseline runs outside this checkout: its zygote would import this checkout's checker/ from the folder
    proc = subprocess.run(cmd, cwd=ROOT if env is None else tempfile.gettempdir(), env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed


def peak_kib(cmd: list[str], env: dict[str, str] | None = None) -> int:
    cwd = ROOT if env is None else tempfile.gettempdir()
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], cwd=cwd, env=env, capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7, help="runs of each command")
    parser.add_argument("--tracks", action="store_true", help="also time `kata check` of every track's reference")
    parser.add_argument("--baseline", type=Path, default=None, help="root of an older kata checkout")
    args = parser.parse_args()
    kata = shutil.which("kata") or sys.exit("`kata` is not on PATH: pip install -e . first")
    commands = {
        "import torch": [sys.executable, "-c", "import torch"],
        # What any process that trains the reference must import: torch, torch._dynamo (imported by
        # the first optimizer.step()) and scikit-learn (make_moons). No grader can go below this.
        "import floor": [sys.executable, "-c", FLOOR],
        "kata check": [kata, "check", "solutions/loop.py"],
    }
    if args.tracks:
        sys.path.insert(0, str(ROOT))
        from checker.setting.tracks import all_tracks

        for track in all_tracks().values():
            if track.id != "moons":
                commands[f"check {track.id}"] = [kata, "check", "--track", track.id, track.reference_path]
    envs: dict[str, dict[str, str]] = {}
    if args.baseline is not None:
        if not (args.baseline / "checker" / "__init__.py").is_file():
            raise SystemExit(f"--baseline {args.baseline}: no checker/ package there")
        entry = "from checker.entry import main" if (args.baseline / "checker" / "entry.py").is_file() else \
            "from checker.cli import main"
        commands["baseline check"] = [sys.executable, "-c", f"{entry}; main()", "check",
                                      str(ROOT / "solutions" / "loop.py")]
        envs["baseline check"] = dict(os.environ, PYTHONPATH=str(args.baseline.resolve()))
    for name, cmd in commands.items():  # warm the OS file cache once
        timed(cmd, envs.get(name))
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.n):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, envs.get(name)))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    ratio = medians["kata check"] / medians["import torch"]
    floor = medians["import floor"] / medians["import torch"]
    peaks = {name: peak_kib(cmd, envs.get(name)) for name, cmd in commands.items()}
    memory_ratio = peaks["kata check"] / peaks["import torch"]
    over_floor = {name: medians[name] / medians["import floor"] for name in medians
                  if name in ("kata check", "baseline check") or name.startswith("check ")}
    paired = ([a / b for a, b in zip(times["kata check"], times["baseline check"], strict=True)]
              if "baseline check" in times else None)
    report = {"runs": args.n, "seconds": times, "median_seconds": medians, "ratio": ratio, "floor_ratio": floor,
              "over_floor": over_floor, "peak_rss_kib": peaks, "memory_ratio": memory_ratio}
    if paired is not None:
        report["baseline"] = str(args.baseline)
        report["paired_ratios_over_baseline"] = paired
        report["ratio_over_baseline"] = medians["kata check"] / medians["baseline check"]
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "check.json").write_text(json.dumps(report, indent=2))
    for name, median in medians.items():
        print(f"{name:<24} median {median:.2f} s  (min {min(times[name]):.2f}, max {max(times[name]):.2f})")
    print(f"ratio kata check / import torch: {ratio:.2f}x (the import floor alone: {floor:.2f}x)")
    for name, r in over_floor.items():
        print(f"{name:<24} / import floor: {r:.2f}x")
    for name, kib in peaks.items():
        print(f"{name:<24} peak RSS of its largest process {kib / 1024:.0f} MiB")
    print(f"memory ratio kata check / import torch: {memory_ratio:.2f}x")
    if paired is not None:
        print(f"kata check / baseline check: {report['ratio_over_baseline']:.2f}x (medians); per round: "
              f"{', '.join(f'{r:.2f}' for r in paired)}")


if __name__ == "__main__":
    main()
