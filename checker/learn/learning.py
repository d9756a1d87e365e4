"""What the learner commands print and do, apart from click: stories, checks of the current kata,
practice answers, the reference's fix, the guide.

checker/cli/learner.py holds the commands; each reads its arguments and calls one function here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from rich.markup import escape

from checker.base.errors import Failure, UsageProblem
from checker.base.term import console, echo
from checker.catalogue.katas import Kata, reference_source
from checker.engine.request import CheckRequest
from checker.learn import messages as M
from checker.learn.progress import sha256
from checker.learn.session import Session, mutant_of, open_session, place_data, shown_path, starter_text


def out():
    from checker.base.term import console

    return console()


def print_texts(con, title: str, texts: Iterable[str], style: str = "") -> None:
    con.print(f"[bold]{escape(title)}[/]" if title else "")
    for text in texts:
        for para in text.split("\n"):
            con.print(f"  [{style}]{escape(para)}[/]" if style else f"  {escape(para)}")


def present(session: Session, kata: Kata, con) -> None:
    """The kata's header and story."""
    con.print(f"[bold magenta]{escape(session.header(kata))}[/]  [dim]({escape(kata.slug)})[/]")
    for para in kata.story.render(session.lang).split("\n"):
        con.print(escape(para))
    con.print("")


def what_next(session: Session, kata: Kata, con) -> None:
    path = shown_path(session.file_of(kata))
    if kata.practice is not None:
        session.tell(con, M.WHAT_NEXT_PRACTICE, file=path, check=session.check_command(),
                     run=session.run_command(kata))
    else:
        session.tell(con, M.WHAT_NEXT, run=session.run_command(kata), file=path, check=session.check_command())


def loss_curve(report, lang: str, track=None) -> str | None:
    """A one-line chart of the epoch losses of loss.falls's run (the track's SGD run), if any: the train losses
    the file's fit reported, else (where it reported none as plain numbers) the spy loss's epoch means."""
    import math

    from checker.base.term import sparkline
    from checker.setting.tracks import get_track

    res = next((c for c in report.checks if c.id == "loss.falls"), None)
    measured = (getattr(res, "measured", None) or {}) if res else {}
    losses = measured.get("losses")
    if not losses or not all(isinstance(x, int | float) for x in losses):
        return None
    # the file's own figures (what its fit reported, as `kata run` shows them) where it reported plain numbers
    reported = measured.get("reported")
    if isinstance(reported, list) and len(reported) == len(losses) and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in reported):
        losses = reported

    def shown(x: float) -> str:
        return f"{x:.3f}" if math.isfinite(x) else str(x)

    return M.CURVE.render(lang, epochs=len(losses), lr=(track or get_track()).thresholds.falls_lr,
                          line=sparkline(losses),
                          first=shown(losses[0]), last=shown(losses[-1]))


def story_curve(session: Session, kata: Kata, path: Path, settings_of) -> str | None:
    """The loss curve of the learner's file run with the kata's own `kata run` flags (its [try] args: the setting
    its story is about, e.g. lr 1.0 for 30 epochs with StepLR); None without such flags or when the run fails.
    ``settings_of``: the command line's reading of those flags (RunSettings), passed down."""
    import math

    from checker.base.term import sparkline
    from checker.runs.training import RunFailed, measure
    from checker.setting.lab import prepared_lab

    if settings_of is None or not kata.try_args or kata.practice is not None:
        return None
    try:
        settings = settings_of(list(kata.try_args))
        run = measure([(path.read_text(encoding="utf-8"), str(path))], [settings],
                      prepared_lab("cpu", kata.setting))[0]
    except (RunFailed, UsageProblem, OSError, UnicodeDecodeError):
        return None
    losses = [row.get("train_loss") for row in run.get("history") or [] if isinstance(row, dict)]
    if not losses or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in losses):
        return None

    def shown(x: float) -> str:
        return f"{x:.3f}" if math.isfinite(x) else str(x)

    return session.say(M.CURVE_STORY, flags=" ".join(kata.try_args), line=sparkline(losses), first=shown(losses[0]),
                       last=shown(losses[-1]))


