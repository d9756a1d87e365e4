"""Spanish everywhere (issues 21 and 34): every command and option has Spanish help in one gettext catalogue
(checker/locale/es/LC_MESSAGES/kata.po, compiled to kata.mo), and every help page, click's own words and errors,
and the learner's main outputs, in Spanish, hold no English line and no English placeholder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from checker.base.i18n import catalogue
from checker.cli import main
from checker.cli.texts import option_name, translated
from tests.conftest import REFERENCE

# ------------------------------------------------------------------------------------------------
# The English-line detector
# ------------------------------------------------------------------------------------------------

ENGLISH = frozenset("""
the and of to is are was were be been with for this that these those on in it its not or from by as each every
your you what which when where while than then there their they will would should could can cannot into only
also after before about over under between without here one two more most some any all has have had does did
run runs ran check checks file files loop track tracks kata's learner option show shows use used uses such
called known split protocol reference warning saved stopped finish finished ended early missing directory give
""".split())
"""Common English words. A line with two or more of them, and no Spanish word, is English."""

SPANISH = frozenset("""
el la los las lo un una unos unas de del al y o que en es son por para con sin se su sus más cada ni como
este esta estos estas ese esa qué cuál cuando donde mientras tu tus ya aún muy hay ejecuta archivo archivos
bucle comprobación comprobaciones recorrido recorridos pista pistas época épocas lote lotes pérdida
""".split())

ALLOWED = (
    re.compile(r"^\s*[+\-@ ]?\s*(def |return |for |if |with |import |from |class |#)"),  # code
    re.compile(r"^\s*[│┃|]"),  # a code block's frame
    re.compile(r'^\s*File ".*", (line|cell) \d+'),  # a traceback's frame (Python's own words)
)
"""Lines that may hold English words without being an untranslated message: code (a diff, a function),
quoted in the output as it is written."""


def _words(line: str) -> list[str]:
    line = re.sub(r"`[^`]*`", " ", line)  # commands and code in backticks
    line = re.sub(r"\S*[/_.=()\[\]{}$<>:]\S*", " ", line)  # paths, identifiers, calls, options' values
    line = re.sub(r"--?[\w-]+", " ", line)  # option names
    return re.findall(r"[a-záéíóúñü']+", line.lower())


def english_lines(text: str) -> list[str]:
    """The lines of ``text`` that read as English: ≥2 common English words, no Spanish word, not code."""
    found = []
    for line in text.splitlines():
        if any(pattern.search(line) for pattern in ALLOWED):
            continue
        words = _words(line)
        if sum(w in ENGLISH for w in words) >= 2 and not any(w in SPANISH for w in words):
            found.append(line)
    return found


@pytest.mark.parametrize("line, english", [
    ("the run stopped because the loop raised an error", True),
    ("Run only this check (repeatable).", True),
    ("Error: missing.py: no such file", True),
    ("Use one with --track NAME: kata next, list, run, check, mutants.", True),
    ("la ejecución se detuvo porque el bucle lanzó un error", False),
    ("Kata 2/8 del recorrido three-classes · Tres clases", False),
    ("    for xb, yb in loader: the batch is on the device", False),  # code
    ("`kata run the-file.py --lr 0.1` and `kata check`", False),  # commands only
])
def test_the_detector_tells_english_from_spanish_and_code(line: str, english: bool) -> None:
    assert bool(english_lines(line)) is english


# ------------------------------------------------------------------------------------------------
# One catalogue: every command and option has its Spanish help
# ------------------------------------------------------------------------------------------------

def _context(command: click.Command, path: str) -> click.Context:
    """A context for ``command`` with the group's settings (``-h`` for ``--help``: click keeps the help option a
    context made first, so one made without them would leave ``-h`` off every later help page of this process)."""
    return click.Context(command, info_name=path.split()[-1], **main.context_settings)


def _commands(command: click.Command, path: str = "kata"):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_every_command_and_option_has_a_spanish_help_entry() -> None:
    texts, missing = catalogue("es"), []
    for path, command in _commands(main):
        if command.help and translated(texts, path, command.help) is None:
            missing.append(f'msgctxt "{path}" (command): {" ".join(command.help.split())[:90]}')
        ctx = _context(command, path)
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and param.help:
                if translated(texts, f"{path} {option_name(param)}", param.help) is None:
                    missing.append(f'msgctxt "{path} {option_name(param)}" (option): {param.help[:90]}')
    assert not missing, ("no Spanish help in checker/locale/es/LC_MESSAGES/kata.po (msgid: the English text, "
                         "msgstr: its Spanish; then python .ci/compile_texts.py) for:\n  " + "\n  ".join(missing))


def test_the_compiled_catalogue_says_what_its_source_says() -> None:
    """kata.mo (what gettext reads) is kata.po (what a translator edits) compiled: an edit not compiled fails."""
    done = subprocess.run([sys.executable, ".ci/compile_texts.py", "--check"], cwd=Path(__file__).parent.parent,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_placeholder_has_its_spanish() -> None:
    """Every value's placeholder (NAME, DIRECTORY...) a help page shows has a Spanish entry (msgctxt "metavar")."""
    texts, missing = catalogue("es"), set()
    for path, command in _commands(main):
        ctx = _context(command, path)
        for param in command.get_params(ctx):
            metavar = param.metavar or (param.name.upper() if isinstance(param, click.Argument) else None)
            if metavar and metavar not in SAME_IN_SPANISH and texts.pgettext("metavar", metavar) == metavar:
                missing.add(f"{metavar} ({path})")
    assert not missing, sorted(missing)


