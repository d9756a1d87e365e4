"""Where kata's data folders live: beside the package in a checkout, inside it in a wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def _data_dir(name: str) -> Path:
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    return _PACKAGE / "_data" / name


KATAS_DIR = _data_dir("katas")
MUTANTS_DIR = _data_dir("mutants")
SOLUTIONS_DIR = _data_dir("solutions")
REFERENCE = SOLUTIONS_DIR / "loop.py"
TRACKS_DIR = _data_dir("tracks")
