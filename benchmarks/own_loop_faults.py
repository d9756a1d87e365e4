"""Inject each reference-free fault of the mutant catalogue into each example of examples/ and run kata on it.

Usage: python benchmarks/own_loop_faults.py [--out DIR] [--runs N] [--json] [--example NAME]

For each example (a folder of examples/ with a faults.toml) and each mutant of mutants/*.toml whose
``killed_by`` names a check the trusted runner has, the mutant's steps are translated to the example's names
(faults.toml: [functions], [names], [snippets]) and applied with kata's own operators
(checker.catalogue.mutants.apply). A fault whose target is not in the example does not apply. Each mutated copy
of the example (written under --out, for benchmarks/own_loop_peers.py) is checked in this process through the
example's test_training.kata_pieces(); the unmodified example is checked --runs times (false alarms).

A fault counts as caught when a check fails; "right check" when one of the failing checks is one the mutant's
killed_by names; "line" when the first such failure names a line of the example's module.
The figures (every fault's row, every unmodified run, the totals, the versions, the commit and the load) are
written to benchmarks/results/own_loop_faults.json (--example: own_loop_faults-NAME.json).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_CHECKS = {"steps.per_batch", "steps.fresh_grads", "steps.overfit", "modes.train", "modes.eval",
                  "memory.graphs", "schedule.step", "clip.norm", "device.moved", "loss.epoch_mean", "repro.seeds",
                  "loader.coverage", "loader.order"}


def _toml(path: Path) -> dict:
    import tomllib

    return tomllib.loads(path.read_text())


def translate(text: str, spec: dict) -> str:
    snippets = spec.get("snippets", {})
    if text in snippets:
        return snippets[text]
    names = spec.get("names", {})
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], text)


def translated(mutant, spec: dict):
    steps = []
    for step in mutant.steps:
        args = {k: translate(v, spec) if isinstance(v, str) else v for k, v in step.args.items()}
        steps.append(dataclasses.replace(step, function=spec["functions"].get(step.function, step.function),
                                         target=translate(step.target, spec), args=args))
    return dataclasses.replace(mutant, steps=tuple(steps))


def faults(example: Path) -> list[tuple[str, str | None, str, tuple[str, ...]]]:
    """(mutant id, mutated source or None, why not, killed_by) for every reference-free mutant."""
    from checker.catalogue.mutants import MutantError, apply, load_mutants

    spec = _toml(example / "faults.toml")
    source = (example / spec["module"]).read_text()
    out = []
    for mid, mutant in sorted(load_mutants(ROOT / "mutants").items()):
        if not set(mutant.killed_by) & PROJECT_CHECKS:
            continue
        if mid in spec.get("skip", {}):
            out.append((mid, None, "skip: " + spec["skip"][mid], mutant.killed_by))
            continue
        try:
            out.append((mid, apply(translated(mutant, spec), source), "", mutant.killed_by))
        except MutantError as exc:
            out.append((mid, None, "n/a: " + str(exc).split(": ", 1)[-1][:90], mutant.killed_by))
    return out


def check_copy(folder: Path, module: str) -> tuple[object, float]:
    """kata's report on the example copied in ``folder`` (its test_training.kata_pieces()), and the seconds."""
    from checker.project.report import ProjectInputError
    from checker.project.runner import check_loop

    for name in (Path(module).stem, "test_training"):
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    start = time.perf_counter()
    try:
        import test_training

        with contextlib.redirect_stdout(io.StringIO()):
            return check_loop(**test_training.kata_pieces()), time.perf_counter() - start
    except ProjectInputError as exc:
        return exc, time.perf_counter() - start
    finally:
        sys.path.remove(str(folder))


def verdict(report, killed_by, module: str) -> dict:
    from checker.project.report import ProjectInputError

    if isinstance(report, ProjectInputError):
        return {"caught": True, "right": False, "line": False, "said": "error: " + report.render("en")}
    failing = report.failures
    right = [r for r in failing if r.id in killed_by]
    first = (right or failing or [None])[0]
    return {"caught": bool(failing), "right": bool(right),
            "line": bool(first and first.place and Path(first.place.path).name == module),
            "said": first.line("en") if first else "", "failing": [r.id for r in failing]}


def run_facts() -> dict:
    """When, on what and at which commit a benchmark ran: recorded beside its figures."""
    import os
    import platform
    import subprocess
    from importlib.metadata import version

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit.stdout.strip(),
            "python": platform.python_version(), "torch": version("torch"), "cpus": os.cpu_count(),
            "load_average": [round(x, 1) for x in os.getloadavg()]}


def totals(rows: list[dict], clean: list[dict]) -> dict:
    applied = [r for r in rows if r["applies"]]
    return {"injected": len(applied), "caught": sum(r["caught"] for r in applied),
            "right_check": sum(r["caught"] and r["right"] for r in applied),
            "right_check_at_the_examples_line": sum(r["caught"] and r["right"] and r["line"] for r in applied),
            "not_applicable": len(rows) - len(applied), "unmodified_runs": len(clean),
            "false_alarms": sum(not c["ok"] for c in clean)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "kata-own-loop-faults"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--example", action="append", help="only this example (repeatable; default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    facts = run_facts()
    rows, clean = [], []
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/faults.toml"))
    for example in [e for e in examples if not args.example or e.name in args.example]:
        module = _toml(example / "faults.toml")["module"]
        for run in range(args.runs):
            report, _ = check_copy(example, module)
            clean.append({"example": example.name, "run": run + 1, "ok": getattr(report, "ok", False),
                          "said": "" if getattr(report, "ok", False) else str(getattr(report, "render", str)())})
        for mid, source, why, killed_by in faults(example):
            row = {"example": example.name, "mutant": mid, "killed_by": list(killed_by)}
            if source is None:
                rows.append({**row, "applies": False, "why": why})
                continue
            folder = out / example.name / mid
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(example, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
            (folder / module).write_text(source)
            report, seconds = check_copy(folder, module)
            rows.append({**row, "applies": True, "seconds": round(seconds, 2), **verdict(report, killed_by, module)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    result = {"faults": rows, "clean": clean}
    name = "kata.json" if not args.example else f"kata-{'-'.join(args.example)}.json"
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(json.dumps(result, indent=1))
    facts["load_average_at_end"] = [round(x, 1) for x in __import__("os").getloadavg()]
    recorded = ROOT / "benchmarks" / "results" / name.replace("kata", "own_loop_faults", 1)
    recorded.write_text(json.dumps({"facts": facts, "totals": totals(rows, clean), **result}, indent=1) + "\n")
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for r in rows:
            mark = ("caught" if r["caught"] else "MISSED") if r["applies"] else r["why"]
            extra = f"  right={r['right']} line={r['line']}  {r['said'][:150]}" if r["applies"] else ""
            print(f"{r['example']:<11} {r['mutant']:<26} {mark}{extra}")
        for c in clean:
            print(f"{c['example']:<11} unmodified run {c['run']}: {'ok' if c['ok'] else 'FALSE ALARM ' + c['said']}")
        print(json.dumps(totals(rows, clean)), f"(written to {recorded.relative_to(ROOT)})")
    applied = [r for r in rows if r["applies"]]
    good = all(r["caught"] and r["right"] and r["line"] for r in applied) and all(c["ok"] for c in clean)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