SAME_IN_SPANISH = frozenset({"ID", "KATA", "REF", "SLUG"})
"""Placeholders a Spanish page shows as they are."""


# ------------------------------------------------------------------------------------------------
# Every help page, in Spanish, holds no English line
# ------------------------------------------------------------------------------------------------

COMMAND_PATHS = [path.split()[1:] for path, _ in _commands(main)]


@pytest.mark.parametrize("words", COMMAND_PATHS, ids=[" ".join(p) or "kata" for p in COMMAND_PATHS])
@pytest.mark.parametrize("where", ["before", "after", "env"])
def test_every_help_page_is_spanish(runner, words: list[str], where: str, monkeypatch) -> None:
    """`kata --lang es CMD --help`, `kata CMD --help --lang es` and KATA_LANG=es `kata CMD --help`."""
    monkeypatch.setenv("KATA_LANG", "es" if where == "env" else "en")
    args = {"before": ["--lang", "es", *words, "--help"], "after": [*words, "--help", "--lang", "es"],
            "env": [*words, "--help"]}[where]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Uso:") and "Opciones:" in result.output, result.output
    assert english_lines(result.output) == [], result.output
    assert english_words_of_click(result.output) == [], result.output


CLICK_ENGLISH = ("Usage:", "Options:", "Commands:", "Arguments:", "[default:", "default:", "[required]",
                 "env var:", "[OPTIONS]", "COMMAND [ARGS]", "Show this message", "Show the version")
"""click's own words, which a Spanish page must not show."""


def english_words_of_click(text: str) -> list[str]:
    """click's English words, and English placeholders (``--track NAME``, ``DIRECTORY``), found in ``text``: a
    line with one word of English is an English line too, which the line detector (two words or more) lets by."""
    found = [words for words in CLICK_ENGLISH if words in text]
    english = {m for m in _metavars() if m not in SAME_IN_SPANISH}
    found += sorted({m for m in re.findall(r"(?<![\w$])[A-Z][A-Z_/=]+[A-Z](?![\w])", text) if m in english})
    return found


def _metavars() -> set[str]:
    found = {"FLOAT", "INTEGER", "TEXT", "PATH", "FILE", "DIRECTORY", "FLOAT RANGE", "INTEGER RANGE"}
    for path, command in _commands(main):
        for param in command.get_params(_context(command, path)):
            found.add(param.metavar or (param.name.upper() if isinstance(param, click.Argument) else ""))
    return found - {""}


@pytest.mark.parametrize("args", [["--lang", "es", "next", "--help"], ["--lang", "es", "mutants", "verify", "--help"],
                                  ["--lang", "es", "project", "--help"]], ids=" ".join)
