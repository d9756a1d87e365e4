"""`kata run`: the lesson's training on any loop file, shown as a table and a curve, or JSON."""

from __future__ import annotations

import math

import click

from checker.cli.common import UsageProblem, prepared_lab, read_loop_file
from checker.sandbox import Job, Limits, run_jobs
from checker.term import console, dumps, fmt, sparkline
from checker.worker import run_target


def run_histories(paths: list[str], settings: dict, device: str) -> list[tuple[str, list[dict], list[str]]]:
    """Run each file's lesson in its own child, side by side; (file, history, warnings) per path."""
    sources = [read_loop_file(p) for p in paths]
    lab = prepared_lab(device)
    seconds = 60.0 + settings["epochs"] * 1.0
    jobs = [Job(run_target(src, name, settings, lab), Limits(step_timeout=seconds), tag=name) for src, name in sources]
    results = []
    for outcome in run_jobs(jobs, workers=2):
        name = outcome.job.tag
        events = {e.get("event"): e for e in outcome.events}
        if "file_error" in events:
            raise UsageProblem(events["file_error"]["message"])
        if "history" in events:
            results.append((name, events["history"]["history"], events["history"]["warnings"]))
            continue
        if "raised" in events:
            raise click.ClickException(f"{name}: the run stopped because the loop raised an error\n"
                                       f"{events['raised']['error']}")
        if outcome.timed_out_step:
            raise click.ClickException(f"{name}: the run did not finish within {seconds:g} s")
        raise click.ClickException(f"{name}: the process running the loop ended early (exit status "
                                   f"{outcome.exit_status})")
    return results


def _table(name: str, history: list[dict], warnings: list[str]) -> None:
    from rich.table import Table

    out = console()
    table = Table(title=name, title_justify="left", box=None, pad_edge=False)
    columns = ["epoch", "lr", "train_loss", "val_loss", "val_acc"]
    for col in columns:
        table.add_column(col.replace("_", " "), justify="right")
    for row in history:
        table.add_row(*(fmt(row.get(c), 4 if c != "lr" else 6) for c in columns))
    out.print(table)
    for key, label in (("train_loss", "train loss"), ("val_loss", "val loss  ")):
        values = [row.get(key) for row in history]
        if values and all(isinstance(v, int | float) for v in values):
            finite = [v for v in values if math.isfinite(v)]
            span = f"{min(finite):.3f} .. {max(finite):.3f}" if finite else "no finite value"
            out.print(f"{label} {sparkline(values)}  ({span})")
    for warning in warnings:
        out.print(f"[yellow]warning:[/] {warning}")


def _compare_table(results: list[tuple[str, list[dict], list[str]]]) -> None:
    from rich.table import Table

    out = console()
    (a, ha, _), (b, hb, _) = results
    table = Table(box=None, pad_edge=False)
    table.add_column("epoch", justify="right")
    for key in ("lr", "train_loss", "val_loss", "val_acc"):
        for tag in ("A", "B"):
            table.add_column(f"{key.replace('_', ' ')} {tag}", justify="right")
    for ra, rb in zip(ha, hb, strict=False):
        cells = [str(ra.get("epoch"))]
        for key in ("lr", "train_loss", "val_loss", "val_acc"):
            cells += [fmt(ra.get(key), 4 if key != "lr" else 6), fmt(rb.get(key), 4 if key != "lr" else 6)]
        table.add_row(*cells)
    out.print(f"A = {a}\nB = {b}")
    out.print(table)
    for tag, hist in (("A", ha), ("B", hb)):
        out.print(f"train loss {tag} {sparkline([r.get('train_loss') for r in hist])}")


@click.command("run")
@click.argument("path", type=click.Path(dir_okay=True))
@click.option("--optimizer", type=click.Choice(["sgd", "adam"]), default="sgd", show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True,
              help="Learning rate.")
@click.option("--epochs", type=click.IntRange(1, 10_000), default=10, show_default=True)
@click.option("--batch-size", type=click.IntRange(1, 150), default=32, show_default=True)
@click.option("--scheduler", type=click.Choice(["none", "step", "cosine"]), default="none", show_default=True,
              help="step: StepLR(step_size=10, gamma=0.5); cosine: CosineAnnealingLR(T_max=epochs).")
@click.option("--clip", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Clip the gradient norm to this value.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
              help="Seed of the loader's order and the model's initial weights (the data split is the lesson's).")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--compare", "compare", type=click.Path(), default=None,
              help="A second loop file to run with the same settings, shown side by side.")
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also save the loss curves to this PNG file.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-epoch history as JSON.")
def run_cmd(path, optimizer, lr, epochs, batch_size, scheduler, clip, seed, device, compare, plot, as_json):
    """Train the lesson's setting with the loop in PATH and show every epoch.

    The data is the lesson's (200 moons, 150 train / 50 validation); the loader, model and
    optimizer come from PATH's own make_* functions, and fit() validates after every epoch.
    """
    settings = {"optimizer": optimizer, "lr": lr, "epochs": epochs, "batch_size": batch_size,
                "scheduler": None if scheduler == "none" else scheduler, "clip": clip, "seed": seed,
                "device": device}
    paths = [path] + ([compare] if compare else [])
    results = run_histories(paths, settings, device)
    if plot:
        from checker.plots import save_loss_plot

        save_loss_plot([(name, hist) for name, hist, _ in results], plot)
    if as_json:
        if compare:
            click.echo(dumps({name: hist for name, hist, _ in results}, indent=2))
        else:
            click.echo(dumps(results[0][1], indent=2))
        return
    if compare:
        _compare_table(results)
    else:
        _table(*results[0])
    if plot:
        console().print(f"plot saved to {plot}")