# ---------------------------------------------------------------------------------------------
# kata check without PATH

def check_current(request: CheckRequest, workdir: str | None, settings_of=None) -> int:
    """`kata check` without PATH: grade the current kata's file against its track, record a pass; the exit code.
    ``settings_of``: reads a kata's `kata run` flags (its loss curve is then its story's run: ``story_curve``)."""
    from checker.engine.checking import emit_report
    from checker.learn.check import check, current_kata

    session = open_session(workdir, request.lang)
    kata, path = current_kata(request, session)
    if kata.practice is not None:
        return check_practice(session, kata, request.format)
    con = out() if request.format == "text" else None
    if con is not None:
        con.print(f"[bold magenta]{escape(session.header(kata))}[/]  [dim]{escape(shown_path(path))}[/]")
    outcome = check(request, session=session)
    report = outcome.report
    _say_note(outcome.note, con)
    emit_report(report, request.format, session.lang, request.verbose, weights=outcome.weights)
    if not outcome.gradable:  # the file could not be graded
        return report.exit_code
    newly = outcome.record(session)
    if con is None:
        return report.exit_code
    curve = story_curve(session, kata, path, settings_of) or loss_curve(report, session.lang, kata.setting)
    if curve:
        con.print(f"[dim]{escape(curve)}[/]")
    con.print("")
    if report.passed and outcome.only:
        session.tell(con, M.PARTIAL, "yellow")
    elif report.passed:
        after_pass(session, kata, con, newly)
    else:
        not_yet(session, kata, con)
    return report.exit_code


def _say_note(note: str | None, con) -> None:
    """Said before the report: what the file was graded against (a students' copy: which checks run elsewhere), on
    the console, or on stderr where the report is for a program."""
    if note and con is not None:
        con.print(f"[yellow]{escape(note)}[/]")
    elif note:
        echo(note, err=True)


def after_pass(session: Session, kata: Kata, con, newly: bool) -> None:
    """Solved: say so, show what the learner changed, say what comes next."""
    from checker.learn.diffs import print_diff, unified

    if newly:
        session.tell(con, M.SOLVED_NOW, "bold green", path=shown_path(session.progress.path))
    else:
        session.tell(con, M.SOLVED_BEFORE, "green", when=session.progress.record(kata.slug).solved)
    path = session.file_of(kata)
    rec = session.progress.record(kata.slug)
    if kata.practice is None and path.exists():
        text = path.read_text(encoding="utf-8", errors="replace")
        diff = unified(starter_text(session, kata, rec.file), text, f"starter/{path.name}", shown_path(path))
        if diff:
            session.tell(con, M.YOUR_CHANGE)
            print_diff(diff, con, lang=session.lang)
    message, params = session.after_pass(kata)
    session.tell(con, message, **params)


def not_yet(session: Session, kata: Kata, con) -> None:
    rec = session.progress.record(kata.slug)
    session.tell(con, M.NOT_YET, "yellow", shown=rec.hints, total=len(kata.hints), run=session.run_command(kata))
    path = session.file_of(kata)
    if path.exists() and sha256(path.read_text(encoding="utf-8", errors="replace")) == rec.starter_sha256:
        session.tell(con, M.UNCHANGED, "dim")


# ---------------------------------------------------------------------------------------------
# practice katas

def practice_verdicts(session: Session, kata: Kata, con=None):
    """Read the answers, measure, compare: (verdicts, exercise). Bad answers files exit 2."""
    from checker.learn.practice import EXERCISES, AnswersError, compare, read_answers
    from checker.runs.training import RunFailed
    from checker.setting.lab import prepared_lab

    exercise = EXERCISES[kata.practice.exercise]
    try:
        answers = read_answers(session.file_of(kata), exercise)
    except AnswersError as exc:
        raise UsageProblem(exc.render(session.lang)) from None
    if con is not None:
        session.tell(con, M.PRACTICE_MEASURING, "dim")
    lab = prepared_lab("cpu")
    try:
        measured = exercise.measure(lab)
    except RunFailed as exc:
        raise Failure(exc.message) from None
    return compare(exercise, answers, measured), exercise


