"""torchtest and torcheck on the same examples and injected faults as benchmarks/own_loop_faults.py.

Run it with the interpreter of a throwaway virtual environment holding the peers (never the project's):

    python -m venv /tmp/peers && /tmp/peers/bin/pip install torch==2.13.0 numpy scikit-learn torchtest
    /tmp/peers/bin/pip install --no-deps torcheck==1.0.1     # it pins torch<2: installed without its pin
    /tmp/peers/bin/python benchmarks/own_loop_peers.py [--faults DIR]

DIR is where own_loop_faults.py wrote the mutated copies (default: $TMPDIR/kata-own-loop-faults). Each copy,
and each unmodified example, is tried with:
- torchtest 0.5, as its README shows: ``test_suite(model, loss_fn, optimizer, batch, test_vars_change=True,
  test_nan_vals=True, test_inf_vals=True)`` on one batch of the example's own loader (the text model, taking
  tokens and offsets, is wrapped to take one padded tensor): its own training step, never the project's;
- torcheck 1.0.1, as its README shows: ``register(optimizer)``, ``add_module_changing_check``,
  ``add_module_nan_check``, ``add_module_inf_check`` on the model, then the project's own training function for
  2 epochs (its evaluation after each).
A fault is caught when the tool raises one of its check errors; any other exception is said as "error".
Prints one JSON object per example and fault (what each tool said), then the versions; writes them all, with the
totals, the commit and the load, to benchmarks/results/own_loop_peers.json (--example or --fault: not written).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = {"model": "model", "net": "model", "loader": "loader", "train_loader": "loader", "dataloader": "loader",
         "test_loader": "loader", "optimizer": "optimizer", "opt": "optimizer", "loss_fn": "loss_fn",
         "criterion": "loss_fn", "device": "device", "scheduler": "scheduler", "epoch": "epoch",
         "clip_norm": "clip_norm", "max_norm": "clip_norm", "dataset": "dataset", "batch_size": "batch_size",
         "seed": "seed", "params": "params"}


def call(fn, pieces: dict, extra: dict):
    kwargs = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name in extra:
            kwargs[name] = extra[name]
        elif NAMES.get(name) in pieces:
            kwargs[name] = pieces[NAMES[name]]
        elif param.default is param.empty:
            raise TypeError(f"cannot bind {name}")
    return fn(**kwargs)


def build(spec: dict, seed: int = 0):
    import torch

    torch.manual_seed(seed)
    model = spec["model"]()
    optimizer = call(spec["optimizer"], {"model": model, "params": model.parameters()}, {})
    scheduler = call(spec["scheduler"], {"optimizer": optimizer}, {}) if spec.get("scheduler") else None
    data = spec["data"]
    if spec.get("loader"):
        loader = call(spec["loader"], {"dataset": data, "batch_size": 16, "seed": seed}, {})
    else:
        loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    return model, optimizer, scheduler, loader


def loss_of(spec: dict):
    import torch.nn.functional as F

    return spec.get("loss_fn") or F.nll_loss  # the MNIST example computes F.nll_loss inside train()


class Padded:
    """The text model (``model(text, offsets)``) taking one padded (batch, length) tensor, -1 for padding:
    torchtest moves one input tensor with ``.to(device)`` and calls ``model(inputs)``."""

    def __new__(cls, model):
        import torch

        class _Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = model

            def forward(self, padded):
                keep = padded >= 0
                offsets = torch.cat([torch.zeros(1, dtype=torch.int64), keep.sum(1).cumsum(0)[:-1]])
                return self.inner(padded[keep], offsets)

        return _Wrap()


def pad(text, offsets):
    import torch

    ends = list(offsets[1:].tolist()) + [len(text)]
    bags = [text[a:b] for a, b in zip(offsets.tolist(), ends, strict=True)]
    return torch.nn.utils.rnn.pad_sequence(bags, batch_first=True, padding_value=-1)


def torchtest_on(spec: dict) -> str:
    import torch
    from torchtest import test_suite

    model, optimizer, _, loader = build(spec)
    batch = next(iter(loader))
    if len(batch) == 3:  # the text example: (label, text, offsets)
        label, text, offsets = batch
        batch, model = [pad(text, offsets), label], Padded(model)
        optimizer = type(optimizer)(model.parameters(), **{k: v for k, v in optimizer.defaults.items()
                                                             if k in ("lr", "momentum")})
    try:
        test_suite(model, loss_of(spec), optimizer, batch, test_vars_change=True, test_nan_vals=True,
                   test_inf_vals=True, device="cpu")
    except Exception as exc:  # noqa: BLE001
        if type(exc).__module__.startswith("torchtest") or isinstance(exc, AssertionError):
            return f"caught: {type(exc).__name__}: {str(exc)[:100]}"
        return f"error: {type(exc).__name__}: {str(exc)[:100]}"
    del torch
    return "passed"


def torcheck_on(spec: dict) -> str:
    import torch
    import torcheck

    model, optimizer, _, _ = build(spec)
    torcheck.register(optimizer)
    torcheck.add_module_changing_check(model, module_name="model")
    torcheck.add_module_nan_check(model, module_name="model")
    torcheck.add_module_inf_check(model, module_name="model")
    try:
        scheduler = call(spec["scheduler"], {"optimizer": optimizer}, {}) if spec.get("scheduler") else None
        _, _, _, loader = build(spec)
        pieces = {"model": model, "loader": loader, "optimizer": optimizer, "loss_fn": spec.get("loss_fn"),
                  "device": torch.device("cpu"), "scheduler": scheduler, "clip_norm": spec.get("clip_norm")}
        for epoch in (1, 2):
            call(spec["train"], {**pieces, "epoch": epoch}, spec.get("bind", {}))
            if spec.get("evaluate"):
                call(spec["evaluate"], pieces, spec.get("bind", {}))
    except RuntimeError as exc:
        if "torcheck" in str(exc).lower() or "should" in str(exc) or "Module" in str(exc):
            return f"caught: {str(exc).strip().splitlines()[0][:100]}"
        return f"error: RuntimeError: {str(exc)[:100]}"
    except Exception as exc:  # noqa: BLE001
        return f"error: {type(exc).__name__}: {str(exc)[:100]}"
    finally:
        torcheck.disable()
    return "passed"


def spec_of(folder: Path, module: str) -> dict:
    for name in (Path(module).stem, "test_training"):
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        import test_training

        return test_training.kata_pieces()
    finally:
        sys.path.remove(str(folder))


def main() -> int:
    import tomllib

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default=str(Path(tempfile.gettempdir()) / "kata-own-loop-faults"))
    parser.add_argument("--example", action="append", help="only this example (repeatable; default: all)")
    parser.add_argument("--fault", action="append", help="only this fault (repeatable; default: all)")
    args = parser.parse_args()
    faults = Path(args.faults)
    rows = []
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/faults.toml"))
    for example in [e for e in examples if not args.example or e.name in args.example]:
        module = tomllib.loads((example / "faults.toml").read_text())["module"]
        folders = [("(unmodified)", example)] + sorted(
            (p.name, p) for p in (faults / example.name).glob("*") if p.is_dir())
        folders = [(n, f) for n, f in folders if not args.fault or n in args.fault]
        for name, folder in folders:
            row = {"example": example.name, "fault": name}
            for tool, run in (("torchtest", torchtest_on), ("torcheck", torcheck_on)):
                with contextlib.redirect_stdout(io.StringIO()):
                    try:
                        row[tool] = run(spec_of(folder, module))
                    except Exception as exc:  # noqa: BLE001
                        row[tool] = f"error: {type(exc).__name__}: {str(exc)[:100]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
    import torch

    versions = {"torch": torch.__version__}
    for name in ("torchtest", "torcheck", "numpy", "scikit-learn"):
        from importlib.metadata import version

        versions[name] = version(name)
    print(json.dumps({"versions": versions}))
    if not args.example and not args.fault:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from own_loop_faults import run_facts

        faulty = [r for r in rows if r["fault"] != "(unmodified)"]
        said = {tool: {kind: sum(r[tool].startswith(kind) for r in faulty) for kind in ("caught", "error", "passed")}
                for tool in ("torchtest", "torcheck")}
        clean = {tool: [r[tool] for r in rows if r["fault"] == "(unmodified)"] for tool in ("torchtest", "torcheck")}
        out = ROOT / "benchmarks" / "results" / "own_loop_peers.json"
        out.write_text(json.dumps({"facts": {**run_facts(), **versions}, "injected": len(faulty), "totals": said,
                                   "unmodified": clean, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
