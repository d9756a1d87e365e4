"""What `kata mutants ...` does and prints, apart from click: the catalogue as a table or JSON, one
mutant's diff, its loop file exported, verify's and generate's runs with their progress on stderr, the
proofs recorded, and the catalogue page.

checker/cli/mutants.py holds the commands; each reads its arguments and calls one function here. Every
bad request is a UsageProblem (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from checker.author.authoring import catalogue_markdown
from checker.base.errors import UsageProblem
from checker.base.files import atomic_write
from checker.base.i18n import Message
from checker.base.term import console, echo
from checker.catalogue.katas import KataFileError
from checker.catalogue.mutants import MutantError, MutantFileError, apply, load_mutants, reference_source, resolve_dir
from checker.catalogue.proofs import PROOFS_FILE, record_proofs
from checker.checks import REGISTRY, ordered_ids
from checker.mutation.report import render_terminal, write_html, write_json
from checker.mutation.verify import VerifyProblem, run_verify, unified_diff
from checker.setting.course import refuse_package_write
from checker.setting.lab import prepared_lab
from checker.setting.tracks import get_track

BOUNDARY_VERIFY_ONLY = Message(
    en="--boundary takes --seeds, --only, --function, --all-tracks and --track, not --json, --html or --all-checks",
    es="--boundary admite --seeds, --only, --function, --all-tracks y --track, no --json, --html ni --all-checks",
)
BOUNDARY_GENERATE_ONLY = Message(
    en="--boundary takes --function, --dry-run, --all-tracks and --track, not --operator, --limit or --json",
    es="--boundary admite --function, --dry-run, --all-tracks y --track, no --operator, --limit ni --json",
)


def load(mutants_dir: str | None):
    """Every mutant in ``mutants_dir`` (None: $KATA_MUTANTS_DIR, else the shipped ones), by id."""

    try:
        return load_mutants(mutants_dir)
    except MutantFileError as exc:
        raise UsageProblem(str(exc)) from None


def one(mutants_dir: str | None, mutant_id: str):
    """The mutant called ``mutant_id``."""
    mutants = load(mutants_dir)
    if mutant_id not in mutants:
        raise UsageProblem(f"no mutant {mutant_id!r}; `kata mutants list` shows the {len(mutants)} there are")
    return mutants[mutant_id]


def mutated_source(mutant, track=None) -> str:
    """The track's reference (default: moons) with ``mutant`` applied."""

    try:
        return apply(mutant, reference_source(track))
    except MutantError as exc:
        raise UsageProblem(str(exc)) from None


LIST_COLUMNS = (
    Message(en="id", es="id"), Message(en="operator", es="operador"), Message(en="in", es="en"),
    Message(en="killed by", es="lo matan"), Message(en="title", es="título"),
)
"""`kata mutants list`'s columns (a mutant's title and description are the catalogue's own words, in English)."""
EQUIVALENT = Message(en="equivalent", es="equivalente")
MUTANTS_COUNT = Message(en="{n} mutants", es="{n} mutantes")
MUTANT_FACTS = Message(en="killed by: {killers} · documented in: {where}",
                       es="lo matan: {killers} · documentado en: {where}")
DECLARED_EQUIVALENT = Message(en="declared equivalent:", es="declarado equivalente:")


