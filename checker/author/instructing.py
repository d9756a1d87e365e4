"""What the instructor's commands do and print, apart from click: `kata grade` (a class folder into a
gradebook, its summary and what changed since the last grading) and `kata new` (the scaffold of a
mutant and its kata, and `--check`: what a draft still lacks).

checker/cli/instructor.py holds the commands; each reads its arguments and calls one function here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from checker.author.authoring import AuthoringError, scaffold, write
from checker.author.quotes import FlagParser, false_quotes
from checker.base.errors import UsageProblem
from checker.base.i18n import Message
from checker.base.term import console
from checker.catalogue.katas import KATAS_DIR_ENV, KataFileError, load_katas, resolve_katas_dir
from checker.catalogue.mutants import (
    ENV_DIR,
    MutantError,
    MutantFileError,
    apply,
    load_mutants,
    reference_source,
    resolve_dir,
)
from checker.catalogue.proofs import draft_reasons, load_proofs, record_proofs, symptom_problems
from checker.checks import REGISTRY, ordered_ids
from checker.engine.checking import hold_other_track, with_track_probe
from checker.engine.grading import Report
from checker.engine.request import CheckRequest
from checker.gradebook.book import (
    Course,
    CourseFileError,
    SecretFileError,
    file_hashes,
    follows_other_track,
    grade_folder,
    kept_secret,
    load_course,
    submission_name,
    summarize,
    write_gradebook,
)
from checker.gradebook.classbook import (
    ClassOptions,
    base_source,
    call_roll,
    check_out,
    extras,
    kept_reports,
    open_class,
)
from checker.mutation.verify import run_verify
from checker.setting.course import refuse_package_write
from checker.setting.lab import prepared_lab
from checker.setting.tracks import TrackError, all_tracks, get_track, track_named

# ---------------------------------------------------------------------------------------------
# kata grade
# ---------------------------------------------------------------------------------------------

GRADED = Message(
    en="Graded {total} submission(s) in {seconds:.0f} s: {passed} pass every check, {failed} fail some "
       "check, {ungradable} cannot be graded.",
    es="Evaluadas {total} entrega(s) en {seconds:.0f} s: {passed} pasan todas las comprobaciones, {failed} "
       "fallan alguna, {ungradable} no se pueden evaluar.",
)
WRITTEN = Message(en="Wrote {csv}, {json}, the class page {page} and a feedback file per submission in {feedback}",
                  es="Escritos {csv}, {json}, la página de la clase {page} y un archivo de comentarios por entrega "
                     "en {feedback}")
SIMILAR = Message(
    en="{n} pair(s) of submissions are identical or near-identical ({identical} identical): listed in {page} and "
       "similar.csv for you to look at (no grade changed)",
    es="{n} pareja(s) de entregas son idénticas o casi idénticas ({identical} idénticas): listadas en {page} y "
       "similar.csv para que las mires (ninguna nota cambió)")
MOST_FAILED = Message(en="Checks failed most", es="Comprobaciones más falladas")
CANNOT = Message(en="Cannot be graded", es="No se pueden evaluar")
NONE_FAILED = Message(en="No check failed on any graded submission.",
                      es="Ninguna comprobación falló en las entregas evaluadas.")
PROGRESS = Message(en="grading", es="evaluando")
CHANGED = Message(en="Since the previous grading: {n} submission(s) changed (details in {path})",
                  es="Desde la evaluación anterior: {n} entrega(s) cambiaron (detalles en {path})")
UNCHANGED = Message(en="Since the previous grading: nothing changed.",
                    es="Desde la evaluación anterior: nada cambió.")
FILES = Message(en="Files since the previous grading: {changed} changed, {unchanged} unchanged, {new} new.",
                es="Archivos desde la evaluación anterior: {changed} cambiados, {unchanged} sin cambios, {new} "
                   "nuevos.")
SECRET_MADE = Message(
    en="Made a grading secret and kept it in {path} (readable by you only): grading again into {out} repeats "
       "every unchanged file's grade. Keep it from the students.",
    es="Creado un secreto de evaluación, guardado en {path} (solo tú puedes leerlo): evaluar de nuevo en {out} "
       "repite la nota de cada archivo sin cambios. Que no lo vean los estudiantes.",
)


def check_ids(only: tuple[str, ...], track=None) -> list[str]:
    """The checks --only names (all of the track's when none), in the battery's order; exit 2 for an unknown id."""

    try:
        return ordered_ids(list(only) or None, device="cpu", track=track)
    except KeyError as exc:
        raise UsageProblem(f"unknown check id(s): {exc.args[0]}") from None


BLIND_SPOT = Message(
    en="warning: the course's checks cannot catch mutant {mid} ({title}): it is killed only by {checks}, which the "
       "course does not count, so a file with that bug can score full marks",
    es="aviso: las comprobaciones del curso no pueden detectar el mutante {mid} ({title}): solo lo mata {checks}, "
       "que el curso no cuenta, así que un archivo con ese fallo puede sacar la nota máxima",
)


def blind_spots(counted, track, lang: str) -> list[str]:
    """A warning for each known mutant of ``track`` that none of the ``counted`` checks kills (the checks that killed
    it when verify ran, as its proof keeps them; without them, its declared killers less those its proof says
    missed it): a file with that bug would score full marks."""
    counted = set(counted)
    try:
        mutants = load_mutants(track.mutants_dir)
    except MutantFileError:
        return []
    proofs = load_proofs(track.mutants_dir)
    out = []
    for mid, mutant in sorted(mutants.items()):
        proof = proofs.get(mid)
        if proof is not None and proof.killers is not None and proof.status in ("Killed", "Timeout"):
            killers = list(proof.killers)  # what verify saw kill it, counted or declared
        else:
            killers = [c for c in mutant.killed_by if proof is None or c not in proof.missing]
        if killers and not counted & set(killers):
            out.append(BLIND_SPOT.render(lang, mid=mid, title=mutant.title, checks=", ".join(killers)))
    return out


def grade_class(directory: Path, out_dir: Path, *, course_path: Path | None, workers: int, timeout: float | None,
                only: tuple[str, ...], force: bool, lang: str, track: str | None = None,
                secret: bytes | None = None, options: ClassOptions | None = None) -> None:
    """`kata grade`: every submission in ``directory`` graded against ``track`` (default: moons) into the
    gradebook in ``out_dir``, a summary printed; any bad argument is a UsageProblem (exit 2). ``options``: the
    roster, the deadline, the base of the similarity, and --update (keep OUT's other rows).

    ``secret``: the grading secret (--secret, $KATA_SECRET); without one, the one kept in ``out_dir``
    (``gradebook.SECRET_FILE``, made on the first grading), so a regrade into the same folder repeats."""
    options = options or ClassOptions()
    chosen = track_named(track)
    # the class's shared request: every submission is checked alike (one child per file, --workers at once)
    request = CheckRequest(track=chosen.id, lang=lang, only=only, timeout=timeout, secret=secret, workers=workers,
                           split=1)
    found = open_class(directory, out_dir, lang)
    previous = check_out(out_dir, force, options, lang)
    course = _class_course(course_path, only, chosen, lang)
    base = base_source(options.base, chosen, lang)
    paths = [f.path for f in found if f.problem is None]
    names = {str(f.path): f.name for f in found}
    request, made = _with_secret(request, out_dir)
    hashes = file_hashes(paths, directory, (out_dir,))
    sources = submission_sources(found, directory, out_dir)
    started = time.monotonic()
    # graded on the assignment's track whatever the weights count: data.lesson's shapes say which track the file
    # follows, and a file of another track is held for review, said first
    probe_ids, probed = with_track_probe(course.check_ids, chosen)
    reports = _grade_found(found, paths, names, prepared_lab("cpu", chosen), request, probe_ids, directory, out_dir,
                           lang)
    notes = {}
    for report in reports:
        notes[report.file] = follows_other_track(report, chosen, lang)
        hold_other_track(report, notes[report.file], probed)
    kept = kept_reports(previous, found, names, hashes) if options.update else []
    roll = call_roll(options.roster, [f.name for f in found] + [names[r.file] for r in kept], names, lang)
    reports = sorted([*reports, *kept], key=lambda r: submission_name(r, names)) + roll.missing
    try:
        written = write_gradebook(reports, course, out_dir, lang=lang, hashes=hashes, names=names, sources=sources,
                                  track=chosen, roots=(directory,),
                                  extras=extras(reports, course, names, options, roll,
                                                {f.name: f.path for f in found if f.problem is None}, base, lang))
    except OSError as exc:
        raise UsageProblem(f"cannot write the gradebook in {out_dir} ({exc.strerror or exc})") from None
    _print_graded(reports, written, notes, lang, time.monotonic() - started, out_dir, names, made)


def _class_course(course_path: Path | None, only: tuple[str, ...], chosen, lang: str) -> Course:
    """The checks that count and their points: the course file's, else one each (--only's, else every check)."""
    if course_path is not None and only:
        raise UsageProblem("--course and --only both choose the checks: list them in the course file's [points]")
    if course_path is None:
        return Course.equal(check_ids(only, chosen))
    try:
        course = load_course(course_path, list(REGISTRY), track=chosen)
    except CourseFileError as exc:
        raise UsageProblem(str(exc)) from None
    for line in blind_spots(course.check_ids, chosen, lang):
        console(stderr=True).print(line, style="yellow", markup=False, highlight=False)
    return course


def _with_secret(request: CheckRequest, out_dir: Path) -> tuple[CheckRequest, bool]:
    """OUT made, and the request with the grading secret: the one given, else the one kept in OUT (made now?)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageProblem(f"-o {out_dir}: cannot create the folder ({exc.strerror})") from None
    if request.secret is not None:
        return request, False
    try:
        secret, made = kept_secret(out_dir)
    except SecretFileError as exc:
        raise UsageProblem(str(exc)) from None
    return replace(request, secret=secret), made


def _grade_found(found, paths, names, lab, request: CheckRequest, ids: list[str], directory: Path, out_dir: Path,
                 lang: str) -> list[Report]:
    """Every submission found graded (a subfolder that cannot be, as its row), with a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console(stderr=True)) as bar:
        task = bar.add_task(PROGRESS.render(lang), total=len(found), last="")
        folders = [Report(file=str(f.path), error_kind="submission_folder", error=f.problem) for f in found
                   if f.problem is not None]
        for report in folders:
            bar.update(task, advance=1, last=names[report.file])
        graded = grade_folder(
            paths, lab, request, check_ids=ids, hide=(directory, out_dir), root=directory,
            on_report=lambda r: bar.update(task, advance=1, last=submission_name(r, names)),
        ) if paths else []
    by_file = {r.file: r for r in [*graded, *folders]}
    return [by_file[str(f.path)] for f in found]


NOT_WRITTEN = Message(en="could not write {what}: the class's grades.csv and results.json are written",
                      es="no se pudo escribir {what}: grades.csv y results.json de la clase están escritos")


def _print_graded(reports, written, notes, lang: str, seconds: float, out_dir: Path, names, made: bool) -> None:
    """The notes on files that follow another track (first), the summary, what changed, the files not written."""
    err = console(stderr=True)
    for report in reports:
        note = notes.get(report.file)
        if note:
            err.print(f"{submission_name(report, names)}: {note}", style="yellow", markup=False, highlight=False)
    print_summary(reports, lang, seconds, out_dir, names, written.similar)
    for line in written.failed:
        err.print(NOT_WRITTEN.render(lang, what=line), style="yellow", markup=False, highlight=False)
    if written.changes is not None:
        print_changes(written.changes, lang, out_dir, written.file_states)
    if made:
        from checker.gradebook.book import SECRET_FILE

        text = SECRET_MADE.render(lang, path=out_dir / SECRET_FILE, out=out_dir)
        console().print(text, markup=False, highlight=False)


def submission_sources(found, root: Path | None = None, out_dir: Path | None = None) -> dict[str, str]:
    """Submission name -> its code (a notebook's cells joined), for every file inside ``root`` that can be read."""
    from checker.base.errors import LoopFileError
    from checker.loopfile.loading import read_source

    sources = {}
    for f in found:
        if f.problem is None:
            try:
                sources[f.name] = read_source(f.path, root, (out_dir,) if out_dir is not None else ())[0]
            except LoopFileError:
                continue
    return sources


SUMMARY_COLUMNS = (
    Message(en="check", es="comprobación"), Message(en="not passed", es="sin aprobar"),
    Message(en="fail / error / timeout / skipped", es="falla / error / tiempo agotado / omitida"),
)


def print_summary(reports, lang: str, seconds: float, out_dir: Path, names=None, similar=()) -> None:
    """The class at a glance: how many pass, the checks failed most, what cannot be graded, what was written,
    and how many pairs are alike (listed in the class page)."""
    from rich.markup import escape
    from rich.table import Table

    out = console()
    summary = summarize(reports)
    out.print(GRADED.render(lang, total=summary.total, seconds=seconds, passed=summary.passed,
                            failed=summary.failed, ungradable=summary.ungradable))
    graded = summary.total - summary.ungradable
    if summary.failing_checks:
        table = Table(title=MOST_FAILED.render(lang), title_justify="left", box=None, pad_edge=False)
        for column, justify in zip(SUMMARY_COLUMNS, ("left", "right", "right"), strict=True):
            table.add_column(column.render(lang), justify=justify)
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
            out.print(f"  {escape(submission_name(report, names))}  {kind} {escape(first)}")
    if similar:
        identical = sum(p.identical for p in similar)
        out.print(SIMILAR.render(lang, n=len(similar), identical=identical, page=out_dir / "class.html"),
                  markup=False, highlight=False)
    out.print(WRITTEN.render(lang, csv=out_dir / "grades.csv", json=out_dir / "results.json",
                             feedback=out_dir / "feedback", page=out_dir / "class.html"))


def print_changes(changes, lang: str, out_dir: Path, files=None) -> None:
    """What changed since the previous grading into the same folder (the first 20; all in changes.md), and how
    many files changed."""
    from collections import Counter

    from rich.markup import escape


    out = console()
    if files is not None:
        counts = Counter(str(state) for state in files.values())
        out.print(FILES.render(lang, changed=counts["changed"], unchanged=counts["unchanged"], new=counts["new"]))
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

SLUG_PROMPT = ("Kata slug: a few words naming the symptom the learner sees (the learner's file is named "
               "after it), e.g. schedule-in-a-hurry")


def operator_args(pairs: tuple[str, ...]) -> dict[str, str]:
    """The operator's arguments, from --arg NAME=VALUE pairs; exit 2 for a pair without '='."""
    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--arg {pair!r}: write it as NAME=VALUE, e.g. --arg position=before")
        args[key.strip()] = value
    return args


def scaffold_kata(mutant_id: str, *, slug: str | None, target: str | None, killed_by: tuple[str, ...],
                  operator: str, function: str, call: str | None, occurrence: int | None,
                  op_args: tuple[str, ...], number: int | None, mutants_dir: Path | None,
                  katas_dir: Path | None, track=None, ask: Callable[[str], str | None] | None = None) -> None:
    """`kata new ID`: write the mutant's and the kata's files (asking for the slug when not given) and say
    what to do next. ``mutants_dir`` and ``katas_dir`` are the folders as given (None: the default ones);
    ``ask(question)`` is the command line's prompt (None at the end of input)."""
    from rich.markup import escape


    mdir = resolve_dir(mutants_dir, track)
    kdir = resolve_katas_dir(katas_dir, track)
    refuse_package_write(mdir, "kata new (the mutant)")
    refuse_package_write(kdir, "kata new (the kata)")

    if not target:
        shown = track.reference_path if track is not None else "solutions/loop.py"
        raise UsageProblem(f"--target is required: the code to break, as written in {shown} "
                           "(or give --check to check an existing kata)")
    if not killed_by:
        raise UsageProblem("--killed-by is required: a check that must catch the mutant (see `kata checks`)")
    if slug is None:
        slug = ask(SLUG_PROMPT) if ask is not None else None
        if slug is None:
            raise UsageProblem("the kata needs a slug naming the symptom: give --slug (e.g. --slug "
                               "lr-drops-too-soon)") from None
    if slug == mutant_id:
        raise UsageProblem(f"--slug {slug}: that is the mutant's id, which names the fault; the kata's slug "
                           "names the learner's file, so name the symptom instead (e.g. lr-drops-too-soon)")
    try:
        sc = scaffold(
            mutant_id, mutants_dir=mdir, katas_dir=kdir, target=target, killed_by=killed_by,
            operator=operator, function=function, args=operator_args(op_args), number=number, slug=slug,
            call=call, occurrence=occurrence, track=track,
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
    on_track = f" --track {track.id}" if track is not None else ""
    out.print(f"  {escape(env)}kata new --check {escape(slug)}{escape(on_track)}")


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


def _load_catalogue(mutants_dir: Path, katas_dir: Path, track) -> tuple[dict, list]:
    """The track's mutants and katas (drafts too); a file that cannot be read is a usage problem."""
    try:
        mutants = load_mutants(mutants_dir)
    except MutantFileError as exc:
        raise UsageProblem(f"the mutants cannot be read: {exc}") from None
    try:
        katas = load_katas(katas_dir, drafts=True, track=track.id)
    except KataFileError as exc:
        raise UsageProblem(f"the kata catalogue cannot be read: {exc}") from None
    return mutants, katas


def _prove_mutant(mutant, reference: str, track, mutants_dir: Path, out, say) -> list[str] | None:
    """Run the checks the mutant declares, keep the proof and print the verdict; the mutant's problems, or None
    when the mutant does not apply or the reference fails (the check ends there)."""
    from rich.markup import escape


    try:
        apply(mutant, reference)
    except MutantError as exc:
        out.print(f"[red]✗[/] {escape(str(exc))}")
        return None
    out.print(escape(say("running", mid=mutant.id, checks=", ".join(mutant.killed_by))))
    result = verify_one(mutant, track)
    problems = [p for p in result.problems if p.startswith(mutant.id)]
    if not result.reference.passed:
        out.print("[red]✗[/] " + escape(say("ref_fails", problems="; ".join(result.problems[:3]))))
        return None
    refuse_package_write(mutants_dir, "kata new --check (its proofs.json)")
    if record_proofs(mutants_dir, result.results, reference) is None:
        raise UsageProblem(f"cannot write {mutants_dir / 'proofs.json'}: the proof was not kept (is the folder "
                           f"read-only?)")
    if not problems:
        out.print("[green]✓[/] " + escape(say("killed", mid=mutant.id)))
    for problem in problems:
        out.print(f"[red]✗[/] {escape(problem)}")
    return problems


def _report_kata(kata, mutant, mutants: dict, reference: str, mutants_dir: Path, katas_dir: Path, track,
                 lang: str, out, say, parse_flags: FlagParser) -> int:
    """Print whether the kata is ready (refreshing the catalogue page) or a draft and why; the exit code."""
    from rich.markup import escape


    reasons = draft_reasons(kata, mutants, load_proofs(mutants_dir), reference, lang)
    if mutant is not None and not symptom_problems(kata):  # the claim is complete: are its numbers true?
        reasons += false_quotes(kata, apply(mutant, reference), reference, prepared_lab("cpu", track), lang,
                                parse_flags=parse_flags)
    if not reasons:
        out.print(f"[green]✓ {escape(say('ready', slug=kata.slug))}[/]")
        from checker.author.authoring import refresh_catalogue_doc

        doc = refresh_catalogue_doc(katas_dir, mutants_dir, track)
        if doc is not None:
            out.print(f"[dim]{escape(say('doc', path=doc))}[/]")
        return 0
    out.print(f"[bold]{escape(say('draft', slug=kata.slug, path=kata.path))}[/]")
    for reason in reasons:
        out.print(f"  [red]✗[/] {escape(reason)}")
    return 1


def _kata_called(name: str, katas: list):
    """The kata whose slug is ``name``, else the one whose mutant is ``name``; None if neither."""
    return next((k for k in katas if k.slug == name), None) or next(
        (k for k in katas if getattr(k, "mutant", None) == name), None)


def check_draft(name: str, mutants_dir: Path | None, katas_dir: Path | None, lang: str = "en", track=None, *,
                parse_flags: FlagParser) -> int:
    """`kata new --check NAME`: every missing or failing piece of a kata (or a lone mutant); the exit code.
    None for a folder: the default one. ``parse_flags`` reads a kata's [try] flags as `kata run` does."""
    from rich.markup import escape


    if track is None and katas_dir is None and mutants_dir is None:  # the track whose kata or mutant this is
        track = _track_holding(name)
    track = track or get_track()
    mutants_dir, katas_dir = resolve_dir(mutants_dir, track), resolve_katas_dir(katas_dir, track)
    out = console()

    def say(key: str, **params: object) -> str:
        return CHECK_TEXTS[key].render(lang, **params)

    mutants, katas = _load_catalogue(mutants_dir, katas_dir, track)
    kata = _kata_called(name, katas)
    mutant_id = getattr(kata, "mutant", None) if kata else name
    if kata is None and name not in mutants:
        raise UsageProblem(f"no kata or mutant is called {name!r} (in {katas_dir} and {mutants_dir})")
    mutant = mutants.get(mutant_id) if mutant_id else None
    reference = reference_source(track)
    if mutant is not None:
        problems = _prove_mutant(mutant, reference, track, mutants_dir, out, say)
        if problems is None:
            return 1
    if kata is None:
        out.print(f"[yellow]{escape(say('no_kata', mid=name))}[/]")
        return 0 if mutant is not None and not problems else 1
    return _report_kata(kata, mutant, mutants, reference, mutants_dir, katas_dir, track, lang, out, say,
                        parse_flags)


def _track_holding(name: str):
    """The track with a kata (slug) or a mutant (id) called ``name``, if exactly one has; else None."""
    import os


    if os.environ.get(KATAS_DIR_ENV) or os.environ.get(ENV_DIR):
        return None
    try:
        holders = {k.track for k in load_katas(drafts=True) if k.slug == name}
        tracks = all_tracks()
    except (KataFileError, TrackError):
        return None
    holders |= {t.id for t in tracks.values() if (t.mutants_dir / f"{name}.toml").is_file()}
    return tracks[holders.pop()] if len(holders) == 1 else None


def verify_one(mutant, track=None):
    """The mutant and the reference through the checks the mutant declares (all that a proof needs)."""
    declared = [c for c in mutant.killed_by if c in REGISTRY]
    return run_verify(mutants=[mutant], seeds=1, lab=prepared_lab("cpu", track), check_ids=declared or None)
