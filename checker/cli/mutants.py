"""`kata mutants ...`: the mutant catalogue, its diffs, and the proof that the battery kills it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from checker.cli.common import UsageProblem, current_lang, lang_option


def _mutants(ctx: click.Context):
    from checker.mutation import MutantFileError, load_mutants

    try:
        return load_mutants(ctx.obj.get("mutants_dir") if ctx.obj else None)
    except MutantFileError as exc:
        raise UsageProblem(str(exc)) from None


def _one(ctx: click.Context, mutant_id: str):
    mutants = _mutants(ctx)
    if mutant_id not in mutants:
        raise UsageProblem(f"no mutant {mutant_id!r}; `kata mutants list` shows the {len(mutants)} there are")
    return mutants[mutant_id]


def _source(mutant) -> str:
    from checker.mutation import MutantError, apply, reference_source

    try:
        return apply(mutant, reference_source())
    except MutantError as exc:
        raise UsageProblem(str(exc)) from None


@click.group("mutants")
@click.option(
    "--mutants-dir",
    type=click.Path(file_okay=False),
    envvar="KATA_MUTANTS_DIR",
    hidden=True,
    help="Read the mutants from this folder instead of the shipped one.",
)
@click.pass_context
def mutants_group(ctx: click.Context, mutants_dir: str | None) -> None:
    """The broken loops behind the katas, and the proof that the checks catch each one."""
    ctx.ensure_object(dict)
    ctx.obj["mutants_dir"] = mutants_dir


@mutants_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List every mutant: id, operator, where it applies, the checks that must kill it."""
    mutants = _mutants(ctx)
    if as_json:
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": m.id,
                        "title": m.title,
                        "operator": m.operator,
                        "functions": list(m.functions),
                        "killed_by": list(m.killed_by),
                        "documented_in": m.documented_in,
                        "teaches": m.teaches,
                        "equivalent": m.equivalent,
                    }
                    for m in mutants.values()
                ],
                indent=2,
            )
        )
        return
    from rich.markup import escape
    from rich.table import Table

    from checker.term import console

    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("id", "operator", "in", "killed by", "title"):
        table.add_column(col, no_wrap=col != "title")
    for m in mutants.values():
        table.add_row(
            escape(m.id),
            m.operator,
            ", ".join(m.functions),
            ", ".join(m.killed_by),
            escape(m.title) + (" [dim](equivalent)[/]" if m.equivalent else ""),
        )
    out = console()
    out.print(table)
    out.print(f"[dim]{len(mutants)} mutants[/]")


@mutants_group.command("show")
@click.argument("mutant_id", metavar="ID")
@click.pass_context
def show_cmd(ctx: click.Context, mutant_id: str) -> None:
    """Show mutant ID as a unified diff against the reference (coloured on a terminal)."""
    from rich.markup import escape

    from checker.mutation.verify import unified_diff
    from checker.term import console

    mutant = _one(ctx, mutant_id)
    out = console()
    out.print(f"[bold]{escape(mutant.id)}[/]: {escape(mutant.title)}")
    out.print(f"[dim]{escape(mutant.description)}[/]")
    out.print(
        f"[dim]killed by: {', '.join(mutant.killed_by)} · documented in: {escape(mutant.documented_in)}[/]"
    )
    if mutant.equivalent:
        out.print(f"[yellow]declared equivalent:[/] {escape(mutant.equivalent)}")
    styles = {"+": "green", "-": "red", "@": "cyan"}
    for line in unified_diff(_reference(), _source(mutant), mutant.id):
        style = "bold" if line.startswith(("+++", "---")) else styles.get(line[:1], "")
        out.print(f"[{style}]{escape(line)}[/]" if style else escape(line))


def _reference() -> str:
    from checker.mutation import reference_source

    return reference_source()