def test_a_help_page_in_spanish_from_the_installed_command_holds_no_english(args: list[str]) -> None:
    """The same pages from a real process (`python -m checker`, as the `kata` script runs it), in an English
    locale: gettext's catalogue is found and installed at start, not only under click's test runner."""
    env = {k: v for k, v in os.environ.items() if k not in ("KATA_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    done = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, timeout=120,
                          env={**env, "LANG": "C.UTF-8", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Uso: kata ") and "Opciones:" in done.stdout, done.stdout
    assert english_lines(done.stdout) == [] and english_words_of_click(done.stdout) == [], done.stdout


def test_no_module_of_the_command_line_is_over_400_lines() -> None:
    """checker/cli/ holds click code only; texts live in the catalogues (issue 34: help_es.py was 447 lines)."""
    cli = Path(__file__).parent.parent / "checker" / "cli"
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in cli.glob("*.py")}
    assert sizes and {name: n for name, n in sizes.items() if n > 400} == {}


def test_a_help_page_in_english_stays_english(runner, monkeypatch) -> None:
    monkeypatch.setenv("KATA_LANG", "en")
    result = runner.invoke(main, ["next", "--help"])
    assert result.output.startswith("Usage:") and "Open the next unsolved kata" in result.output


# ------------------------------------------------------------------------------------------------
# The learner's main outputs, in Spanish
# ------------------------------------------------------------------------------------------------

KATA_TOML = """\
mutant = "zero-grad-missing"
[title]
en = "Gradients that pile up"
es = "Gradientes que se acumulan"
[story]
en = "Test story."
es = "Historia de prueba."
[[hints]]
en = "First hint."
es = "Primera pista."
[read]
en = "Read about zero_grad."
es = "Lee sobre zero_grad."
[try]
args = ["--epochs", "3"]
"""


def test_the_learners_outputs_in_spanish_hold_no_english_line(runner, tmp_path: Path, monkeypatch) -> None:
    katas, work = tmp_path / "katas", tmp_path / "work"
    katas.mkdir()
    work.mkdir()
    (katas / "010-zero-grad.toml").write_text(KATA_TOML)
    monkeypatch.setenv("KATA_KATAS_DIR", str(katas))
    monkeypatch.setenv("KATA_LANG", "es")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("KATA_DIR", raising=False)
    monkeypatch.chdir(work)
    outputs = {}

    def kata(*args: str, code: int | None = 0) -> str:
        result = runner.invoke(main, list(args))
        if code is not None:
            assert result.exit_code == code, (args, result.output)
        outputs[" ".join(args)] = result.output
        return result.output

    kata("next")
    kata("show")
    kata("hint")
    kata("hint")
    kata("list")
    kata("tracks")
    kata("checks")
    kata("read")
    kata("read", "step")
    kata("run", "zero-grad.py", "--epochs", "2")
    kata("trace", "zero-grad.py")
    kata("check", "--only", "steps.fresh_grads", code=1)
    kata("check", "--track", "no-such-track", code=2)
    kata("run", "missing.py", code=2)
    kata("next", "--track", "no-such-track", code=2)
    kata("solution", code=2)
    (work / "half.py").write_text("import torch\n\ndef make_data(seed=0):\n    return 1\n")
    (work / "broken.py").write_text("def make_data(:\n    pass\n")
    (work / "raises.py").write_text("raise RuntimeError('at import')\n")
    assert "no sigue el protocolo de bucle v1" in kata("check", "half.py", code=2)
    assert "falta la función make_loader" in kata("run", "half.py", code=2)
    assert "error de sintaxis" in kata("check", "broken.py", code=2)
    assert "lanzó un error al importarse" in kata("run", "raises.py", code=2)
    shutil.copy(REFERENCE, work / "zero-grad.py")
    kata("check", "zero-grad.py", "--only", "steps.fresh_grads")
    found = {cmd: english_lines(text) for cmd, text in outputs.items()}
    assert {cmd: lines for cmd, lines in found.items() if lines} == {}


@pytest.mark.parametrize("args, said", [
    (["run", "x.py", "--lr", "abc", "--lang", "es"], "Valor no válido para '--lr': 'abc' no es un número decimal"),
    (["--lang", "es", "next", "--skp"], "No existe la opción '--skp'. ¿Quisiste decir '--skip'?"),
    (["--lang", "es", "grade"], "Falta el argumento 'CARPETA'."),
    (["--lang", "es", "nxt"], "No existe el comando"),
], ids=["bad-value", "no-such-option", "missing-argument", "no-such-command"])
def test_clicks_own_usage_errors_are_spanish_too(runner, args: list[str], said: str) -> None:
    result = runner.invoke(main, args)
    assert result.exit_code == 2 and said in result.output, result.output
    assert "Prueba '" in result.output and english_lines(result.output) == [], result.output
    assert english_words_of_click(result.output) == [], result.output


def test_an_instructors_catalogue_listing_speaks_spanish_around_the_catalogues_own_words(runner):
    """`kata mutants list` and `show` in Spanish: the columns and facts are Spanish; a mutant's title and
    description stay the catalogue's own (English) words."""
    listing = runner.invoke(main, ["mutants", "list", "--lang", "es"])
    assert listing.exit_code == 0, listing.output
    header = listing.output.splitlines()[0]
    assert "lo matan" in header and "título" in header and "killed by" not in header
    assert re.search(r"\n\d+ mutantes$", listing.output.rstrip())
    shown = runner.invoke(main, ["mutants", "show", "lr-ignored", "--lang", "es"])
    assert shown.exit_code == 0 and "lo matan: optimizer.setup · documentado en:" in shown.output
    english = runner.invoke(main, ["mutants", "list"])
    assert "killed by" in english.output.splitlines()[0] and re.search(r"\n\d+ mutants$", english.output.rstrip())
