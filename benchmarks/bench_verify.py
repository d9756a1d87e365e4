"""How much faster is `kata mutants verify` than running `kata check` once per mutant?

    python benchmarks/bench_verify.py [--only ID ...] [--rounds 1]
    python benchmarks/bench_verify.py --boundary [--function make_optimizer] [--track moons]

Both sides grade the same files with the same battery, in the same run, one after the other:
- baseline: the reference and every mutant exported to files, then `kata check FILE` on each,
  one fresh process per file (each pays Python start-up, the torch import and the lab);
- verify: `kata mutants verify --seeds 1` (the reference once, every mutant), one process, one
  warm parent, forked children on both cores.
With --boundary the files are the boundary mutants of the track's --function(s) (every function when none is
named) and verify is `kata mutants verify --boundary --seeds 1` over them: the cost of one draw of the boundary
run against a `kata check` of each mutant.
Wall-clock times; the machine's load average is recorded beside them, since a shared machine
skews both. Results go to benchmarks/results/bench_verify-<time>.json; a summary is printed.
Nothing is asserted: speed is reported, never tested.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))


def kata(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "checker", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def export(folder: Path, only: list[str]) -> list[Path]:
    from checker.catalogue.mutants import load_mutants, mutant_source, reference_source

    files = [folder / "reference.py"]
    files[0].write_text(reference_source())
    for mid in only or load_mutants():
        path = folder / f"{mid}.py"
        path.write_text(mutant_source(mid))
        files.append(path)
    return files


def export_boundary(folder: Path, track_id: str, functions: list[str]) -> list[Path]:
    from checker.catalogue.mutants import reference_source
    from checker.mutation.boundary import boundary_of_tracks
    from checker.setting.tracks import track_named

    track = track_named(track_id)
    files = [folder / "reference.py"]
    files[0].write_text(reference_source(track))
    for b in boundary_of_tracks([track], functions=functions)[track.id]:
        if b.mutant.equivalent is None:
            path = folder / f"{b.mutant.id}.py"
            path.write_text(b.source)
            files.append(path)
    return files


def run_boundary_verify(track_id: str, functions: list[str]) -> dict:
    args = ["mutants", "verify", "--boundary", "--seeds", "1", "-q", "--track", track_id]
    for name in functions:
        args += ["--function", name]
    started = time.perf_counter()
    proc = kata(*args)
    seconds = time.perf_counter() - started
    found = [line for line in proc.stdout.splitlines() if "hole(s) in the argument classes" in line]
    holes = int(found[0].split()[0]) if found else 0
    return {"seconds": seconds, "exit_code": proc.returncode, "holes": holes, "stdout": proc.stdout[-2000:]}


def run_baseline(files: list[Path], track_id: str = "moons") -> dict:
    started = time.perf_counter()
    codes = {}
    per_file = []
    for path in files:
        t = time.perf_counter()
        proc = kata("check", str(path), "--json", *(["--track", track_id] if track_id != "moons" else []))
        per_file.append(time.perf_counter() - t)
        codes[path.stem] = proc.returncode
    return {"seconds": time.perf_counter() - started, "per_file": per_file, "exit_codes": codes}


def run_verify(only: list[str], report: Path) -> dict:
    args = ["mutants", "verify", "--seeds", "1", "-q", "--json", str(report)]
    for mid in only:
        args += ["--only", mid]
    started = time.perf_counter()
    proc = kata(*args)
    seconds = time.perf_counter() - started
    statuses = {}
    if report.exists():
        data = json.loads(report.read_text())
        statuses = {m["id"]: m["status"] for f in data["files"].values() for m in f["mutants"]}
    return {"seconds": seconds, "exit_code": proc.returncode, "statuses": statuses}


def disagreements(base: dict, ver: dict) -> list[str]:
    """Files where the two ways disagree: kata check fails <=> verify says the mutant is killed."""
    out = []
    for name, code in base["exit_codes"].items():
        if name == "reference":
            if code != 0:
                out.append(f"reference: kata check exit {code}")
            continue
        killed = ver["statuses"].get(name) in ("Killed", "Timeout")
        if killed != (code == 1):
            out.append(f"{name}: kata check exit {code}, verify {ver['statuses'].get(name)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", action="append", default=[], metavar="ID", help="Only this mutant (repeatable)."
    )
    parser.add_argument("--rounds", type=int, default=1, help="Repeat both sides this many times.")
    parser.add_argument("--boundary", action="store_true", help="Time the boundary mutants instead of the catalogue.")
    parser.add_argument("--function", action="append", default=[], metavar="NAME",
                        help="With --boundary: only this protocol function's mutants (repeatable).")
    parser.add_argument("--track", default="moons", help="With --boundary: the track (default: moons).")
    args = parser.parse_args(argv)
    if args.boundary:
        return bench_boundary(args)
    rounds = []
    with tempfile.TemporaryDirectory(prefix="kata-bench-") as tmp:
        files = export(Path(tmp), args.only)
        print(f"{len(files)} files (reference + {len(files) - 1} mutants), {os.cpu_count()} CPUs", flush=True)
        for i in range(args.rounds):
            load_before = os.getloadavg()[0]
            base = run_baseline(files)
            print(
                f"round {i + 1}: kata check x{len(files)}: {base['seconds']:.1f} s "
                f"({base['seconds'] / len(files):.2f} s per file)",
                flush=True,
            )
            ver = run_verify(args.only, Path(tmp) / "verify.json")
            differ = disagreements(base, ver)
            load_after = os.getloadavg()[0]
            ratio = base["seconds"] / ver["seconds"]
            print(
                f"round {i + 1}: kata mutants verify: {ver['seconds']:.1f} s -> {ratio:.1f}x faster "
                f"(load average {load_before:.1f} -> {load_after:.1f})",
                flush=True,
            )
            print(
                f"round {i + 1}: verdicts agree on every file"
                if not differ
                else f"round {i + 1}: verdicts DISAGREE: " + "; ".join(differ),
                flush=True,
            )
            rounds.append(
                {
                    "baseline": base,
                    "verify": ver,
                    "ratio": ratio,
                    "disagreements": differ,
                    "load_average": [load_before, load_after],
                }
            )
    ratios = [r["ratio"] for r in rounds]
    summary = {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "files": len(files),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "rounds": rounds,
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"bench_verify-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"verify is {min(ratios):.1f}x"
        + (f"-{max(ratios):.1f}x" if len(ratios) > 1 else "")
        + f" faster than kata check per file (issue 18 asks >= 6x); details in {out.relative_to(ROOT)}"
    )
    return 0


def bench_boundary(args) -> int:
    """Boundary verify (one draw) against `kata check` of every boundary mutant, in the same run."""
    rounds = []
    with tempfile.TemporaryDirectory(prefix="kata-bench-") as tmp:
        files = export_boundary(Path(tmp), args.track, args.function)
        print(f"{len(files)} files (reference + {len(files) - 1} boundary mutants of {args.track}), "
              f"{os.cpu_count()} CPUs", flush=True)
        for i in range(args.rounds):
            load_before = os.getloadavg()[0]
            base = run_baseline(files, args.track)
            ver = run_boundary_verify(args.track, args.function)
            load_after = os.getloadavg()[0]
            passed = sorted(name for name, code in base["exit_codes"].items() if code == 0 and name != "reference")
            ratio = base["seconds"] / ver["seconds"]
            print(f"round {i + 1}: kata check x{len(files)}: {base['seconds']:.1f} s; verify --boundary: "
                  f"{ver['seconds']:.1f} s -> {ratio:.1f}x (load average {load_before:.1f} -> {load_after:.1f}); "
                  f"kata check passes {len(passed)}, verify reports {ver['holes']} hole(s)", flush=True)
            rounds.append({"baseline": base, "verify": ver, "ratio": ratio, "check_passes": passed,
                           "load_average": [load_before, load_after]})
    ratios = [r["ratio"] for r in rounds]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"bench_verify-boundary-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"when": datetime.now(timezone.utc).isoformat(timespec="seconds"), "track": args.track,
                               "functions": args.function, "files": len(files), "cpus": os.cpu_count(),
                               "rounds": rounds, "ratio_min": min(ratios), "ratio_max": max(ratios)}, indent=2) + "\n")
    print(f"verify --boundary is {min(ratios):.1f}x faster than kata check per mutant (issue 30 asks >= 8x); "
          f"details in {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
