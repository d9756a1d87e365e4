"""The instructor's commands: `kata grade` (a class folder into a gradebook) and `kata new` (scaffold a
mutant and its kata)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from checker.cli.common import UsageProblem, current_lang, lang_option, prepared_lab
from checker.i18n import Message

# ---------------------------------------------------------------------------------------------
# kata grade
# ---------------------------------------------------------------------------------------------

GRADED = Message(
    en="Graded {total} submission(s) in {seconds:.0f} s: {passed} pass every check, {failed} fail some "
       "check, {ungradable} cannot be graded.",
    es="Evaluadas {total} entrega(s) en {seconds:.0f} s: {passed} pasan todas las comprobaciones, {failed} "
       "fallan alguna, {ungradable} no se pueden evaluar.",
)
WRITTEN = Message(en="Wrote {csv}, {json} and a feedback file per submission in {feedback}",
                  es="Escritos {csv}, {json} y un archivo de comentarios por entrega en {feedback}")
MOST_FAILED = Message(en="Checks failed most", es="Comprobaciones más falladas")
CANNOT = Message(en="Cannot be graded", es="No se pueden evaluar")
NONE_FAILED = Message(en="No check failed on any graded submission.",
                      es="Ninguna comprobación falló en las entregas evaluadas.")
PROGRESS = Message(en="grading", es="evaluando")


def _check_ids(only: tuple[str, ...]) -> list[str]:
    from checker.checks import ordered_ids

    try:
        return ordered_ids(list(only) or None, device="cpu")
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]}") from None


def _print_summary(reports, lang: str, seconds: float, out_dir: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    from checker.gradebook import summarize
    from checker.term import console

    out = console()
    summary = summarize(reports)
    out.print(GRADED.render(lang, total=summary.total, seconds=seconds, passed=summary.passed,
                            failed=summary.failed, ungradable=summary.ungradable))
    graded = summary.total - summary.ungradable
    if summary.failing_checks:
        table = Table(title=MOST_FAILED.render(lang), title_justify="left", box=None, pad_edge=False)
        table.add_column("check")
        table.add_column("not passed", justify="right")
        table.add_column("fail / error / timeout / skipped", justify="right")
        for cid, n, statuses in summary.failing_checks[:10]:
            table.add_row(cid, f"{n}/{graded}", " / ".join(
                str(statuses[s]) for s in ("fail", "error", "timeout", "skipped")))
        out.print(table)
    elif graded:
        out.print(NONE_FAILED.render(lang))
    bad = [r for r in reports if r.error is not None]
    if bad:
        out.print(f"{CANNOT.render(lang)}:")
        for report in bad:
            first = report.error.strip().splitlines()[0] if report.error.strip() else report.error_kind
            kind = escape(f"[{report.error_kind}]")
            out.print(f"  {escape(Path(report.file).name)}  {kind} {escape(first)}")
    out.print(WRITTEN.render(lang, csv=out_dir / "grades.csv", json=out_dir / "results.json",
                             feedback=out_dir / "feedback"))


@click.command("grade", short_help="Grade a folder of submissions: grades, feedback, changes since last time.")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Folder for grades.csv, results.json and feedback/ (created if missing).")
@click.option("--course", "course_path", type=click.Path(path_type=Path), default=None,
              help="A course file (TOML): the checks that count and their points, what to read.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Submissions graded at the same time (one core each).")
@click.option("--timeout", type=click.FloatRange(min=0.5), default=None,
              help="Seconds one check may run on one submission (default: each check's own limit).")
@click.option("--only", multiple=True, metavar="CHECK_ID", help="Grade only this check (repeatable).")
@click.option("--force", is_flag=True,
              help="Grade again into an OUT that holds grades; the new grades are compared with them.")
@lang_option
def grade_cmd(directory: Path, out_dir: Path, course_path: Path | None, workers: int, timeout: float | None,
              only: tuple[str, ...], force: bool, lang: str | None) -> None:
    """Grade every .py and .ipynb file in DIRECTORY into OUT.

    Each submission runs in its own sandboxed process with a time limit per check; one that
    hangs or crashes is recorded as such and the others are graded as usual. A file that
    cannot be read or compiled is listed as ungradable, with the reason.

    OUT gets grades.csv, results.json and feedback/<submission>.md (what failed, what was
    measured, what to read), all written at the end, each file atomically. With --course, the
    course file's [points] say which checks count and what each is worth. Grading again into
    the same OUT (--force) writes changes.md: what changed since, and why. Exit status 0 once
    the gradebook is written, 2 for a bad argument. A course file (docs/grading.md):

    \b
        title = "Lab 4: the training loop"
        [points]                 # the checks that count, and their points
        "steps.fresh_grads" = 3
        "loss.falls" = 1
        [read]                   # optional: what to read when a check fails
        "steps.fresh_grads" = "Lesson 4, section 4"
    """
    from checker.checks import REGISTRY
    from checker.gradebook import Course, CourseFileError, existing_outputs, find_submissions, grade_folder, load_course
    from checker.gradebook import write_gradebook as write

    lang = current_lang(lang)
    if not directory.exists():
        raise UsageProblem(f"{directory}: no such folder")
    if not directory.is_dir():
        raise UsageProblem(f"{directory} is a file; give the folder that holds the submissions")
    paths = find_submissions(directory)
    if not paths:
        raise UsageProblem(f"{directory} holds no .py or .ipynb file to grade (subfolders are not searched)")
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageProblem(f"-o {out_dir}: that is a file, not a folder")
    clash = existing_outputs(out_dir) if out_dir.is_dir() else []
    if clash and not force:
        raise UsageProblem(f"{', '.join(map(str, clash))} already exist(s); use --force to grade again (the new "
                           "grades are compared with these, in changes.md), or choose another -o folder")
    if course_path is not None and only:
        raise UsageProblem("--course and --only both choose the checks: list them in the course file's [points]")
    if course_path is not None:
        try:
            course = load_course(course_path, list(REGISTRY))
        except CourseFileError as exc:
            raise UsageProblem(str(exc)) from None
    else:
        course = Course.equal(_check_ids(only))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageProblem(f"-o {out_dir}: cannot create the folder ({exc.strerror})") from None
    lab = prepared_lab("cpu")

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from checker.term import console

    started = time.monotonic()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console(stderr=True)) as bar:
        task = bar.add_task(PROGRESS.render(lang), total=len(paths), last="")
        reports = grade_folder(
            paths, lab, check_ids=course.check_ids, workers=workers, timeout=timeout, lang=lang,
            on_report=lambda r: bar.update(task, advance=1, last=Path(r.file).name),
        )
    try:
        written = write(reports, course, out_dir, lang=lang)
    except OSError as exc:
        raise UsageProblem(f"cannot write the gradebook in {out_dir} ({exc.strerror or exc})") from None
    _print_summary(reports, lang, time.monotonic() - started, out_dir)
    if written.changes is not None:
        _print_changes(written.changes, lang, out_dir)


CHANGED = Message(en="Since the previous grading: {n} submission(s) changed (details in {path})",
                  es="Desde la evaluación anterior: {n} entrega(s) cambiaron (detalles en {path})")
UNCHANGED = Message(en="Since the previous grading: nothing changed.",
                    es="Desde la evaluación anterior: nada cambió.")


def _print_changes(changes, lang: str, out_dir: Path) -> None:
    from rich.markup import escape

    from checker.term import console

    out = console()
    if not changes:
        out.print(UNCHANGED.render(lang))
        return
    out.print(CHANGED.render(lang, n=len(changes), path=out_dir / "changes.md"))
    for ch in changes[:20]:
        before = "—" if ch.before is None else f"{ch.before:.2f}"
        after = "—" if ch.after is None else f"{ch.after:.2f}"
        out.print(f"  {escape(ch.submission)}  {before} -> {after}  [dim]{escape(ch.reason(lang))}[/]")


# ---------------------------------------------------------------------------------------------
# kata new
# ---------------------------------------------------------------------------------------------

def _parse_args(pairs: tuple[str, ...]) -> dict[str, str]:
    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--arg {pair!r}: write it as NAME=VALUE, e.g. --arg position=before")
        args[key.strip()] = value
    return args


SLUG_PROMPT = ("Kata slug: a few words naming the symptom the learner sees (the learner's file is named "
               "after it), e.g. schedule-in-a-hurry")


@click.command("new", short_help="Scaffold a new mutant and its kata; --check says what a draft lacks.")
@click.argument("mutant_id", metavar="ID")
@click.option("--check", "check_only", is_flag=True,
              help="Do not scaffold: say what kata (or mutant) ID still lacks before learners see it, "
                   "running its mutant through the checks it declares.")
@click.option("--slug", default=None, metavar="SLUG",
              help="The kata's slug, naming the symptom (asked for when not given).")
@click.option("--target", default=None, metavar="CODE",
              help="The code to break, as written in the reference, e.g. 'optimizer.zero_grad()'.")
@click.option("--killed-by", "killed_by", multiple=True, metavar="CHECK_ID",
              help="A check that must catch the mutant (repeatable), e.g. steps.fresh_grads.")
@click.option("--operator", default="delete_statement", show_default=True,
              help="How to break it (the mutant file lists every operator).")
@click.option("--function", default="train_epoch", show_default=True,
              help="The reference's function that holds the target.")
@click.option("--call", default=None, metavar="CALL",
              help="Only places inside this call, e.g. torch.optim.Adam (an argument target may then be "
                   "just the keyword's name).")
@click.option("--occurrence", type=click.IntRange(1), default=None,
              help="Of several places the target matches, the n-th in file order.")
@click.option("--arg", "op_args", multiple=True, metavar="NAME=VALUE",
              help="An argument of the operator (repeatable), e.g. --arg anchor='optimizer.step()'.")
@click.option("--number", type=click.IntRange(0, 999), default=None,
              help="The kata's number (default: the next multiple of 10).")
@click.option("--mutants-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_MUTANTS_DIR, else the checkout's mutants/.")
@click.option("--katas-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Default: $KATA_KATAS_DIR, else the checkout's katas/.")
@lang_option
def new_cmd(mutant_id: str, check_only: bool, slug: str | None, target: str | None, killed_by: tuple[str, ...],
            operator: str, function: str, call: str | None, occurrence: int | None, op_args: tuple[str, ...],
            number: int | None, mutants_dir: Path | None, katas_dir: Path | None, lang: str | None) -> None:
    """Scaffold a new mutant ID and its kata: mutants/ID.toml and katas/NNN-SLUG.toml.

    The mutant is applied to the reference before anything is written, so the target must be
    real code of FUNCTION. SLUG names the symptom (the learner's file is SLUG.py): it is asked
    for when --slug is not given. Both files explain every field in comments; fill in their TODO
    texts, then run `kata new --check SLUG`: it names every missing or failing piece, proves the
    checks catch the mutant, and exits 0 only once the kata is ready (until then it is a draft,
    hidden from `kata list` and `kata next`). Existing files are never overwritten.
    """
    from checker.katas import resolve_katas_dir
    from checker.mutation import resolve_dir

    mdir, kdir = resolve_dir(mutants_dir), resolve_katas_dir(katas_dir)
    if check_only:
        raise SystemExit(_check_draft(mutant_id, mdir, kdir, current_lang(lang)))
    from rich.markup import escape

    from checker.authoring import AuthoringError, scaffold, write
    from checker.term import console

    if not target:
        raise UsageProblem("--target is required: the code to break, as written in solutions/loop.py "
                           "(or give --check to check an existing kata)")
    if not killed_by:
        raise UsageProblem("--killed-by is required: a check that must catch the mutant (see `kata checks`)")
    if slug is None:
        try:
            slug = click.prompt(SLUG_PROMPT, err=True).strip()
        except click.Abort:
            raise UsageProblem("the kata needs a slug naming the symptom: give --slug (e.g. --slug "
                               "lr-drops-too-soon)") from None
    if slug == mutant_id:
        raise UsageProblem(f"--slug {slug}: that is the mutant's id, which names the fault; the kata's slug "
                           "names the learner's file, so name the symptom instead (e.g. lr-drops-too-soon)")
    try:
        sc = scaffold(
            mutant_id, mutants_dir=mdir, katas_dir=kdir, target=target, killed_by=killed_by,
            operator=operator, function=function, args=_parse_args(op_args), number=number, slug=slug,
            call=call, occurrence=occurrence,
        )
        write(sc)
    except AuthoringError as exc:
        raise UsageProblem(str(exc)) from None
    except OSError as exc:
        raise UsageProblem(f"cannot write the scaffold: {exc}") from None
    out = console()
    out.print(f"Wrote {escape(str(sc.mutant_path))}\n  and {escape(str(sc.kata_path))}")
    out.print("The mutant changes the reference like this:")
    for line in sc.diff.splitlines():
        colour = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
        out.print(f"[{colour}]{escape(line)}[/]")
    for cid in sc.unknown_checks:
        out.print(f"[yellow]note:[/] no check is called {escape(cid)} yet; verify will report it as missing")
    out.print("The kata is a draft until its texts are written and the checks are proven to catch the mutant.")
    out.print("Next: replace the TODO texts in both files, then run")
    env = f"KATA_MUTANTS_DIR={mutants_dir} " if mutants_dir is not None else ""
    env += f"KATA_KATAS_DIR={katas_dir} " if katas_dir is not None else ""
    out.print(f"  {escape(env)}kata new --check {escape(slug)}")


CHECK_TEXTS = {
    "running": Message(en="Running the checks on mutant {mid} (its declared killers: {checks})…",
                       es="Ejecutando las comprobaciones sobre el mutante {mid} (las que deben matarlo: {checks})…"),
    "ref_fails": Message(en="the reference does not pass every check, so nothing can be proven: {problems}",
                         es="la referencia no pasa todas las comprobaciones, así que no se puede probar nada: "
                            "{problems}"),
    "killed": Message(en="the checks it declares kill mutant {mid}",
                      es="las comprobaciones que declara matan al mutante {mid}"),
    "no_kata": Message(en="no kata uses mutant {mid} yet (`kata new` scaffolds one)",
                       es="ninguna kata usa aún el mutante {mid} (`kata new` crea una)"),
    "ready": Message(en="kata {slug} is ready: `kata list` shows it to learners",
                     es="la kata {slug} está lista: `kata list` la muestra a quien aprende"),
    "doc": Message(en="{path} updated: the catalogue now lists it",
                   es="{path} actualizado: el catálogo ya la incluye"),
    "draft": Message(en="kata {slug} is a draft ({path}); hidden from `kata list` and `kata next` until these "
                        "are fixed:",
                     es="la kata {slug} es un borrador ({path}); `kata list` y `kata next` la ocultan hasta que "
                        "se arregle esto:"),
}


def _check_draft(name: str, mutants_dir: Path, katas_dir: Path, lang: str = "en") -> int:
    """`kata new --check NAME`: every missing or failing piece of a kata (or a lone mutant); the exit code."""
    from rich.markup import escape

    from checker.catalogue import draft_reasons, false_quotes, load_proofs, record_proofs, symptom_problems
    from checker.katas import KataFileError, load_katas
    from checker.mutation import MutantError, MutantFileError, apply, load_mutants, reference_source
    from checker.term import console

    out = console()

    def say(key: str, **params: object) -> str:
        return CHECK_TEXTS[key].render(lang, **params)

    try:
        mutants = load_mutants(mutants_dir)
    except MutantFileError as exc:
        raise UsageProblem(f"the mutants cannot be read: {exc}") from None
    try:
        katas = load_katas(katas_dir, drafts=True)
    except KataFileError as exc:
        raise UsageProblem(f"the kata catalogue cannot be read: {exc}") from None
    kata = next((k for k in katas if k.slug == name), None) or next(
        (k for k in katas if getattr(k, "mutant", None) == name), None)
    mutant_id = getattr(kata, "mutant", None) if kata else name
    if kata is None and name not in mutants:
        raise UsageProblem(f"no kata or mutant is called {name!r} (in {katas_dir} and {mutants_dir})")
    mutant = mutants.get(mutant_id) if mutant_id else None
    reference = reference_source()
    if mutant is not None:
        try:
            apply(mutant, reference)
        except MutantError as exc:
            out.print(f"[red]✗[/] {escape(str(exc))}")
            return 1
        out.print(escape(say("running", mid=mutant.id, checks=", ".join(mutant.killed_by))))
        result = _verify_one(mutant)
        problems = [p for p in result.problems if p.startswith(mutant.id)]
        if not result.reference.passed:
            out.print("[red]✗[/] " + escape(say("ref_fails", problems="; ".join(result.problems[:3]))))
            return 1
        record_proofs(mutants_dir, result.results, reference)
        if not problems:
            out.print("[green]✓[/] " + escape(say("killed", mid=mutant.id)))
        for problem in problems:
            out.print(f"[red]✗[/] {escape(problem)}")
    if kata is None:
        out.print(f"[yellow]{escape(say('no_kata', mid=name))}[/]")
        return 0 if mutant is not None and not problems else 1
    reasons = draft_reasons(kata, mutants, load_proofs(mutants_dir), reference, lang)
    if mutant is not None and not symptom_problems(kata):  # the claim is complete: are its numbers true?
        from checker.cli.common import prepared_lab

        reasons += false_quotes(kata, apply(mutant, reference), reference, prepared_lab("cpu"), lang)
    if not reasons:
        out.print(f"[green]✓ {escape(say('ready', slug=kata.slug))}[/]")
        from checker.authoring import refresh_catalogue_doc

        doc = refresh_catalogue_doc(katas_dir, mutants_dir)
        if doc is not None:
            out.print(f"[dim]{escape(say('doc', path=doc))}[/]")
        return 0
    out.print(f"[bold]{escape(say('draft', slug=kata.slug, path=kata.path))}[/]")
    for reason in reasons:
        out.print(f"  [red]✗[/] {escape(reason)}")
    return 1


def _verify_one(mutant):
    """The mutant and the reference through the checks the mutant declares (all that a proof needs)."""
    from checker.checks import REGISTRY
    from checker.cli.common import prepared_lab
    from checker.mutation.verify import run_verify

    declared = [c for c in mutant.killed_by if c in REGISTRY]
    return run_verify(mutants=[mutant], seeds=1, lab=prepared_lab("cpu"), check_ids=declared or None)