def check_practice(session: Session, kata: Kata, fmt: str) -> int:
    """`kata check` on a practice kata: every prediction against a run; 0 all match, 1 otherwise."""
    if fmt not in ("text", "json"):
        raise UsageProblem(session.say(M.PRACTICE_FORMAT, fmt=fmt))
    con = out() if fmt == "text" else None
    path = session.file_of(kata)
    if con is not None:
        con.print(f"[bold magenta]{escape(session.header(kata))}[/]  [dim]{escape(shown_path(path))}[/]")
    verdicts, exercise = practice_verdicts(session, kata, con)
    passed = all(v.status == "pass" for v in verdicts)
    newly = session.record_check(kata, passed)
    if con is None:
        from checker.base.term import dumps

        checks = [{"id": v.key, "status": "pass" if v.status == "pass" else "fail",
                   "message": _practice_message(session, kata, v)} for v in verdicts]
        echo(dumps({"file": str(path), "passed": passed, "checks": checks}, indent=2, ensure_ascii=False))
        return 0 if passed else 1
    print_practice(session, kata, verdicts, exercise, con)
    con.print("")
    if passed:
        after_pass(session, kata, con, newly)
    else:
        rec = session.progress.record(kata.slug)
        session.tell(con, M.PRACTICE_NOT_YET, "yellow", run=session.run_command(kata), shown=rec.hints,
                     total=len(kata.hints))
    return 0 if passed else 1


def _practice_message(session: Session, kata: Kata, verdict) -> str:
    if verdict.status == "pass":
        return session.say(M.PRACTICE_RIGHT, seen=verdict.seen.render(session.lang))
    if verdict.status == "unanswered":
        return session.say(M.PRACTICE_OPEN, file=shown_path(session.file_of(kata)))
    import json

    return session.say(M.PRACTICE_WRONG, answer=json.dumps(verdict.answer), run=session.run_command(kata))


def print_practice(session: Session, kata: Kata, verdicts, exercise, con) -> None:
    prompts = {q.key: q.prompt.render(session.lang) for q in exercise.questions}
    marks = {"pass": ("✓", "green"), "fail": ("✗", "red"), "unanswered": ("?", "yellow")}
    for v in verdicts:
        mark, colour = marks[v.status]
        con.print(f"[{colour}]{mark} {escape(v.key)}[/]  {escape(prompts[v.key])}")
        con.print(f"    {escape(_practice_message(session, kata, v))}")
    right = sum(v.status == "pass" for v in verdicts)
    con.print(escape(session.say(M.PRACTICE_SUMMARY, right=right, total=len(verdicts))))


# ---------------------------------------------------------------------------------------------
# kata solution

def show_solution(session: Session, kata: Kata) -> None:
    """The reference's version of the broken part (or, for practice, what the run measured), then reading."""
    import json

    from rich.syntax import Syntax

    from checker.learn.diffs import changed_functions, changed_lines, print_diff, unified

    con = out()
    con.print(f"[bold magenta]{escape(session.header(kata))}[/]")
    if kata.practice is not None:
        from checker.learn.practice import EXERCISES
        from checker.runs.training import RunFailed
        from checker.setting.lab import prepared_lab

        try:
            measured = EXERCISES[kata.practice.exercise].measure(prepared_lab("cpu"))
        except RunFailed as exc:
            raise Failure(exc.message) from None
        print_texts(con, session.say(M.PRACTICE_SOLUTION),
                    [f"{key}: {json.dumps(value)} — {seen.render(session.lang)}"
                     for key, (value, seen) in measured.items()])
    else:
        from checker.catalogue.katas import learner_copy, starter_header

        track = kata.setting
        mutant = mutant_of(session, kata)  # the commented mutant (a students' copy has none: exit 2, said why)
        reference = reference_source(track)
        # the starter as the learner got it, against the reference laid out the same way (no comments, the
        # starter's header): the diff is the fix alone, at the starter's line numbers
        starter = starter_text(session, kata, f"{kata.slug}.py")
        fixed = learner_copy(reference, starter_header(kata))
        session.tell(con, M.SOLUTION_DIFF)
        print_diff(unified(starter, fixed, f"starter/{kata.slug}.py", f"fixed/{kata.slug}.py"), con, limit=200,
                   lang=session.lang)
        con.print("")
        lines = reference.splitlines()
        # the commented mutant (above): where the fix sits in the commented reference
        funcs = changed_functions(mutant, reference)
        if funcs:
            session.tell(con, M.SOLUTION_FUNCS, path=shown_path(track.reference))
            marked = changed_lines(mutant, reference)
            for _, first, last in funcs:
                code = "\n".join(lines[first - 1:last])
                con.print(Syntax(code, "python", line_numbers=True, start_line=first, highlight_lines=marked,
                                 theme="ansi_dark", word_wrap=False))
                con.print("")
    print_reading(session, kata, con)


