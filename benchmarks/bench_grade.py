"""`kata grade` throughput on a class folder of 20 submissions, against a baseline kata in the same run.

The folder holds the reference, correct rewrites, hand-written broken loops and catalogue mutants
(20 files). Each round grades it once with this checkout's kata and once with the baseline's (an
older checkout of the package, e.g. made with `git worktree add /tmp/kata-base <commit>`),
alternating, so machine load affects both alike. The report gives the median files per minute of
each and their ratio, the rounds' paired ratios (a round's two runs share the machine's load), the
CPU seconds of kata's own process (with what it reaps; the sandbox's children are not counted: this
is the parent's work, where the gradebook is written, and hardly depends on other work on the machine),
and the CPU seconds of the whole process tree (kata, its zygote and every child: sampled from /proc
every 20 ms, so each process's last few milliseconds are missed). The tree's CPU is the work grading
20 files takes, which other work on the machine hardly changes: under load, its ratio says more than
the wall-clock one. Run:

    python benchmarks/bench_grade.py --baseline /tmp/kata-base [-n 3]

Without --baseline only this checkout is timed. Results go to benchmarks/results/grade.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N_FILES = 20
MUTANTS = ("zero-grad-missing", "scheduler-per-batch", "loss-tensor-kept", "no-grad-missing", "step-before-backward",
           "train-mode-missing", "clip-after-step", "loader-unseeded", "model-unseeded", "softmax-before-loss")


def class_folder(dest: Path) -> list[Path]:
    """20 submissions: the reference, correct rewrites, broken loops and mutants."""
    sys.path.insert(0, str(ROOT))
    from checker.catalogue.mutants import mutant_source

    files = {"reference.py": (ROOT / "solutions" / "loop.py").read_text()}
    for path in sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py"))[:5]:
        files[f"correct_{path.name}"] = path.read_text()
    for path in sorted((ROOT / "tests" / "corpus" / "broken").glob("*.py"))[:4]:
        files[f"broken_{path.name}"] = path.read_text()
    for mid in MUTANTS:
        files[f"mutant_{mid}.py"] = mutant_source(mid)
    chosen = dict(list(files.items())[:N_FILES])
    for name, source in chosen.items():
        (dest / name).write_text(source)
    return [dest / name for name in chosen]


# Runs a command and prints the CPU seconds (user + system) of every process it starts, descendants included:
# kata's zygote and the children it forks are not kata's to wait for, so this process becomes the subreaper of
# everything the command starts and samples each live descendant's own CPU time every 20 ms, keeping the largest.
TREE_CPU = r"""
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
hz, me, cpu = os.sysconf("SC_CLK_TCK"), os.getpid(), {}
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def sample():
    parents, own = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                parents[int(name)], own[int(name)] = int(fields[1]), (int(fields[11]) + int(fields[12])) / hz
            except (OSError, ValueError, IndexError):
                pass
    found, stack = set(), [me]
    while stack:
        pid = stack.pop()
        for kid, parent in parents.items():
            if parent == pid and kid not in found:
                found.add(kid)
                stack.append(kid)
    for pid in found:
        cpu[pid] = max(cpu.get(pid, 0.0), own.get(pid, 0.0))
    return found

while sample() or proc.poll() is None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:  # orphans handed to this subreaper
            pass
    except ChildProcessError:
        pass
    time.sleep(0.02)
if proc.returncode not in (0, 1):
    sys.exit(proc.returncode)
