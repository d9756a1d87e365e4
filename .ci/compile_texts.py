"""Compile every catalogue of the command line's texts, checker/locale/LANG/LC_MESSAGES/kata.po, into the
kata.mo beside it (what gettext reads when `kata` starts). Run it after editing a .po file:

    python .ci/compile_texts.py            # compile them all
    python .ci/compile_texts.py --check    # exit 1 when a kata.mo differs from its kata.po (tests do this too)

Needs polib (the test extra installs it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polib

LOCALE_DIR = Path(__file__).resolve().parent.parent / "checker" / "locale"


def stale(po_path: Path) -> bool:
    """Whether ``po_path``'s kata.mo is missing or says something else than the .po."""
    mo_path = po_path.with_suffix(".mo")
    if not mo_path.exists():
        return True
    compiled = {(e.msgctxt, e.msgid): (e.msgstr, tuple(sorted(e.msgstr_plural.items())))
                for e in polib.mofile(str(mo_path))}
    source = {(e.msgctxt, e.msgid): (e.msgstr, tuple(sorted(e.msgstr_plural.items())))
              for e in polib.pofile(str(po_path)).translated_entries()}
    return compiled != source


def main(argv: list[str]) -> int:
    catalogues = sorted(LOCALE_DIR.glob("*/LC_MESSAGES/kata.po"))
    if "--check" in argv:
        old = [str(p.relative_to(LOCALE_DIR)) for p in catalogues if stale(p)]
        if old:
            print(f"not compiled since the last edit: {', '.join(old)}: run python .ci/compile_texts.py")
        return 1 if old else 0
    for po_path in catalogues:
        polib.pofile(str(po_path)).save_as_mofile(str(po_path.with_suffix(".mo")))
        print(f"compiled {po_path.relative_to(LOCALE_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