def print_reading(session: Session, kata: Kata, con) -> None:
    """'Read more': the kata's guide sections, then its other reading."""
    from checker.learn import guide

    texts = []
    for ref in kata.guide:
        section = guide.find(ref, session.lang)
        texts.append(session.say(M.GUIDE_SEE, id=ref, title=section.title if section else ref))
    texts.append(kata.read.render(session.lang))
    print_texts(con, session.say(M.READ_MORE), texts)


# ---------------------------------------------------------------------------------------------
# kata read

def read_guide(name: str | None, lang: str) -> None:
    """List the guide's sections, or render one (rich Markdown) followed by the next one's name."""
    import difflib

    from rich.markdown import Markdown

    from checker.learn import guide

    found = guide.sections(lang)
    if not found:
        raise UsageProblem(M.GUIDE_MISSING.render(lang, dir=guide.guide_dir()))
    con = out()
    if name is None:
        con.print(f"[bold]{escape(M.GUIDE_TITLE.render(lang))}[/]")
        for s in found:
            con.print(f"  {s.number:>2}  [cyan]{escape(s.id):<12}[/] {escape(s.title)}")
        return
    section = guide.find(name, lang)
    if section is None:
        close = difflib.get_close_matches(name, [s.id for s in found], n=3)
        hint = M.DID_YOU_MEAN.render(lang, names=", ".join(close)) if close else ""
        raise UsageProblem(M.GUIDE_UNKNOWN.render(lang, name=name, close=hint))
    # each section ends by naming the next one (`kata read ID`), so the guide reads in order
    con.print(Markdown(section.text(), code_theme="ansi_dark"), width=min(con.width, 100), soft_wrap=False)


def file_is_kata(session: Session, path: Path) -> Kata | None:
    """The current kata when ``path`` is its file, else None."""
    import os

    from checker.catalogue.katas import UnknownKata, find_kata

    slug = session.progress.current
    if not slug or session.progress.record(slug) is None:
        return None
    try:
        kata = find_kata(session.katas, slug)
    except UnknownKata:
        return None
    mine = session.file_of(kata)
    try:
        return kata if mine.exists() and path.exists() and os.path.samefile(mine, path) else None
    except OSError:
        return None


def kata_folder_of(path: str, workdir: str | None, lang: str) -> str | None:
    """The working folder in which ``path`` is the current kata's file (``workdir``, else the file's own folder
    when no working folder was chosen), else None: checking that file by its path records it as `kata check`
    without a path does. A folder without progress, or whose progress cannot be read, is none."""
    import os

    from checker.learn.progress import PROGRESS_FILE, STATE_DIR, WORKDIR_ENV

    folders = [workdir or os.environ.get(WORKDIR_ENV) or os.getcwd()]
    if workdir is None and not os.environ.get(WORKDIR_ENV):
        folders.append(str(Path(path).expanduser().resolve().parent))
    for folder in folders:
        try:
            if not (Path(folder).expanduser() / STATE_DIR / PROGRESS_FILE).is_file():
                continue
            session = open_session(folder, lang, need_katas=False)
        except (UsageProblem, OSError):
            continue
        if file_is_kata(session, Path(path).expanduser()) is not None:
            return str(session.workdir)
    return None