def print_catalogue(mutants, *, as_json: bool, lang: str = "en") -> None:
    """`kata mutants list`: id, operator, where it applies, its killers, its title; or all of it as JSON."""
    if as_json:
        import json

        echo(
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


    table = Table(box=None, pad_edge=False, show_edge=False)
    for i, col in enumerate(LIST_COLUMNS):
        table.add_column(col.render(lang), no_wrap=i != len(LIST_COLUMNS) - 1)
    for m in mutants.values():
        table.add_row(
            escape(m.id),
            m.operator,
            ", ".join(m.functions),
            ", ".join(m.killed_by),
            escape(m.title) + (f" [dim]({EQUIVALENT.render(lang)})[/]" if m.equivalent else ""),
        )
    out = console()
    out.print(table)
    out.print(f"[dim]{MUTANTS_COUNT.render(lang, n=len(mutants))}[/]")


def print_mutant(mutant, track=None, lang: str = "en") -> None:
    """`kata mutants show`: what the mutant is, then its unified diff against the reference."""
    from rich.markup import escape


    out = console()
    out.print(f"[bold]{escape(mutant.id)}[/]: {escape(mutant.title)}")
    out.print(f"[dim]{escape(mutant.description)}[/]")
    facts = MUTANT_FACTS.render(lang, killers=", ".join(mutant.killed_by), where=mutant.documented_in)
    out.print(f"[dim]{escape(facts)}[/]")
    if mutant.equivalent:
        out.print(f"[yellow]{DECLARED_EQUIVALENT.render(lang)}[/] {escape(mutant.equivalent)}")
    styles = {"+": "green", "-": "red", "@": "cyan"}

    path = (track or get_track()).reference_path
    for line in unified_diff(reference_source(track), mutated_source(mutant, track), mutant.id, path):
        style = "bold" if line.startswith(("+++", "---")) else styles.get(line[:1], "")
        out.print(f"[{style}]{escape(line)}[/]" if style else escape(line))


def export(mutant, dest: str, *, force: bool, track=None, as_toml: bool = False) -> None:
    """`kata mutants export`: the mutant's loop file, written to ``dest`` (a file, or a folder for ID.py); with
    ``as_toml``, the mutant's own file (ID.toml), from wherever the catalogue is installed."""
    if as_toml:
        if mutant.path is None:
            raise UsageProblem(f"mutant {mutant.id!r} has no file of its own to export")
        source = mutant.path.read_text(encoding="utf-8")
    else:
        source = mutated_source(mutant, track)
    path = Path(dest)
    if path.is_dir():
        path = path / f"{mutant.id}.{'toml' if as_toml else 'py'}"
    if path.exists() and not force:
        raise UsageProblem(f"{path} already exists; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise UsageProblem(f"{path.parent}: no such folder")
    try:
        path.write_text(source, encoding="utf-8")
    except OSError as exc:
        raise UsageProblem(f"cannot write {path} ({exc.strerror})") from None
    echo(f"wrote {path}")


class StderrProgress:
    """Progress on stderr: a live bar on a terminal, one line per finished loop otherwise."""

    def __init__(self, total: int, quiet: bool, count: int | None = None):
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

    def plan(self, total: int) -> None:
        if self.bar:
            self.bar.update(self.task, total=total)

    def check(self, name: str, cid: str, status: str) -> None:
        if self.bar:
            counter = f"{self.finished}/{self.count} " if self.count else ""
            self.bar.update(self.task, advance=1, description=f"{counter}{name[:28]:<28} {cid}")

    def done(self, name: str, status: str) -> None:
        self.finished += 1
        if not self.live and not self.quiet:
            counter = f"[{self.finished}/{self.count}] " if self.count else ""
            self.out.print(f"{counter}graded {name}", markup=False, highlight=False)


def verify(mutants_dir: str | None, *, only: tuple[str, ...], json_path: str | None, html_path: str | None,
           seeds: int, quiet: bool, lang: str, track=None, all_checks: bool = False) -> int:
    """`kata mutants verify`: the kill matrix printed, the proofs recorded, the reports written; the exit code."""
    mutants = load(mutants_dir)
    unknown = [i for i in only if i not in mutants]
    if unknown:
        raise UsageProblem(f"unknown mutant id(s): {', '.join(unknown)} (see `kata mutants list`)")
    for path in (json_path, html_path):
        if path and not Path(path).resolve().parent.is_dir():
            raise UsageProblem(f"{path}: the folder {Path(path).parent} does not exist")

    refuse_package_write(resolve_dir(mutants_dir, track), "kata mutants verify (its proofs.json)")
    lab = prepared_lab("cpu", track)
    total = (len(only or mutants) + seeds) * len(ordered_ids(None, track=lab.track))
    with StderrProgress(total, quiet) as progress:
        try:
            result = run_verify(
                mutants=list(mutants.values()),  # loaded once, above
                only=only,
                seeds=seeds,
                lab=lab,
                lang=lang,
                reference=reference_source(lab.track),
                on_check=progress.check,
                on_done=progress.done,
                on_plan=progress.plan,
                all_checks=all_checks,
            )
        except (VerifyProblem, MutantFileError) as exc:
            raise UsageProblem(str(exc)) from None
    render_terminal(result, console())
    record(mutants_dir, result, track)
    try:
        if json_path:
            write_json(result, json_path)
            console().print(f"[dim]Stryker report written to {json_path}[/]")
        if html_path:
            write_html(result, html_path)
            console().print(f"[dim]HTML report written to {html_path}[/]")
    except OSError as exc:
        raise UsageProblem(f"cannot write the report ({exc})") from None
    return result.exit_code


def record(mutants_dir: str | None, result, track=None) -> None:
    """Keep verify's verdicts as proofs (what `kata list` reads to tell drafts), when the reference passes; a
    folder that cannot be written is a UsageProblem (exit 2): nothing would have been kept."""
    if not result.reference.passed:
        return
    folder = resolve_dir(mutants_dir, track)
    path = record_proofs(folder, result.results, result.reference_source)
    if path is None:
        raise UsageProblem(f"cannot write {folder / PROOFS_FILE}: the proofs were not kept (is the folder "
                           f"read-only? keep a course's mutants in a course folder you can write to)")
    console().print(f"[dim]proofs recorded in {path}[/]")


def write_doc(katas_dir: Path | None, mutants_dir: str | None, out_path: Path | None, track=None) -> None:
    """`kata mutants doc`: the catalogue page, printed, or written to ``out_path``."""
    try:
        text = catalogue_markdown(katas_dir, mutants_dir, track)
    except (KataFileError, MutantFileError) as exc:
        raise UsageProblem(str(exc)) from None
    if out_path is None:
        echo(text, nl=False)
        return
    if not out_path.resolve().parent.is_dir():
        raise UsageProblem(f"{out_path}: the folder {out_path.parent} does not exist")
    try:
        atomic_write(out_path, text)
    except OSError as exc:
        raise UsageProblem(f"cannot write {out_path} ({exc.strerror})") from None
    echo(f"wrote {out_path}")


def generate(*, functions: tuple[str, ...], operators: tuple[str, ...], limit: int | None, dry_run: bool,
             json_path: str | None, quiet: bool, no_cache: bool, track=None) -> int | None:
    """`kata mutants generate`: the generated mutants graded and the gaps printed, the exit code; or with
    ``dry_run`` only listed (None: nothing was graded)."""
    from checker.mutation.generate import GenerateProblem, generate_mutants, render_generated, run_generated

    try:
        generated = generate_mutants(functions=functions or None, operators=operators or None, track=track)
    except GenerateProblem as exc:
        raise UsageProblem(str(exc)) from None
    if limit:
        generated = generated[:limit]
    out = console()
    if dry_run:
        for g in generated:
            out.print(f"{g.mutant.id}  [dim]{g.summary}[/]")
        out.print(f"[dim]{len(generated)} generated mutants[/]")
        return None
    from checker.mutation.generate import VerdictCache

    cache = None if no_cache else VerdictCache()
    todo = [g for g in generated if cache is None or cache.get(g.source) is None]
    needed = todo or cache is None or cache.get(reference_source(track)) is None
    lab = prepared_lab("cpu", track) if needed else None
    with StderrProgress((len(todo) + 2) * len(REGISTRY), quiet, count=len(todo) + 2) as progress:
        result, behaviour, hits = run_generated(
            generated, lab=lab, on_check=progress.check, on_done=progress.done, cache=cache,
            reference=reference_source(track),
        )
    code = render_generated(result, generated, out, behaviour, hits)
    if json_path:
        from checker.mutation.report import write_json

        write_json(result, json_path)
    return code


def boundary_mutants(track, *, only, functions, all_tracks: bool, seeds: int, quiet: bool, dry_run: bool) -> int | None:
    """The boundary mutants of ``track`` (a Track, or a track's name) or of every track, listed (``dry_run``: None)
    or verified (the exit code)."""
    from checker.mutation.boundary import boundary_of_tracks, list_boundary, run_boundary
    from checker.setting.tracks import all_tracks as every_track
    from checker.setting.tracks import track_named

    if all_tracks:
        tracks = list(every_track().values())
    else:
        tracks = [track_named(track) if isinstance(track, str) else track]
    chosen = boundary_of_tracks(tracks, only=only, functions=functions)
    if dry_run:
        list_boundary(chosen, console())
        return None
    return run_boundary(chosen, seeds=seeds, out=console(), progress=lambda total: StderrProgress(total, quiet))
