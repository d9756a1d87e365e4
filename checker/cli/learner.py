"""The learner's commands: `kata next / show / hint / list / reset / solution / watch`, and the
current-kata half of `kata check`.

The learner works in a folder of their own (``--dir``, else ``$KATA_DIR``, else the current
directory): `kata next` writes ``<slug>.py`` there, and progress lives in ``.kata/progress.json``
(checker/progress.py, docs/progress.md). Every message exists in English and Spanish.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import os
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import click
from rich.markup import escape

from checker.cli.common import UsageProblem, current_lang, lang_option
from checker.i18n import Message
from checker.katas import (
    Kata,
    KataFileError,
    UnknownKata,
    find_kata,
    load_katas,
    mutant_text,
    reference_source,
    starter_source,
)
from checker.progress import Progress, ProgressError, resolve_workdir, sha256

# ---------------------------------------------------------------------------------------------
# Messages (English and Spanish)
# ---------------------------------------------------------------------------------------------

NO_CURRENT = Message(
    en="there is no current kata in {dir}: run `kata next` to start one",
    es="no hay ninguna kata en curso en {dir}: ejecuta `kata next` para empezar una",
)
UNKNOWN_KATA = Message(
    en="there is no kata called {name!r}; `kata list` shows them all{close}",
    es="no hay ninguna kata llamada {name!r}; `kata list` las muestra todas{close}",
)
DID_YOU_MEAN = Message(en=" (did you mean {names}?)", es=" (¿quizás {names}?)")
CURRENT_GONE = Message(
    en="your progress says the current kata is {name!r}, which this kata catalogue does not have; "
       "run `kata next` to pick up from the next kata",
    es="tu progreso dice que la kata en curso es {name!r}, que este catálogo no tiene; "
       "ejecuta `kata next` para seguir con la siguiente",
)
CATALOGUE_BROKEN = Message(
    en="the kata catalogue cannot be read: {error}",
    es="no se puede leer el catálogo de katas: {error}",
)
CATALOGUE_EMPTY = Message(
    en="the kata catalogue {dir} holds no kata yet",
    es="el catálogo de katas {dir} aún no contiene ninguna kata",
)
STARTER_BROKEN = Message(
    en="cannot build the starter of kata {kata} from mutant {mutant!r}: {error}",
    es="no se puede generar el archivo inicial de la kata {kata} a partir del mutante {mutant!r}: {error}",
)
HEADER = Message(en="Kata {pos}/{total} · {title}", es="Kata {pos}/{total} · {title}")
FILE_WRITTEN = Message(en="Your file: {path} (new)", es="Tu archivo: {path} (nuevo)")
FILE_SAME = Message(en="Your file: {path} (already there, still the starter)",
                    es="Tu archivo: {path} (ya estaba, sigue siendo el inicial)")
FILE_KEPT = Message(
    en="Your file: {path} — it was already there and differs from the starter, so it is kept as it is "
       "(`kata reset` restores the starter, keeping a backup)",
    es="Tu archivo: {path} — ya existía y es distinto del inicial, así que se conserva tal cual "
       "(`kata reset` restaura el inicial y guarda una copia)",
)
FILE_MISSING = Message(
    en="Your file {path} is missing: `kata reset` writes the starter again",
    es="Falta tu archivo {path}: `kata reset` vuelve a escribir el inicial",
)
STILL_ON = Message(
    en="You are still on this kata (not solved yet). `kata next --skip` moves on anyway.",
    es="Sigues en esta kata (aún sin resolver). `kata next --skip` pasa a la siguiente de todos modos.",
)
WHAT_NEXT = Message(
    en="What to do:\n  1. see the symptom:   {run}\n  2. fix {file}, then:  {check}   "
       "(or `kata watch` to re-check on every save)\n  stuck?  kata hint",
    es="Qué hacer:\n  1. mira el síntoma:    {run}\n  2. arregla {file} y:  {check}   "
       "(o `kata watch` para comprobar a cada guardado)\n  ¿atascado?  kata hint",
)
ALL_SOLVED = Message(
    en="Every kata is solved ({total}/{total}). Well done! `kata list` shows them; "
       "`kata next KATA` reopens one.",
    es="Todas las katas están resueltas ({total}/{total}). ¡Bien hecho! `kata list` las muestra; "
       "`kata next KATA` vuelve a abrir una.",
)
SOLVED_NOW = Message(en="Solved! Progress saved in {path}.", es="¡Resuelta! Progreso guardado en {path}.")
SOLVED_BEFORE = Message(en="Solved (already recorded on {when}).", es="Resuelta (ya registrada el {when}).")
YOUR_CHANGE = Message(en="What you changed (starter → your file):",
                      es="Lo que cambiaste (inicial → tu archivo):")
DIFF_CUT = Message(en="… {n} more diff lines", es="… {n} líneas más de diferencias")
AFTER_PASS = Message(
    en="Next: `kata solution` compares with the reference; `kata next` opens the next kata ({left} left).",
    es="Después: `kata solution` compara con la referencia; `kata next` abre la siguiente kata "
       "(quedan {left}).",
)
AFTER_PASS_LAST = Message(
    en="Next: `kata solution` compares with the reference. That was the last unsolved kata!",
    es="Después: `kata solution` compara con la referencia. ¡Era la última kata sin resolver!",
)
NOT_YET = Message(
    en="Not yet. Stuck? `kata hint` ({shown}/{total} hints shown). See the symptom: {run}",
    es="Todavía no. ¿Atascado? `kata hint` ({shown}/{total} pistas vistas). Mira el síntoma: {run}",
)
UNCHANGED = Message(
    en="(your file is still exactly the starter: open it and look for the broken line)",
    es="(tu archivo sigue siendo exactamente el inicial: ábrelo y busca la línea rota)",
)
PARTIAL = Message(
    en="(only some checks ran (--only): the kata counts as solved when the full battery passes)",
    es="(solo se ejecutaron algunas comprobaciones (--only): la kata cuenta como resuelta cuando pasa "
       "la batería completa)",
)
HINT = Message(en="Hint {n}/{total}:", es="Pista {n}/{total}:")
LAST_HINT = Message(
    en="That was the last hint. `kata show` repeats the story and every hint.",
    es="Era la última pista. `kata show` repite la historia y todas las pistas.",
)
MORE_HINTS = Message(en="`kata hint` again for a more precise one.",
                     es="`kata hint` otra vez para una más precisa.")
NO_MORE_HINTS = Message(
    en="No more hints: all {total} are above. Run the symptom again ({run}) and read, line by line, "
       "the part of {file} the hints point to.",
    es="No hay más pistas: las {total} están arriba. Vuelve a ver el síntoma ({run}) y lee, línea a línea, "
       "la parte de {file} a la que apuntan las pistas.",
)
NOT_OPENED = Message(en="You have not opened this kata yet: `kata next {kata}` opens it.",
                     es="Aún no has abierto esta kata: `kata next {kata}` la abre.")
HINTS_SO_FAR = Message(en="Hints so far:", es="Pistas hasta ahora:")
NO_HINTS_YET = Message(en="No hint revealed yet (`kata hint`).",
                       es="Aún no has visto ninguna pista (`kata hint`).")
STATUS_SOLVED = Message(en="solved", es="resuelta")
STATUS_CURRENT = Message(en="current", es="en curso")
STATUS_PENDING = Message(en="pending", es="pendiente")
SOLVED_ON = Message(en="Solved on {when}: `kata solution` shows the reference's version.",
                    es="Resuelta el {when}: `kata solution` muestra la versión de la referencia.")
OVERALL = Message(en="{solved}/{total} katas solved", es="{solved}/{total} katas resueltas")
LIST_NEXT = Message(en="`kata next` opens the next one.", es="`kata next` abre la siguiente.")
RESET_CONFIRM = Message(
    en="Replace {path} with the starter of this kata? Your version is kept as {backup}",
    es="¿Sustituir {path} por el archivo inicial de esta kata? Tu versión se guarda como {backup}",
)
RESET_DONE = Message(en="{path} is the starter again; your version is in {backup}.",
                     es="{path} vuelve a ser el inicial; tu versión está en {backup}.")
RESET_WRITTEN = Message(en="{path} written again from the starter.",
                        es="{path} escrito de nuevo desde el inicial.")
RESET_SAME = Message(en="{path} is already the starter: nothing to restore.",
                     es="{path} ya es el archivo inicial: nada que restaurar.")
RESET_ABORTED = Message(en="Nothing changed.", es="No se ha cambiado nada.")
YES_NO = Message(en="[y/N]", es="[s/N]")
SOLUTION_LOCKED = Message(
    en="solve kata {kata} first (`kata check` until it passes); then `kata solution` shows the reference's "
       "version",
    es="resuelve primero la kata {kata} (`kata check` hasta que pase); después `kata solution` muestra la "
       "versión de la referencia",
)
SOLUTION_DIFF = Message(en="The broken part, fixed (starter → reference):",
                        es="La parte rota, arreglada (inicial → referencia):")
SOLUTION_FUNCS = Message(en="In the reference ({path}):", es="En la referencia ({path}):")
READ_MORE = Message(en="Read more:", es="Para leer más:")
WATCHING = Message(
    en="watching {path}: save it to re-check (Ctrl-C to stop)",
    es="vigilando {path}: guárdalo para volver a comprobar (Ctrl-C para salir)",
)
WATCH_STOPPED = Message(en="stopped watching.", es="vigilancia detenida.")
WATCH_WAITING = Message(en="{path} is missing: waiting for it to come back",
                        es="falta {path}: esperando a que vuelva")
STATUS_PASS = Message(en="every check passes", es="todas las comprobaciones pasan")
STATUS_FAILS = Message(en="{id} fails", es="{id} falla")
STATUS_MORE = Message(en=" (+{n} more)", es=" (+{n} más)")
STATUS_CANNOT = Message(en="cannot grade the file", es="no se puede evaluar el archivo")
CURVE = Message(
    en="training loss, {epochs} epochs of SGD at lr={lr}:  {line}  ({first} → {last})",
    es="pérdida de entrenamiento, {epochs} épocas de SGD con lr={lr}:  {line}  ({first} → {last})",
)


# ---------------------------------------------------------------------------------------------
# Shared state: the working folder, its progress, the catalogue
# ---------------------------------------------------------------------------------------------

def workdir_option(fn):
    return click.option(
        "--dir", "workdir", type=click.Path(file_okay=False), default=None,
        help="Your working folder (default: $KATA_DIR, else the current directory).",
    )(fn)


@dataclass
class Session:
    lang: str
    workdir: Path
    progress: Progress
    katas: list[Kata]

    def say(self, message: Message, **params: object) -> str:
        return message.render(self.lang, **params)

    def tell(self, out, message: Message, style: str = "", **params: object) -> None:
        """Print ``message`` in this session's language (escaped), in ``style`` when given."""
        text = escape(self.say(message, **params))
        out.print(f"[{style}]{text}[/]" if style else text)

    def position(self, kata: Kata) -> int:
        return self.katas.index(kata) + 1

    def kata(self, name: str) -> Kata:
        try:
            return find_kata(self.katas, name)
        except UnknownKata:
            close = difflib.get_close_matches(name, [k.slug for k in self.katas], n=3)
            hint = self.say(DID_YOU_MEAN, names=", ".join(close)) if close else ""
            raise UsageProblem(self.say(UNKNOWN_KATA, name=name, close=hint)) from None

    def current(self) -> Kata:
        """The current kata; exit 2 with a clear message when there is none."""
        slug = self.progress.current
        if slug is None or self.progress.record(slug) is None:
            raise UsageProblem(self.say(NO_CURRENT, dir=shown_path(self.workdir)))
        try:
            return find_kata(self.katas, slug)
        except UnknownKata:
            raise UsageProblem(self.say(CURRENT_GONE, name=slug)) from None

    def file_of(self, kata: Kata) -> Path:
        rec = self.progress.record(kata.slug)
        return self.workdir / (rec.file if rec else kata.filename)

    def save(self) -> None:
        try:
            self.progress.save()
        except ProgressError as exc:
            raise UsageProblem(exc.render(self.lang)) from None

    def title(self, kata: Kata) -> str:
        return kata.title.render(self.lang)

    def header(self, kata: Kata) -> str:
        return self.say(HEADER, pos=self.position(kata), total=len(self.katas), title=self.title(kata))

    def unsolved(self) -> list[Kata]:
        return [k for k in self.katas if not self.progress.is_solved(k.slug)]

    def dir_flag(self) -> str:
        """`--dir X` to add to suggested commands when the working folder is not the current one."""
        try:
            if self.workdir.resolve() == Path.cwd().resolve():
                return ""
        except OSError:
            pass
        return f" --dir {shlex.quote(str(self.workdir))}"

    def run_command(self, kata: Kata) -> str:
        words = (shown_path(self.file_of(kata)), *kata.try_args)
        return "kata run " + " ".join(shlex.quote(w) for w in words)

    def check_command(self) -> str:
        return "kata check" + self.dir_flag()