print(sum(cpu.values()))
"""


def tree_cpu(package_root: Path, folder: Path, out: Path) -> float:
    """CPU seconds of one `kata grade` and every process it started (a run of its own, after the timed one)."""
    env = dict(os.environ, PYTHONPATH=str(package_root), NO_COLOR="1")
    entry = "from checker.entry import main" if (package_root / "checker" / "entry.py").is_file() else \
        "from checker.cli import main"
    cmd = [sys.executable, "-c", TREE_CPU, sys.executable, "-c", f"{entry}; main()", "grade", str(folder), "-o",
           str(out)]
    proc = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"kata grade ({package_root}) exited {proc.returncode}: {proc.stderr[-800:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grade_once(package_root: Path, folder: Path, out: Path) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of kata's own process and what it reaps (not the sandbox's children, which
    its zygote forks), of one `kata grade`."""
    env = dict(os.environ, PYTHONPATH=str(package_root), NO_COLOR="1")
    # each side's own `kata` executable: checker.entry where the checkout has one (it skips the interpreter's
    # teardown), else the click group itself
    entry = "from checker.entry import main" if (package_root / "checker" / "entry.py").is_file() else \
        "from checker.cli import main"
    cmd = [sys.executable, "-c", f"{entry}; main()", "grade", str(folder), "-o", str(out)]
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kata grade ({package_root}) exited {proc.returncode}: {proc.stderr[-800:]}")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="rounds")
    parser.add_argument("--baseline", type=Path, default=None, help="root of an older kata checkout")
    parser.add_argument("--tree-cpu", action="store_true",
                        help="also grade once more a round, each side, counting the CPU of every process")
    args = parser.parse_args()
    sides = {"this checkout": ROOT}
    if args.baseline is not None:
        if not (args.baseline / "checker" / "__init__.py").is_file():
            raise SystemExit(f"--baseline {args.baseline}: no checker/ package there")
        sides["baseline"] = args.baseline
    times: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    trees: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        files = class_folder(folder)
        for round_ in range(args.n):
            for name, root in sides.items():
                out = Path(tmp) / f"out-{name.replace(' ', '-')}-{round_}"
                wall, cpu = grade_once(root, folder, out)
                times[name].append(wall)
                cpus[name].append(cpu)
            for name, root in sides.items() if args.tree_cpu else ():
                trees[name].append(tree_cpu(root, folder, Path(tmp) / f"tree-{name.replace(' ', '-')}-{round_}"))
    report = {"files": len(files), "rounds": args.n}
    for name, values in times.items():
        median = statistics.median(values)
        report[name] = {"seconds": values, "median_seconds": median, "files_per_minute": len(files) * 60 / median,
                        "cpu_seconds": cpus[name], "median_cpu_seconds": statistics.median(cpus[name])}
        print(f"{name:14s} median {median:6.1f} s  {len(files) * 60 / median:5.1f} files/min  "
              f"(runs: {', '.join(f'{v:.1f}' for v in values)}; parent CPU s: "
              f"{', '.join(f'{v:.2f}' for v in cpus[name])})")
        if trees[name]:
            report[name]["tree_cpu_seconds"] = trees[name]
            print(f"{'':14s} CPU of every process: {', '.join(f'{v:.1f}' for v in trees[name])} s")
    if "baseline" in times:
        ratio = report["this checkout"]["files_per_minute"] / report["baseline"]["files_per_minute"]
        report["throughput_ratio"] = ratio
        print(f"throughput this checkout / baseline: {ratio:.2f}x")
        paired = [a / b for a, b in zip(times["this checkout"], times["baseline"], strict=True)]
        paired_cpu = [a / b for a, b in zip(cpus["this checkout"], cpus["baseline"], strict=True)]
        report["paired_time_ratios"], report["paired_cpu_ratios"] = paired, paired_cpu
        print(f"time this checkout / baseline, per round: {', '.join(f'{r:.2f}' for r in paired)} "
              f"(median {statistics.median(paired):.2f}); parent CPU: {', '.join(f'{r:.2f}' for r in paired_cpu)} "
              f"(median {statistics.median(paired_cpu):.2f})")
        if trees["this checkout"]:
            paired_tree = [a / b for a, b in zip(trees["this checkout"], trees["baseline"], strict=True)]
            report["paired_tree_cpu_ratios"] = paired_tree
            print(f"CPU of every process, this checkout / baseline, per round: "
                  f"{', '.join(f'{r:.2f}' for r in paired_tree)} (median {statistics.median(paired_tree):.2f})")
    report["load_average"] = os.getloadavg()
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "grade.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
