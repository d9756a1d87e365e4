"""How long kata's battery takes on each example, as a ratio to one epoch of the example's own training.

Usage: python benchmarks/own_loop_speed.py [--repeat N]

For each folder of examples/ with a test_training.py: the baseline is one epoch of the project's own training
function over its whole training set (its model, optimizer, loader: batch size 64 where kata passes one),
timed in this same process and run; then kata.check_loop on the same pieces. Each is timed --repeat times and the
median kept; the ratio is battery / epoch. Nothing is asserted: the figures are reported, and written with every
timing, the commit and the load to benchmarks/results/own_loop_speed.json.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pieces_of(example: Path) -> dict:
    sys.modules.pop("test_training", None)
    sys.path.insert(0, str(example))
    try:
        import test_training

        return test_training.kata_pieces()
    finally:
        sys.path.remove(str(example))


def one_epoch(spec: dict) -> float:
    import torch

    from checker.project.binding import bind

    torch.manual_seed(0)
    model = spec["model"]()
    optimizer = spec["optimizer"](model)
    scheduler = spec["scheduler"](optimizer) if spec.get("scheduler") else None
    data = spec["data"]
    if spec.get("loader"):
        args, kwargs = bind(spec["loader"], "loader", {"dataset": data, "batch_size": 64, "seed": 0}, {})
        loader = spec["loader"](*args, **kwargs)
    else:
        loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
    pieces = {"model": model, "loader": loader, "optimizer": optimizer, "loss_fn": spec.get("loss_fn"),
              "device": torch.device("cpu"), "scheduler": scheduler, "clip_norm": spec.get("clip_norm"), "epoch": 1}
    args, kwargs = bind(spec["train"], "train", pieces, spec.get("bind", {}))
    start = time.perf_counter()
    spec["train"](*args, **kwargs)
    return time.perf_counter() - start


def battery(spec: dict) -> float:
    from checker.project.runner import check_loop

    start = time.perf_counter()
    report = check_loop(**spec)
    elapsed = time.perf_counter() - start
    assert report.ok, report.render("en")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from own_loop_faults import run_facts

    facts, rows = run_facts(), []
    print(f"{'example':<12} {'examples':>8} {'one epoch (s)':>14} {'battery (s)':>12} {'ratio':>8}")
    for example in sorted(p.parent for p in (ROOT / "examples").glob("*/test_training.py")):
        spec = pieces_of(example)
        with contextlib.redirect_stdout(io.StringIO()):
            epochs = [one_epoch(pieces_of(example)) for _ in range(args.repeat)]
            batteries = [battery(pieces_of(example)) for _ in range(args.repeat)]
        epoch, checks = statistics.median(epochs), statistics.median(batteries)
        rows.append({"example": example.name, "examples": len(spec["data"]), "epoch_seconds": epochs,
                     "battery_seconds": batteries, "median_epoch": epoch, "median_battery": checks,
                     "ratio": checks / epoch})
        print(f"{example.name:<12} {len(spec['data']):>8} {epoch:>14.3f} {checks:>12.3f} {checks / epoch:>8.1f}")
    facts["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    out = ROOT / "benchmarks" / "results" / "own_loop_speed.json"
    out.write_text(json.dumps({"facts": facts, "repeat": args.repeat, "examples": rows}, indent=1) + "\n")
    print(f"written to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