@mutants_group.command("export")
@click.argument("mutant_id", metavar="ID")
@click.argument("dest", type=click.Path())
@click.option("--force", is_flag=True, help="Overwrite DEST if it exists.")
@click.pass_context
def export_cmd(ctx: click.Context, mutant_id: str, dest: str, force: bool) -> None:
    """Write mutant ID's loop file to DEST (a file, or a folder to hold ID.py)."""
    source = _source(_one(ctx, mutant_id))
    path = Path(dest)
    if path.is_dir():
        path = path / f"{mutant_id}.py"
    if path.exists() and not force:
        raise UsageProblem(f"{path} already exists; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise UsageProblem(f"{path.parent}: no such folder")
    try:
        path.write_text(source, encoding="utf-8")
    except OSError as exc:
        raise UsageProblem(f"cannot write {path} ({exc.strerror})") from None
    click.echo(f"wrote {path}")


class _Progress:
    """Progress on stderr: a live bar on a terminal, one line per finished loop otherwise."""

    def __init__(self, total: int, quiet: bool, count: int | None = None):
        from checker.term import console

        self.quiet = quiet
        self.count, self.finished = count, 0
        self.out = console(stderr=True)
        self.live = sys.stderr.isatty() and not quiet
        self.bar = None
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.out,
                transient=True,
            )
            self.task = self.bar.add_task("grading", total=total)

    def __enter__(self):
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.__exit__(*exc)

    def check(self, name: str, cid: str, status: str) -> None:
        if self.bar:
            counter = f"{self.finished}/{self.count} " if self.count else ""
            self.bar.update(self.task, advance=1, description=f"{counter}{name[:28]:<28} {cid}")

    def done(self, name: str, status: str) -> None:
        self.finished += 1
        if not self.live and not self.quiet:
            counter = f"[{self.finished}/{self.count}] " if self.count else ""
            self.out.print(f"{counter}graded {name}", markup=False, highlight=False)


@mutants_group.command("verify")
@click.option("--only", multiple=True, metavar="ID", help="Verify only this mutant (repeatable).")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a Stryker mutation-testing report (schema version 2) to this file.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a self-contained HTML page with the kill matrix and every diff.",
)
@click.option(
    "--seeds",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Run the reference under this many global RNG seeds; a check whose verdict changes is flaky.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@lang_option
@click.pass_context
def verify_cmd(ctx: click.Context, only, json_path, html_path, seeds, quiet, lang) -> None:
    """Grade the reference and every mutant with the whole battery; print the kill matrix.

    Each verdict is recorded in the mutants folder's proofs.json (what `kata list` reads to tell a
    ready kata from a draft; commit it with the mutant files).

    Exit status: 0 when the reference passes every check under every seed and every mutant is
    killed by each check it declares; 1 otherwise (a survivor, a missed declared kill, a flaky or
    failing reference, a mutant that cannot be built or graded); 2 for a bad request.
    """
    from checker.cli.common import prepared_lab
    from checker.mutation import MutantFileError
    from checker.mutation.report import render_terminal, write_html, write_json
    from checker.mutation.verify import VerifyProblem, run_verify
    from checker.term import console

    lang = current_lang(lang)
    mutants = _mutants(ctx)
    unknown = [i for i in only if i not in mutants]
    if unknown:
        raise UsageProblem(f"unknown mutant id(s): {', '.join(unknown)} (see `kata mutants list`)")
    for path in (json_path, html_path):
        if path and not Path(path).resolve().parent.is_dir():
            raise UsageProblem(f"{path}: the folder {Path(path).parent} does not exist")
    from checker.checks import REGISTRY

    total = (len(only or mutants) + seeds) * len(REGISTRY)
    lab = prepared_lab("cpu")
    with _Progress(total, quiet) as progress:
        try:
            result = run_verify(
                mutants=list(mutants.values()),  # loaded once, above
                only=only,
                seeds=seeds,
                lab=lab,
                lang=lang,
                on_check=progress.check,
                on_done=progress.done,
            )
        except (VerifyProblem, MutantFileError) as exc:
            raise UsageProblem(str(exc)) from None
    render_terminal(result, console())
    _record(ctx, result)
    try:
        if json_path:
            write_json(result, json_path)
            console().print(f"[dim]Stryker report written to {json_path}[/]")
        if html_path:
            write_html(result, html_path)
            console().print(f"[dim]HTML report written to {html_path}[/]")
    except OSError as exc:
        raise UsageProblem(f"cannot write the report ({exc})") from None
    raise SystemExit(result.exit_code)


@mutants_group.command("doc")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the page here (e.g. docs/katas.md) instead of printing it.")
@click.option("--katas-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_KATAS_DIR, else the checkout's katas/.")
@click.pass_context
def doc_cmd(ctx: click.Context, out_path: Path | None, katas_dir: Path | None) -> None:
    """The kata catalogue page (docs/katas.md), generated from the kata and mutant files.

    Drafts are left out. `kata new --check` refreshes docs/katas.md by itself once a kata is ready.
    """
    from checker.authoring import catalogue_markdown
    from checker.catalogue import atomic_write
    from checker.katas import KataFileError
    from checker.mutation import MutantFileError

    try:
        text = catalogue_markdown(katas_dir, ctx.obj.get("mutants_dir"))
    except (KataFileError, MutantFileError) as exc:
        raise UsageProblem(str(exc)) from None
    if out_path is None:
        click.echo(text, nl=False)
        return
    if not out_path.resolve().parent.is_dir():
        raise UsageProblem(f"{out_path}: the folder {out_path.parent} does not exist")
    try:
        atomic_write(out_path, text)
    except OSError as exc:
        raise UsageProblem(f"cannot write {out_path} ({exc.strerror})") from None
    click.echo(f"wrote {out_path}")


def _record(ctx: click.Context, result) -> None:
    """Keep verify's verdicts as proofs (what `kata list` reads to tell drafts), when the reference passes."""
    from checker.catalogue import record_proofs
    from checker.mutation import resolve_dir
    from checker.term import console

    if not result.reference.passed:
        return
    path = record_proofs(resolve_dir(ctx.obj.get("mutants_dir")), result.results, result.reference_source)
    if path is not None:
        console().print(f"[dim]proofs recorded in {path}[/]")


@mutants_group.command("generate")
@click.option(
    "--function",
    "functions",
    multiple=True,
    metavar="NAME",
    help="Mutate only this protocol function (repeatable; default: all but seed_everything's callers).",
)
@click.option(
    "--operator", "operators", multiple=True, metavar="NAME", help="Use only this operator (repeatable)."
)
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Grade at most this many generated mutants."
)
@click.option("--dry-run", is_flag=True, help="List the generated mutants without grading them.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the generated mutants and their verdicts as a Stryker report.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.option("--no-cache", is_flag=True,
              help="Grade every mutant again (verdicts are cached per mutated source and checker version).")
