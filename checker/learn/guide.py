"""kata's guide: what the katas teach, in order, one Markdown file per section and language.

The files are ``docs/guide/<lang>/<NN>-<id>.md`` (``NN`` orders the sections; the id names one
in `kata read ID` and in a kata's ``guide`` list); the first line is ``# Title``. A wheel carries
them as ``checker/_data/guide``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from checker.base.i18n import LANGS

_PACKAGE = Path(__file__).resolve().parents[1]
FILE_PATTERN = re.compile(r"^(?P<number>\d{2})-(?P<id>[a-z]+(?:-[a-z]+)*)\.md$")
READ_REFERENCE = re.compile(r"`kata read (?P<id>[a-z0-9-]+)`")
"""How a text points to a guide section: `kata read ID` in backquotes."""


def guide_dir() -> Path:
    checkout = _PACKAGE.parent / "docs" / "guide"
    return checkout if checkout.is_dir() else _PACKAGE / "_data" / "guide"


@dataclass(frozen=True)
class Section:
    number: int
    id: str
    title: str
    path: Path

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")


def sections(lang: str = "en", folder: Path | None = None) -> list[Section]:
    """The guide's sections in ``lang``, in order."""
    base = (folder or guide_dir()) / (lang if lang in LANGS else "en")
    found = []
    for path in sorted(base.glob("*.md")) if base.is_dir() else []:
        match = FILE_PATTERN.match(path.name)
        if not match:
            continue
        first = path.read_text(encoding="utf-8").lstrip().splitlines()[:1]
        title = first[0].lstrip("#").strip() if first else match["id"]
        found.append(Section(int(match["number"]), match["id"], title, path))
    return found


def find(name: str, lang: str = "en") -> Section | None:
    """A section by id or by its number in the list (``5`` or ``05``)."""
    known = sections(lang)
    for section in known:
        if section.id == name or (name.isdigit() and int(name) == section.number):
            return section
    return None


def references(text: str) -> list[str]:
    """The section ids a text points to with `kata read ID`."""
    return [m["id"] for m in READ_REFERENCE.finditer(text)]