# ---------------------------------------------------------------------------------------------
# kata next / hint / show / list / reset

def open_next(session: Session, name: str | None, *, skip: bool, notebook: bool, as_json: bool) -> None:
    import json

    from checker.learn.session import choose_next, open_kata

    if name is not None:
        chosen, staying = session.kata(name), False
    else:
        chosen, staying = choose_next(session, skip)
    if chosen is None:
        if as_json:
            echo(json.dumps({"kata": None, "path": None, "title": None}))
        else:
            out().print(f"[bold green]{escape(session.say(M.ALL_SOLVED, total=len(session.katas)))}[/]")
        return
    if notebook and chosen.practice is not None:
        raise UsageProblem(session.say(M.PRACTICE_NO_NOTEBOOK, kata=chosen.slug))
    path, state = open_kata(session, chosen, filename=f"{chosen.slug}.ipynb" if notebook else None)
    placed = place_data(session, chosen)
    if as_json:
        data = {"kata": chosen.slug, "path": str(path.resolve()), "title": session.title(chosen)}
        echo(json.dumps(data, ensure_ascii=False))
        if placed is not None and placed[1] == "kept":  # stdout is the JSON: the note goes to stderr
            tell_data(session, placed, console(stderr=True))
        return
    con = out()
    present(session, chosen, con)
    message = {"written": M.FILE_WRITTEN, "same": M.FILE_SAME, "kept": M.FILE_KEPT}[state]
    session.tell(con, message, "cyan", path=shown_path(path))
    tell_data(session, placed, con)
    if staying:
        session.tell(con, M.STILL_ON, "yellow")
    what_next(session, chosen, con)


def tell_data(session: Session, placed: tuple[Path, str] | None, con) -> None:
    """Say where the track's data file was put (``session.place_data``), or that the learner's own was kept; an
    identical one already there needs no word."""
    if placed is None or placed[1] == "same":
        return
    path, state = placed
    message = M.DATA_WRITTEN if state == "written" else M.DATA_KEPT
    session.tell(con, message, "cyan" if state == "written" else "yellow", path=shown_path(path), name=path.name)


def reveal_hint(session: Session) -> None:
    kata = session.current()
    rec = session.progress.record(kata.slug)
    total = len(kata.hints)
    con = out()
    if rec.hints >= total:
        print_texts(con, session.say(M.HINTS_SO_FAR), [h.render(session.lang) for h in kata.hints])
        if kata.practice is not None:
            session.tell(con, M.PRACTICE_NO_MORE_HINTS, "yellow", total=total, run=session.run_command(kata))
        else:
            session.tell(con, M.NO_MORE_HINTS, "yellow", total=total, file=shown_path(session.file_of(kata)),
                         run=session.run_command(kata))
        return
    n = session.progress.reveal_hint(kata.slug, total)
    session.save()
    con.print(f"[bold magenta]{escape(session.header(kata))}[/]")
    print_texts(con, session.say(M.HINT, n=n, total=total), [kata.hints[n - 1].render(session.lang)], "yellow")
    session.tell(con, M.LAST_HINT if n == total else M.MORE_HINTS)


def show(session: Session, kata: Kata) -> None:
    con = out()
    present(session, kata, con)
    rec = session.progress.record(kata.slug)
    path = session.file_of(kata)
    shown = rec.hints if rec else 0
    if shown:
        print_texts(con, session.say(M.HINTS_SO_FAR),
                    [f"{i}. {h.render(session.lang)}" for i, h in enumerate(kata.hints[:shown], start=1)], "yellow")
    else:
        session.tell(con, M.NO_HINTS_YET, "dim")
    con.print("")
    if rec and rec.solved:
        session.tell(con, M.SOLVED_ON, "green", when=rec.solved)
    elif rec is None:
        session.tell(con, M.NOT_OPENED, "yellow", kata=kata.slug)
        return
    elif not path.exists():
        session.tell(con, M.FILE_MISSING, "yellow", path=shown_path(path))
    if kata.practice is not None:
        session.tell(con, M.SHOW_PRACTICE, file=shown_path(path))
    what_next(session, kata, con)