def open_session(workdir: str | None, lang: str | None, *, need_katas: bool = True) -> Session:
    """The working folder, its progress and the catalogue; any problem is a UsageProblem (exit 2).

    With ``need_katas`` False (watching any file), a missing or broken catalogue is not an error.
    """
    lang = current_lang(lang)
    try:
        folder = resolve_workdir(workdir)
        progress = Progress.load(folder)
    except ProgressError as exc:
        raise UsageProblem(exc.render(lang)) from None
    katas: list[Kata] = []
    try:
        katas = load_katas()
    except KataFileError as exc:
        if need_katas:
            raise UsageProblem(CATALOGUE_BROKEN.render(lang, error=exc)) from None
    if not katas and need_katas:
        from checker.katas import resolve_katas_dir

        raise UsageProblem(CATALOGUE_EMPTY.render(lang, dir=resolve_katas_dir()))
    return Session(lang, folder, progress, katas)


def shown_path(path: Path) -> str:
    """``path`` relative to the current directory when it lies below it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _starter(session: Session, kata: Kata) -> str:
    return _authored(session, kata, starter_source)


def _mutant(session: Session, kata: Kata) -> str:
    return _authored(session, kata, mutant_text)


def _authored(session: Session, kata: Kata, make: Callable[[Kata], str]) -> str:
    try:
        return make(kata)
    except Exception as exc:  # an authoring problem (unknown mutant, target not found): say which
        raise UsageProblem(session.say(STARTER_BROKEN, kata=kata.slug, mutant=kata.mutant,
                                       error=f"{type(exc).__name__}: {exc}")) from None


def _notebook(kata: Kata, source: str, lang: str) -> str:
    from checker.notebook import starter_notebook

    return starter_notebook(kata, lang, source)


RENDERERS: dict[str, Callable[[Kata, str, str], str]] = {
    ".py": lambda _kata, source, _lang: source,
    ".ipynb": _notebook,
}
"""How a starter is written for each file suffix: ``render(kata, python_source, lang) -> file text``.
Another format (a notebook) registers its suffix here; `kata next`, `check` and `reset` follow it."""


def starter_text(session: Session, kata: Kata, filename: str | None = None) -> str:
    """The starter as it is written to ``filename`` (by default ``<slug>.py``)."""
    suffix = Path(filename or kata.filename).suffix
    render = RENDERERS.get(suffix, RENDERERS[".py"])
    return render(kata, _starter(session, kata), session.lang)


def write_starter(path: Path, text: str) -> str:
    """Write ``text`` to ``path`` unless a different file is there: 'written', 'same' or 'kept'."""
    if path.exists():
        try:
            existing = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return "kept"
        return "same" if existing == text else "kept"
    path.write_text(text, encoding="utf-8")
    return "written"


def _out():
    from checker.term import console

    return console()


def _print_texts(out, title: str, texts: Iterable[str], style: str = "") -> None:
    out.print(f"[bold]{escape(title)}[/]" if title else "")
    for text in texts:
        for para in text.split("\n"):
            out.print(f"  [{style}]{escape(para)}[/]" if style else f"  {escape(para)}")


# ---------------------------------------------------------------------------------------------
# kata next
# ---------------------------------------------------------------------------------------------

def choose_next(session: Session, skip: bool) -> tuple[Kata | None, bool]:
    """The kata `kata next` opens, and whether it is the unsolved current one (the learner stays)."""
    progress, katas = session.progress, session.katas
    slugs = [k.slug for k in katas]
    current = progress.current if progress.current in slugs else None
    if current is not None and not progress.is_solved(current) and not skip:
        return katas[slugs.index(current)], True
    start = slugs.index(current) + 1 if current is not None else 0
    for kata in katas[start:] + katas[:start]:
        if kata.slug != current and not progress.is_solved(kata.slug):
            return kata, False
    if current is not None and not progress.is_solved(current):
        return katas[slugs.index(current)], True
    return None, False


@click.command("next", short_help="Open the next kata: its starter file and story.")
@click.argument("kata", required=False)
@click.option("--skip", is_flag=True, help="Move on even if the current kata is not solved yet.")
@click.option("--notebook", is_flag=True, help="Write the starter as a Jupyter notebook (<kata>.ipynb).")
@click.option("--json", "as_json", is_flag=True, help='Print {"kata", "path", "title"} as JSON.')
@workdir_option
@lang_option
def next_cmd(kata, skip, notebook, as_json, workdir, lang):
    """Open the next unsolved kata: write its starter file and tell its story.

    With KATA (a name or number from `kata list`), open that kata instead. A file already in
    your folder that differs from the starter is never overwritten.
    """
    session = open_session(workdir, lang)
    if kata is not None:
        chosen, staying = session.kata(kata), False
    else:
        chosen, staying = choose_next(session, skip)
    if chosen is None:
        if as_json:
            import json

            click.echo(json.dumps({"kata": None, "path": None, "title": None}))
        else:
            _out().print(f"[bold green]{escape(session.say(ALL_SOLVED, total=len(session.katas)))}[/]")
        return
    path, state = open_kata(session, chosen, filename=f"{chosen.slug}.ipynb" if notebook else None)
    if as_json:
        import json

        data = {"kata": chosen.slug, "path": str(path.resolve()), "title": session.title(chosen)}
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    out = _out()
    _present(session, chosen, out)
    message = {"written": FILE_WRITTEN, "same": FILE_SAME, "kept": FILE_KEPT}[state]
    session.tell(out, message, "cyan", path=shown_path(path))
    if staying:
        session.tell(out, STILL_ON, "yellow")
    session.tell(out, WHAT_NEXT, run=session.run_command(chosen), file=shown_path(path),
                 check=session.check_command())


def open_kata(session: Session, kata: Kata, *, filename: str | None = None) -> tuple[Path, str]:
    """Make ``kata`` current and put its starter in the working folder; (path, write state).

    ``filename`` (default ``<slug>.py``) picks the format through its suffix (see RENDERERS).
    """
    name = filename or kata.filename
    text = starter_text(session, kata, name)
    path = session.workdir / name
    try:
        state = write_starter(path, text)
    except OSError as exc:
        raise UsageProblem(f"{path}: {exc.strerror or exc}") from None
    session.progress.start(kata.slug, name, text)
    session.save()
    return path, state


def _present(session: Session, kata: Kata, out) -> None:
    out.print(f"[bold magenta]{escape(session.header(kata))}[/]  [dim]({escape(kata.slug)})[/]")
    for para in kata.story.render(session.lang).split("\n"):
        out.print(escape(para))
    out.print("")


# ---------------------------------------------------------------------------------------------
# kata check (no PATH): the current kata
# ---------------------------------------------------------------------------------------------

def colour_diff(lines: Iterable[str], out, limit: int = 80) -> None:
    lines = list(lines)
    for line in lines[:limit]:
        line = line.rstrip("\n")
        if line.startswith(("+++", "---")):
            out.print(f"[bold]{escape(line)}[/]")
        elif line.startswith("@@"):
            out.print(f"[cyan]{escape(line)}[/]")
        elif line.startswith("+"):
            out.print(f"[green]{escape(line)}[/]")
        elif line.startswith("-"):
            out.print(f"[red]{escape(line)}[/]")
        else:
            out.print(escape(line))
    return len(lines) - limit if len(lines) > limit else 0


def unified(a: str, b: str, a_name: str, b_name: str, context: int = 2) -> list[str]:
    return list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                     a_name, b_name, n=context))


def loss_curve(report, lang: str) -> str | None:
    """A one-line chart of the epoch losses that loss.falls measured (the lesson's SGD run), if any."""
    import math

    from checker.checks.loss import FALLS_LR
    from checker.term import sparkline

    res = next((c for c in report.checks if c.id == "loss.falls"), None)
    losses = (res.measured or {}).get("losses") if res else None
    if not losses or not all(isinstance(x, int | float) for x in losses):
        return None

    def shown(x: float) -> str:
        return f"{x:.3f}" if math.isfinite(x) else str(x)

    return CURVE.render(lang, epochs=len(losses), lr=FALLS_LR, line=sparkline(losses),
                        first=shown(losses[0]), last=shown(losses[-1]))


def check_current(workdir: str | None, *, lang: str | None, fmt: str = "text", device: str = "cpu",
                  only: tuple[str, ...] = (), verbose: bool = False, timeout: float | None = None) -> int:
    """`kata check` without PATH: grade the current kata's file, record a pass; the exit code."""
    from checker.cli.check import emit_report, grade_path

    session = open_session(workdir, lang)
    kata = session.current()
    path = session.file_of(kata)
    if not path.exists():
        raise UsageProblem(session.say(FILE_MISSING, path=shown_path(path)))
    out = _out() if fmt == "text" else None
    if out is not None:
        out.print(f"[bold magenta]{escape(session.header(kata))}[/]  [dim]{escape(shown_path(path))}[/]")
    report = grade_path(str(path), lang=session.lang, device=device, only=only, timeout=timeout)
    emit_report(report, fmt, session.lang, verbose)
    if report.error is not None:
        return report.exit_code
    newly = session.progress.checked(kata.slug, report.passed and not only)
    session.save()
    if out is None:
        return report.exit_code
    curve = loss_curve(report, session.lang)
    if curve:
        out.print(f"[dim]{escape(curve)}[/]")
    out.print("")
    text = path.read_text(encoding="utf-8", errors="replace")
    rec = session.progress.record(kata.slug)
    if report.passed:
        if only:
            session.tell(out, PARTIAL, "yellow")
            return report.exit_code
        if newly:
            session.tell(out, SOLVED_NOW, "bold green", path=shown_path(session.progress.path))
        else:
            session.tell(out, SOLVED_BEFORE, "green", when=rec.solved)
        starter = starter_text(session, kata, rec.file)
        diff = unified(starter, text, f"starter/{path.name}", shown_path(path))
        if diff:
            session.tell(out, YOUR_CHANGE)
            cut = colour_diff(diff, out)
            if cut:
                session.tell(out, DIFF_CUT, "dim", n=cut)
        left = len(session.unsolved())
        session.tell(out, AFTER_PASS if left else AFTER_PASS_LAST, left=left)
    else:
        session.tell(out, NOT_YET, "yellow", shown=rec.hints, total=len(kata.hints),
                     run=session.run_command(kata))
        if sha256(text) == rec.starter_sha256:
            session.tell(out, UNCHANGED, "dim")
    return report.exit_code


# ---------------------------------------------------------------------------------------------
# kata hint / show / list
# ---------------------------------------------------------------------------------------------

@click.command("hint", short_help="Reveal the current kata's next hint.")
@workdir_option
@lang_option
def hint_cmd(workdir, lang):
    """Reveal the current kata's next hint (from vague to precise); hints are remembered."""
    session = open_session(workdir, lang)
    kata = session.current()
    rec = session.progress.record(kata.slug)
    total = len(kata.hints)
    out = _out()
    if rec.hints >= total:
        _print_texts(out, session.say(HINTS_SO_FAR), [h.render(session.lang) for h in kata.hints])
        session.tell(out, NO_MORE_HINTS, "yellow", total=total, file=shown_path(session.file_of(kata)),
                     run=session.run_command(kata))
        return
    n = session.progress.reveal_hint(kata.slug, total)
    session.save()
    out.print(f"[bold magenta]{escape(session.header(kata))}[/]")
    _print_texts(out, session.say(HINT, n=n, total=total), [kata.hints[n - 1].render(session.lang)], "yellow")
    session.tell(out, LAST_HINT if n == total else MORE_HINTS)


@click.command("show", short_help="Repeat the current kata's story and hints.")
@click.argument("kata", required=False)
@workdir_option
@lang_option
def show_cmd(kata, workdir, lang):
    """Repeat the current kata's story, the hints revealed so far and what to run."""
    session = open_session(workdir, lang)
    chosen = session.kata(kata) if kata is not None else session.current()
    out = _out()
    _present(session, chosen, out)
    rec = session.progress.record(chosen.slug)
    path = session.file_of(chosen)
    shown = rec.hints if rec else 0
    if shown:
        _print_texts(out, session.say(HINTS_SO_FAR),
                     [f"{i}. {h.render(session.lang)}" for i, h in enumerate(chosen.hints[:shown], start=1)],
                     "yellow")
    else:
        session.tell(out, NO_HINTS_YET, "dim")
    out.print("")
    if rec and rec.solved:
        session.tell(out, SOLVED_ON, "green", when=rec.solved)
    elif rec is None:
        session.tell(out, NOT_OPENED, "yellow", kata=chosen.slug)
        return
    elif not path.exists():
        session.tell(out, FILE_MISSING, "yellow", path=shown_path(path))
    session.tell(out, WHAT_NEXT, run=session.run_command(chosen), file=shown_path(path),
                 check=session.check_command())


def kata_status(session: Session, kata: Kata) -> str:
    if session.progress.is_solved(kata.slug):
        return "solved"
    if session.progress.current == kata.slug:
        return "current"
    return "pending"


@click.command("list", short_help="Every kata with its status; your progress.")
@click.option("--json", "as_json", is_flag=True, help='Print [{"kata", "title", "status"}] as JSON.')
@workdir_option
@lang_option
def list_cmd(as_json, workdir, lang):
    """Every kata in order, with its status (solved, current, pending) and your overall progress."""
    session = open_session(workdir, lang)
    rows = [{"kata": k.slug, "title": session.title(k), "status": kata_status(session, k)}
            for k in session.katas]
    if as_json:
        import json

        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    out = _out()
    labels = {"solved": (STATUS_SOLVED, "✓", "green"), "current": (STATUS_CURRENT, "▶", "yellow"),
              "pending": (STATUS_PENDING, "·", "dim")}
    table = Table(box=None, pad_edge=False, show_header=False)
    for col in ("", "#", "kata", "title", "status"):
        table.add_column(col, justify="right" if col == "#" else "left")
    for kata, row in zip(session.katas, rows, strict=True):
        message, mark, colour = labels[row["status"]]
        if row["status"] == "solved" and session.progress.current == kata.slug:
            mark = "▶"
        table.add_row(f"[{colour}]{mark}[/]", f"{session.position(kata)}", escape(kata.slug),
                      escape(row["title"]), f"[{colour}]{escape(message.render(session.lang))}[/]")
    out.print(table)
    solved = sum(r["status"] == "solved" for r in rows)
    total = len(rows)
    width = 30
    filled = round(width * solved / total)
    bar = "█" * filled + "░" * (width - filled)
    out.print(f"\n[green]{bar}[/] {escape(session.say(OVERALL, solved=solved, total=total))}")
    if solved < total:
        session.tell(out, LIST_NEXT, "dim")


# ---------------------------------------------------------------------------------------------
# kata reset
# ---------------------------------------------------------------------------------------------

def backup_path(path: Path) -> Path:
    """``<file>.bak-YYYYmmdd-HHMMSS`` beside ``path``, never one that exists already."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate


def confirm(question: str, lang: str) -> bool:
    """Ask a yes/no question (y/yes, and s/si/sí in Spanish); no by default or at end of input."""
    try:
        answer = click.prompt(f"{question} {YES_NO.render(lang)}", default="", show_default=False,
                              prompt_suffix=" ")
    except click.Abort:
        click.echo("")
        return False
    return answer.strip().lower() in ("y", "yes", "s", "si", "sí")


@click.command("reset", short_help="Restore the current kata's starter file.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before restoring the starter.")
@workdir_option
@lang_option
def reset_cmd(yes, workdir, lang):
    """Restore the current kata's starter file (your version is kept as a backup)."""
    session = open_session(workdir, lang)
    kata = session.current()
    path = session.file_of(kata)
    rec = session.progress.record(kata.slug)
    starter = starter_text(session, kata, rec.file)
    out = _out()
    if not path.exists():
        path.write_text(starter, encoding="utf-8")
        session.tell(out, RESET_WRITTEN, path=shown_path(path))
        return
    current = path.read_bytes()
    if current == starter.encode("utf-8"):
        session.tell(out, RESET_SAME, path=shown_path(path))
        return
    backup = backup_path(path)
    if not yes and not confirm(session.say(RESET_CONFIRM, path=shown_path(path), backup=backup.name),
                               session.lang):
        session.tell(out, RESET_ABORTED)
        raise SystemExit(1)
    backup.write_bytes(current)
    path.write_text(starter, encoding="utf-8")
    session.tell(out, RESET_DONE, path=shown_path(path), backup=shown_path(backup))


# ---------------------------------------------------------------------------------------------
# kata solution
# ---------------------------------------------------------------------------------------------

def changed_functions(before: str, after: str) -> list[tuple[str, int, int]]:
    """Top-level functions of ``after`` whose text differs from ``before``'s: (name, first, last line)."""

    def functions(source: str) -> dict[str, tuple[str, int, int]]:
        found = {}
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                text = ast.get_source_segment(source, node) or ""
                found[node.name] = (text, first, node.end_lineno or first)
        return found

    old, new = functions(before), functions(after)
    return [(name, first, last) for name, (text, first, last) in new.items()
            if name not in old or old[name][0] != text]


@click.command("solution", short_help="The reference's fix, once a kata is solved.")
@click.argument("kata", required=False)
@workdir_option
@lang_option
def solution_cmd(kata, workdir, lang):
    """Once a kata is solved: the reference's version of the part that was broken."""
    from rich.syntax import Syntax

    from checker.paths import REFERENCE

    session = open_session(workdir, lang)
    chosen = session.kata(kata) if kata is not None else session.current()
    if not session.progress.is_solved(chosen.slug):
        raise UsageProblem(session.say(SOLUTION_LOCKED, kata=chosen.slug))
    # the commented mutant, so the diff is the fix alone (the starter has no comments)
    starter = _mutant(session, chosen)
    reference = reference_source()
    out = _out()
    out.print(f"[bold magenta]{escape(session.header(chosen))}[/]")
    session.tell(out, SOLUTION_DIFF)
    diff = unified(starter, reference, f"starter/{chosen.filename}", "solutions/loop.py")
    colour_diff(diff, out, limit=200)
    out.print("")
    lines = reference.splitlines()
    changed_lines = set()
    matcher = difflib.SequenceMatcher(a=starter.splitlines(), b=lines, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed_lines.update(range(j1 + 1, j2 + 1))
    funcs = changed_functions(starter, reference)
    if funcs:
        session.tell(out, SOLUTION_FUNCS, path=shown_path(REFERENCE))
        for _, first, last in funcs:
            code = "\n".join(lines[first - 1:last])
            out.print(Syntax(code, "python", line_numbers=True, start_line=first,
                             highlight_lines=changed_lines, theme="ansi_dark", word_wrap=False))
            out.print("")
    _print_texts(out, session.say(READ_MORE), [chosen.read.render(session.lang)])


# ---------------------------------------------------------------------------------------------
# kata watch
# ---------------------------------------------------------------------------------------------

def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def watch_loop(path: Path, batches: Iterable[Iterable[tuple[object, str]]], recheck: Callable[[], None],
               *, max_checks: int | None = None, on_missing: Callable[[], None] | None = None) -> int:
    """Call ``recheck()`` whenever ``path`` changes; the number of re-checks done.

    ``batches`` yields sets of ``(change, path)`` (what watchfiles yields; an empty set is a
    periodic tick). A batch naming ``path`` triggers a re-check, and so does a tick that finds
    the file's content changed (a save made before the watcher was ready is not lost).
    Stops after ``max_checks`` re-checks when given.
    """
    target = os.path.realpath(path)
    last = _digest(path)
    done = 0
    if max_checks is not None and max_checks <= 0:
        return 0
    for batch in batches:
        named = any(os.path.realpath(p) == target for _, p in batch)
        digest = _digest(path)
        if digest is None:
            if named and on_missing:
                on_missing()
            last = None
            continue
        if not named and digest == last:
            continue
        last = digest
        recheck()
        done += 1
        if max_checks is not None and done >= max_checks:
            break
    return done


def status_line(report, seconds: float, lang: str) -> tuple[str, str]:
    """The watch's one-line summary and its colour."""
    if report.error is not None:
        return f"! {STATUS_CANNOT.render(lang)} — {seconds:.1f} s", "red"
    n_pass = sum(c.passed for c in report.checks)
    total = len(report.checks)
    if report.passed:
        return f"✓ {n_pass}/{total} — {STATUS_PASS.render(lang)} — {seconds:.1f} s", "green"
    failing = [c.id for c in report.checks if not c.passed]
    more = STATUS_MORE.render(lang, n=len(failing) - 1) if len(failing) > 1 else ""
    return f"✗ {n_pass}/{total} — {STATUS_FAILS.render(lang, id=failing[0])}{more} — {seconds:.1f} s", "red"


def current_kata_of(session: Session, path: Path) -> Kata | None:
    """The current kata when ``path`` is its file, else None."""
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


@click.command("watch", short_help="Re-check a loop file on every save.")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda[:N].")
@click.option("--max-checks", type=click.IntRange(0), default=None,
              help="Stop after this many re-checks (for scripts and tests).")
@workdir_option
@lang_option
def watch_cmd(path, device, max_checks, workdir, lang):
    """Re-check a loop file every time you save it (default: the current kata's file).

    torch stays imported in this process, so a re-check after a save starts at once.
    """
    from checker.cli.common import prepared_lab, read_loop_file
    from checker.formats import render_text
    from checker.grading import grade_one

    session = open_session(workdir, lang, need_katas=path is None)
    if path is None:
        kata: Kata | None = session.current()
        target = session.file_of(kata)
    else:
        target = Path(path)
        kata = current_kata_of(session, target)  # watching the current kata's file records a pass
    if not target.exists():
        raise UsageProblem(session.say(FILE_MISSING, path=shown_path(target)))
    out = _out()
    lab = prepared_lab(device)

    def recheck() -> None:
        started = time.perf_counter()
        try:
            source, filename = read_loop_file(str(target))
        except UsageProblem as exc:
            report = None
            problem = exc.message
        else:
            report = grade_one(source, filename, lab, lang=session.lang)
            problem = None
        seconds = time.perf_counter() - started
        out.clear()
        stamp = datetime.now().strftime("%H:%M:%S")
        if report is None:
            out.print(f"[bold red]! {escape(STATUS_CANNOT.render(session.lang))} — {seconds:.1f} s[/]  "
                      f"[dim]{stamp} {escape(shown_path(target))}[/]")
            out.print(escape(problem))
        else:
            line, colour = status_line(report, seconds, session.lang)
            out.print(f"[bold {colour}]{escape(line)}[/]  [dim]{stamp} {escape(shown_path(target))}[/]")
            out.print("")
            render_text(report, out, session.lang)
            curve = loss_curve(report, session.lang)
            if curve:
                out.print(f"[dim]{escape(curve)}[/]")
            if kata is not None and report.error is None:
                newly = session.progress.checked(kata.slug, report.passed)
                session.save()
                if newly:
                    session.tell(out, SOLVED_NOW, "bold green", path=shown_path(session.progress.path))
                    left = len(session.unsolved())
                    session.tell(out, AFTER_PASS if left else AFTER_PASS_LAST, left=left)
        session.tell(out, WATCHING, "dim", path=shown_path(target))

    try:
        recheck()
        if max_checks == 0:
            return
        import watchfiles

        target_dir = str(target.resolve().parent)
        batches = watchfiles.watch(target_dir, yield_on_timeout=True, rust_timeout=1000, debounce=400,
                                   watch_filter=lambda _change, p: os.path.basename(p) == target.name)
        watch_loop(target, batches, recheck, max_checks=max_checks,
                   on_missing=lambda: session.tell(out, WATCH_WAITING, "yellow", path=shown_path(target)))
    except KeyboardInterrupt:
        out.print("")
        session.tell(out, WATCH_STOPPED)


COMMANDS = (next_cmd, show_cmd, hint_cmd, list_cmd, reset_cmd, solution_cmd, watch_cmd)


def register(group: click.Group) -> None:
    """Add every learner command to the `kata` group."""
    for command in COMMANDS:
        group.add_command(command)
