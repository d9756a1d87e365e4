"""English and Spanish: choosing the language and rendering bilingual messages."""

from __future__ import annotations

import gettext
import locale
import os
from dataclasses import dataclass
from pathlib import Path

LANGS = ("en", "es")

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
"""The command line's texts in other languages than English: ``LANG/LC_MESSAGES/kata.po`` (what a translator
edits: the English text, its translation, and for a command's or option's help its path as the context) and
``kata.mo`` (the same, compiled by ``python .ci/compile_texts.py``; what gettext reads at start)."""
DOMAIN = "kata"


def catalogue(lang: str) -> gettext.NullTranslations:
    """The command line's texts in ``lang`` (gettext; English, or a language without a catalogue: as written)."""
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


@dataclass(frozen=True)
class Message:
    """One text in both languages; ``{name}`` fields are filled from measured figures."""

    en: str
    es: str

    def render(self, lang: str = "en", **params: object) -> str:
        template = self.es if lang == "es" else self.en
        # a parameter that is itself a Message is rendered in the same language
        params = {k: v.render(lang) if isinstance(v, Message) else v for k, v in params.items()}
        return template.format(**params) if params else template


def resolve_lang(explicit: str | None = None) -> str:
    """``--lang``, else ``KATA_LANG``, else the locale; English when none says Spanish."""
    for candidate in (explicit, os.environ.get("KATA_LANG")):
        if candidate:
            return "es" if candidate.lower().startswith("es") else "en"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "es" if value.lower().startswith("es") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "es" if loc.lower().startswith("es") else "en"