@click.pass_context
def generate_cmd(ctx: click.Context, functions, operators, limit, dry_run, json_path, quiet, no_cache) -> None:
    """Apply every operator at every sensible place of the reference and list the survivors.

    A survivor is a change no check notices: a gap in the battery, or a change that makes no
    difference (an equivalent mutant). Equivalents are recognised from the code (two statements that
    share nothing, a CUDA-only line) and by behaviour (every check measured exactly the reference's
    figures, e.g. an argument removed whose default gives the same); only the rest are listed as gaps.
    Verdicts are cached per (mutated source, checker version) in $KATA_CACHE_DIR (else ~/.cache/kata),
    so a re-run grades only what changed. Exit status: 0 when no gap is left, 1 otherwise.
    """
    from checker.mutation.generate import GenerateProblem, generate_mutants, render_generated, run_generated
    from checker.term import console

    try:
        generated = generate_mutants(functions=functions or None, operators=operators or None)
    except GenerateProblem as exc:
        raise UsageProblem(str(exc)) from None
    if limit:
        generated = generated[:limit]
    out = console()
    if dry_run:
        for g in generated:
            out.print(f"{g.mutant.id}  [dim]{g.summary}[/]")
        out.print(f"[dim]{len(generated)} generated mutants[/]")
        return
    from checker.checks import REGISTRY
    from checker.cli.common import prepared_lab
    from checker.mutation.generate import VerdictCache

    cache = None if no_cache else VerdictCache()
    todo = [g for g in generated if cache is None or cache.get(g.source) is None]
    lab = prepared_lab("cpu") if todo or cache is None or cache.get(_reference()) is None else None
    with _Progress((len(todo) + 2) * len(REGISTRY), quiet, count=len(todo) + 2) as progress:
        result, behaviour, hits = run_generated(
            generated, lab=lab, on_check=progress.check, on_done=progress.done, cache=cache
        )
    code = render_generated(result, generated, out, behaviour, hits)
    if json_path:
        from checker.mutation.report import write_json

        write_json(result, json_path)
    raise SystemExit(code)
