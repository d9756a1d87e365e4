"""What one check of one file asks for: a ``CheckRequest``, built by `kata check`, `kata watch` and `kata grade`
from their options (like ``checker.runs.training.RunSettings`` for a run).

Its values are checked when it is made: a bad one is a ``UsageProblem`` (exit 2) whose message, in the
request's language, names the value given and what would do.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from checker.base.errors import UsageProblem
from checker.base.i18n import LANGS, Message

FORMATS = ("text", "json", "gradescope", "junit")
"""What a report can be printed as (``checker.engine.formats``)."""

_DEVICE = re.compile(r"cpu|cuda(:\d+)?")

BAD_LANG = Message(en="language {value!r}: use one of {choices}", es="idioma {value!r}: usa uno de {choices}")
BAD_FILE = Message(
    en="a check reads one file: give its path, or its source and file name, not both ({given})",
    es="una comprobación lee un solo archivo: da su ruta, o su código y nombre de archivo, no ambos ({given})",
)
BAD_FORMAT = Message(en="--format {value}: use one of {choices}", es="--format {value}: usa uno de {choices}")
BAD_DEVICE = Message(en="--device {value}: use cpu or cuda[:N]", es="--device {value}: usa cpu o cuda[:N]")
BAD_TIMEOUT = Message(
    en="--timeout {value}: give a number of seconds above 0", es="--timeout {value}: da un número de segundos mayor "
    "que 0")
BAD_ONLY = Message(
    en="--only {value!r}: give a check id (see `kata checks`)", es="--only {value!r}: da el id de una comprobación "
    "(mira `kata checks`)")
BAD_SECRET = Message(
    en="--secret is empty: give the grading secret's text (any non-blank text; keep it from the students), or leave "
       "--secret out to draw fresh arguments",
    es="--secret está vacío: da el texto del secreto de evaluación (cualquier texto no en blanco; que no lo vean los "
       "estudiantes), u omite --secret para sacar argumentos nuevos",
)
BAD_COUNT = Message(en="--{name} {value}: give a whole number from 1 to 64",
                    es="--{name} {value}: da un número entero de 1 a 64")


@dataclass(frozen=True)
class CheckRequest:
    """One file to check and how: what `kata check`, `kata watch` and `kata grade` (a shared one per class)
    ask of the checks. Made with bad values, it raises ``UsageProblem`` (exit 2)."""

    path: str | None = None
    """The file to check (a .py or .ipynb); None: the current kata's file (`kata check` without PATH), or
    the source below, or (`kata grade`) each submission of a folder."""
    source: str | None = None
    """The file's text, already read, instead of ``path`` (with ``filename``)."""
    filename: str | None = None
    """The name ``source`` is reported under."""
    track: str | None = None
    """--track as given; None: the kata's track, else the one the file's folder belongs to, else moons."""
    device: str = "cpu"
    """Where the checks run the loop: cpu, cuda or cuda:N."""
    lang: str = "en"
    """The language of the report's messages (en or es)."""
    only: tuple[str, ...] = ()
    """The check ids to run (--only, in the battery's order); empty: every check of the track."""
    timeout: float | None = None
    """The most seconds any one check (and the file's import) may take; None: each check's own limit."""
    secret: bytes | None = None
    """The grading secret: the differential checks' arguments derive from it and the file's code (same file
    and secret, same report); None: drawn fresh."""
    workers: int = 2
    """Children graded at the same time (one core each; `kata grade --workers`)."""
    split: int | None = None
    """How many children share one file's checks; None: ``workers`` (`kata check`), 1 (`kata grade`)."""
    format: str = "text"
    """How the report is printed: text, json, gradescope or junit."""
    verbose: bool = False
    """Also show what passing checks measured (text only)."""
    course: str | None = None
    """--course: a course file or folder (kata.toml); its [points] choose the checks run and weigh them in every
    format."""

    def __post_init__(self) -> None:
        if self.lang not in LANGS:
            raise UsageProblem(BAD_LANG.render("en", value=self.lang, choices=", ".join(LANGS)))
        self._check_file()
        self._check_run_settings()
        self._check_only()
        self._check_counts()

    def _check_file(self) -> None:
        """One file given, as a path or as source with its name."""
        lang = self.lang
        if self.path is not None and (self.source is not None or self.filename is not None):
            raise UsageProblem(BAD_FILE.render(lang, given=f"path {self.path!r} and source {self.filename!r}"))
        if (self.source is None) != (self.filename is None):
            raise UsageProblem(BAD_FILE.render(lang, given="source and file name go together"))

    def _check_run_settings(self) -> None:
        """The format, device and timeout are ones the run knows."""
        lang = self.lang
        if self.format not in FORMATS:
            raise UsageProblem(BAD_FORMAT.render(lang, value=self.format, choices=", ".join(FORMATS)))
        if not isinstance(self.device, str) or not _DEVICE.fullmatch(self.device):
            raise UsageProblem(BAD_DEVICE.render(lang, value=self.device))
        if self.timeout is not None and not (isinstance(self.timeout, int | float) and math.isfinite(self.timeout)
                                             and self.timeout > 0):
            raise UsageProblem(BAD_TIMEOUT.render(lang, value=self.timeout))

    def _check_only(self) -> None:
        """--only as a tuple of non-blank check ids (one id given as a string is taken as one)."""
        if isinstance(self.only, str):  # one id given as a string, not a tuple of ids
            object.__setattr__(self, "only", (self.only,))
        object.__setattr__(self, "only", tuple(self.only))
        for cid in self.only:
            if not isinstance(cid, str) or not cid.strip():
                raise UsageProblem(BAD_ONLY.render(self.lang, value=cid))

    def _check_counts(self) -> None:
        """The secret is non-blank bytes; workers and split are whole numbers from 1 to 64."""
        lang = self.lang
        if self.secret is not None and (not isinstance(self.secret, bytes) or not self.secret.strip()):
            raise UsageProblem(BAD_SECRET.render(lang))
        for name in ("workers", "split"):
            value = getattr(self, name)
            if value is None and name == "split":
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
                raise UsageProblem(BAD_COUNT.render(lang, name=name, value=value))

    @property
    def current_kata(self) -> bool:
        """No file named: the request is for the current kata's file."""
        return self.path is None and self.source is None

    @property
    def children(self) -> int:
        """How many children share one file's checks."""
        return self.workers if self.split is None else self.split