def list_katas(session: Session, *, as_json: bool) -> None:
    rows = [{"kata": k.slug, "title": session.title(k), "status": session.status(k)} for k in session.katas]
    if as_json:
        import json

        echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    con = out()
    labels = {"solved": (M.STATUS_SOLVED, "✓", "green"), "current": (M.STATUS_CURRENT, "▶", "yellow"),
              "pending": (M.STATUS_PENDING, "·", "dim")}
    groups: dict[str, list[tuple[Kata, dict]]] = {}
    for kata, row in zip(session.katas, rows, strict=True):
        groups.setdefault(kata.track, []).append((kata, row))
    # every group's table gets the same column widths, so the tracks line up under each other
    widths = [1, len(str(len(rows))), max(len(r["kata"]) for r in rows), max(len(r["title"]) for r in rows)]
    for track, members in groups.items():
        if len(groups) > 1:  # a heading per track: its title, how to choose it, its progress
            done = sum(row["status"] == "solved" for _, row in members)
            title = members[0][0].setting.title.render(session.lang)
            con.print(f"[bold]{escape(title)}[/]  [dim]--track {escape(track)}  {done}/{len(members)}[/]")
        table = Table(box=None, pad_edge=False, show_header=False)
        for col, width in zip(("", "#", "kata", "title", "status"), [*widths, None], strict=True):
            table.add_column(col, justify="right" if col == "#" else "left", min_width=width)
        for kata, row in members:
            message, mark, colour = labels[row["status"]]
            if row["status"] == "solved" and session.progress.current == kata.slug:
                mark = "▶"
            table.add_row(f"[{colour}]{mark}[/]", f"{session.position(kata)}", escape(kata.slug),
                          escape(row["title"]), f"[{colour}]{escape(message.render(session.lang))}[/]")
        con.print(table)
        if len(groups) > 1:
            con.print("")
    solved = sum(r["status"] == "solved" for r in rows)
    total = len(rows)
    width = 30
    filled = round(width * solved / total)
    bar = "█" * filled + "░" * (width - filled)
    con.print(f"\n[green]{bar}[/] {escape(session.say(M.OVERALL, solved=solved, total=total))}")
    if solved < total:
        session.tell(con, M.LIST_NEXT, "dim")


def reset(session: Session, *, confirm: Callable[[str, str], bool] | None) -> bool:
    """Restore the current kata's starter, keeping the learner's version; False when they said no.

    ``confirm(question, lang)`` asks the learner first (the command line's prompt); None: no question."""
    from checker.learn.session import backup_path

    kata = session.current()
    path = session.file_of(kata)
    rec = session.progress.record(kata.slug)
    starter = starter_text(session, kata, rec.file)
    con = out()
    if not path.exists():
        path.write_text(starter, encoding="utf-8")
        session.tell(con, M.RESET_WRITTEN, path=shown_path(path))
    elif (current := path.read_bytes()) == starter.encode("utf-8"):
        session.tell(con, M.RESET_SAME, path=shown_path(path))
    else:
        backup = backup_path(path)
        question = session.say(M.RESET_CONFIRM, path=shown_path(path), backup=backup.name)
        if confirm is not None and not confirm(question, session.lang):
            session.tell(con, M.RESET_ABORTED)
            return False
        backup.write_bytes(current)
        path.write_text(starter, encoding="utf-8")
        session.tell(con, M.RESET_DONE, path=shown_path(path), backup=shown_path(backup))
    # the track's data file, as `kata next` puts it (never over a different one)
    tell_data(session, place_data(session, kata), con)
    return True
