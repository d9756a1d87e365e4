"""English and Spanish: choosing the language and rendering bilingual messages."""

from __future__ import annotations

import locale
import os
from dataclasses import dataclass

LANGS = ("en", "es")


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
