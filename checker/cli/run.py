"""`kata run` and `kata trace`: a loop file's own training, shown as a table and a curve, or JSON."""

from __future__ import annotations

import click

from checker.cli.common import (
    Options,
    UsageProblem,
    current_lang,
    current_workdir,
    pass_options,
    prepared_lab,
    stored_lang_option,
    track_option,
)
from checker.learn.messages import TOO_MANY
from checker.learn.progress import track_for_file
from checker.runs.training import RunSettings, TraceSettings, figures_or_usage_error, run_sources

LESSON_HELP = ("Run the lesson's own loop (the track's reference; moons: solutions/loop.py) instead of a file of "
               "yours.")


@click.command("run")
@click.argument("path", required=False, type=click.Path(dir_okay=True))
@click.option("--lesson", is_flag=True, help=LESSON_HELP)
@click.option("--optimizer", type=click.Choice(["sgd", "adam"]), default="sgd", show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=0.1, show_default=True,
              help="Learning rate.")
@click.option("--epochs", type=click.IntRange(1, 10_000), default=10, show_default=True)
@click.option("--batch-size", type=click.IntRange(1), default=None,
              help="Default: the track's batch size (32 on moons); at most its training set (150 on moons).")
@click.option("--scheduler", type=click.Choice(["none", "step", "cosine"]), default="none", show_default=True,
              help="step: StepLR(step_size=10, gamma=0.5); cosine: CosineAnnealingLR(T_max=epochs).")
@click.option("--clip", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Clip the gradient norm to this value.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
              help="Seed of the loader's order and of the model's initial weights.")
@click.option("--seed-loader", type=click.IntRange(0), default=None,
              help="Seed of the loader's order alone (default: --seed).")
@click.option("--seed-model", type=click.IntRange(0), default=None,
              help="Seed of the model's initial weights alone (default: --seed).")
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--compare", "compare", type=click.Path(), default=None,
              help="A second loop file to run with the same settings, shown side by side.")
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Also save the loss curves, and each run's decision boundary after training, to this PNG file.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-epoch history as JSON.")
@track_option
@stored_lang_option
def run_cmd(path, lesson, optimizer, lr, epochs, batch_size, scheduler, clip, seed, seed_loader, seed_model,
            device, compare, plot, as_json, track):
    """Train with the loop in PATH and show every epoch.

    Everything comes from PATH's own functions: the data and its split (make_data), the loader,
    the model, the optimizer, and fit(), which validates after every epoch. A bug in any of them
    shows in the table; the steps column counts optimizer steps per epoch.
    """
    from checker.learn.tables import print_compare, print_history
    from checker.runs.training import run_files

    chosen = track_for_file(track, path, current_workdir(None))
    batch_size = batch_size or chosen.thresholds.batch_size  # the track's, as its stories and checks say
    settings = RunSettings.from_options(optimizer=optimizer, lr=lr, epochs=epochs, batch_size=batch_size,
                                        scheduler=scheduler, clip=clip, seed=seed, seed_loader=seed_loader,
                                        seed_model=seed_model, device=device, boundary=bool(plot))
    if batch_size > chosen.data.n_train:
        raise UsageProblem(TOO_MANY, option="--batch-size", value=batch_size, n=chosen.data.n_train, track=chosen.id)
    sources = run_sources(path, lesson, compare, track=chosen, lang=current_lang(None))
    lab = prepared_lab(device, chosen)
    results = figures_or_usage_error(lambda: run_files(sources, settings, lab), current_lang(None))
    if plot:
        from checker.learn.plots import plot_title, save_loss_plot
        from checker.runs.boundary import PROJECTED, PROJECTED_ES

        lang = current_lang(None)
        projected = chosen.model.widths[0] > 2  # the boundary of more features, on their principal plane
        save_loss_plot([(r.name, r.history) for r in results], plot, [r.boundary for r in results],
                       title=plot_title(chosen.id, settings, lang),
                       plane=(PROJECTED_ES if lang == "es" else PROJECTED) if projected else None)
    if as_json:
        from checker.base.term import dumps

        if compare:
            click.echo(dumps({r.name: r.history for r in results}, indent=2))
        else:
            click.echo(dumps(results[0].history, indent=2))
        return
    if compare:
        print_compare(results, current_lang(None))
    else:
        print_history(results[0], current_lang(None))
    if plot:
        from checker.base.term import console
        from checker.learn.tables import PLOT_SAVED

        console().print(PLOT_SAVED.render(current_lang(None), path=plot))


def run_settings_of(args) -> RunSettings:
    """`kata run`'s flags (a kata's [try] args) as the settings `kata run` would train with; a bad flag is a
    UsageProblem with click's own message (passed down to ``checker.author.quotes.false_quotes``)."""
    try:
        return RunSettings.from_options(**run_cmd.make_context("run", ["loop.py", *args]).params)
    except click.ClickException as exc:
        raise UsageProblem(exc.format_message()) from None


@click.command("trace")
@click.argument("path", required=False, type=click.Path(dir_okay=True))
@click.option("--lesson", is_flag=True, help=LESSON_HELP)
@click.option("--examples", type=click.IntRange(1), default=6, show_default=True,
              help="Train on this many examples (the first of the training split; 150 at most on moons).")
@click.option("--batch-size", type=click.IntRange(1), default=4, show_default=True)
@click.option("--epochs", type=click.IntRange(1, 20), default=2, show_default=True)
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the trace as JSON.")
@track_option
@stored_lang_option
@pass_options
def trace_cmd(options: Options, path, lesson, examples, batch_size, epochs, seed, as_json, track):
    """Follow a few examples through PATH's train_epoch, batch by batch.

    For every batch: the shape of xb, which examples it holds (numbered from 0), whether each
    row still has its own label, and how many times step() was called in each epoch.
    """
    from checker.learn.tables import print_trace
    from checker.runs.training import measure

    settings = TraceSettings(examples=examples, batch_size=batch_size, epochs=epochs, seed=seed)
    chosen = track_for_file(track, path, current_workdir(None))
    for value, name in ((examples, "--examples"), (batch_size, "--batch-size")):
        if value > chosen.data.n_train:
            raise UsageProblem(TOO_MANY, option=name, value=value, n=chosen.data.n_train, track=chosen.id)
    sources = run_sources(path, lesson, track=chosen, lang=current_lang(options.lang))
    lab = prepared_lab("cpu", chosen)
    trace = figures_or_usage_error(lambda: measure(sources, [settings], lab, what="trace"),
                                   current_lang(options.lang))[0]
    if as_json:
        from checker.base.term import dumps

        click.echo(dumps(trace, indent=2))
        return
    print_trace(trace, current_lang(options.lang))
