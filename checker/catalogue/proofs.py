"""Proofs of kills and drafts: whether a kata is ready for learners.

(Kata and mutant files are read through ``checker.base.toml``.)

- proofs: ``kata mutants verify`` (and ``kata new --check``) record, per mutant, whether the checks it
  declares kill it, keyed by the mutant's definition, the reference's text and the checker's version,
  in ``<mutants folder>/proofs.json`` (committed for the shipped catalogue, so it is proven out of the
  box; the test suite proves it again). A stale or missing proof is no proof;
- ``draft_reasons(kata, mutants, proofs)``: why a kata is not ready for learners, in plain words (a
  placeholder text, no ``[symptom]``, a quoted number missing from a story, a mutant that is not proven
  killed). A kata with reasons is a *draft*: ``kata list`` and ``kata next`` hide it unless
  ``KATA_DRAFTS=1``; ``kata new --check`` prints the reasons;
- the numbers a ``[symptom]`` quotes are trained and compared by ``checker.author.quotes.false_quotes``
  (``kata new --check`` only: it runs loops, so ``kata list`` does not).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker import __version__
from checker.base.files import atomic_write
from checker.base.i18n import Message
from checker.catalogue.mutants import MutantFileError, load_mutants, reference_source, resolve_dir
from checker.setting.tracks import get_track

DRAFTS_ENV = "KATA_DRAFTS"
"""Set to 1 to list and open draft katas too (an author trying a kata before it is proven)."""
PROOFS_FILE = "proofs.json"
PLACEHOLDER = "TODO"
SYMPTOM_KINDS = (
    "falls_then_rises", "flat", "stays_above", "same_as_other", "ends_like_other", "lr", "diverges_at",
    "bumpy", "off_grid", "warns", "check_fails",
)
"""The kinds of claim a kata's [symptom] table can make (described in tests/test_kata_stories.py)."""


# --------------------------------------------------------------------------- proofs


def checker_version() -> str:
    return __version__


def proof_key(mutant, reference: str) -> str:
    """What a proof is valid for: the mutant's edit and declared killers, the reference, the checker."""
    steps = [
        {"operator": s.operator, "function": s.function, "target": s.target, "args": dict(s.args),
         "every": s.every, "call": getattr(s, "call", None), "occurrence": getattr(s, "occurrence", None)}
        for s in mutant.steps
    ]
    blob = json.dumps({"steps": steps, "killed_by": sorted(mutant.killed_by),
                       "reference": hashlib.sha256(reference.encode()).hexdigest(),
                       "checker": checker_version()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Proof:
    key: str
    status: str
    """The mutant's verify status (Killed, Survived, ...)."""
    missing: tuple[str, ...] = ()
    """Declared checks that did not kill it."""
    killers: tuple[str, ...] | None = None
    """Every check that failed on it when verify ran (declared or not); None in a file written before kata kept
    them. `kata grade --course` warns from these, so its warning agrees with verify."""


KILLING = ("fail", "error", "timeout")
"""A check's statuses that kill a mutant."""


def load_proofs(mutants_dir: Path) -> dict[str, Proof]:
    path = Path(mutants_dir) / PROOFS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {mid: Proof(p["key"], p["status"], tuple(p.get("missing", ())),
                           tuple(p["killers"]) if isinstance(p.get("killers"), list) else None)
                for mid, p in raw["proofs"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def record_proofs(mutants_dir: Path, results: Iterable[Any], reference: str) -> Path | None:
    """Add verify's verdicts (``MutantResult``s) to ``proofs.json``, written atomically; None if read-only."""
    path = Path(mutants_dir) / PROOFS_FILE
    proofs = load_proofs(mutants_dir)
    for r in results:
        if r.status in ("Killed", "Timeout", "Survived"):
            ran = getattr(r, "checks", None) or {}
            killers = tuple(c for c, status in ran.items() if status in KILLING)
            key, before = proof_key(r.mutant, reference), proofs.get(r.mutant.id)
            if before is not None and before.key == key and before.status == r.status and before.killers:
                # the same mutant, reference and checker: a check this run did not run (the declared checks alone,
                # after a run of every check, --all-checks) keeps what it was found to do; one it ran says anew
                kept = tuple(c for c in before.killers if c not in ran or c in killers)
                killers = (*kept, *(c for c in killers if c not in kept))
            proofs[r.mutant.id] = Proof(key, r.status, tuple(r.missing), killers)
    data = {
        "about": "written by `kata mutants verify`: which mutants the checks they declare kill, per "
                 "mutant definition, reference and checker version. Commit it with the mutant files.",
        "proofs": {mid: {"key": p.key, "status": p.status, "missing": list(p.missing),
                         **({"killers": list(p.killers)} if p.killers is not None else {})}
                   for mid, p in sorted(proofs.items())},
    }
    try:
        atomic_write(path, json.dumps(data, indent=2) + "\n")
    except OSError:
        return None
    return path


# --------------------------------------------------------------------------- drafts


def drafts_wanted() -> bool:
    return os.environ.get(DRAFTS_ENV, "").strip().lower() in ("1", "true", "yes")


def _m(en: str, es: str) -> Message:
    return Message(en=en, es=es)


REASONS = {
    "placeholder": _m("{label} is still a placeholder: {text}", "{label} sigue siendo un texto provisional: {text}"),
    "no_symptom": _m(
        "it has no [symptom] table: state what `kata run` shows with its [try] flags, and every number the "
        "story quotes (CONTRIBUTING.md, step 5)",
        "no tiene tabla [symptom]: indica lo que muestra `kata run` con sus opciones [try] y cada número que "
        "cita la historia (CONTRIBUTING.md, paso 5)"),
    "kind": _m("[symptom] kind {kind!r} is not one of: {kinds}", "[symptom] kind {kind!r} no es ninguno de: {kinds}"),
    "quote_shape": _m("[symptom] quotes must be [run, epoch, column, text] lists",
                      "las quotes de [symptom] deben ser listas [run, epoch, column, text]"),
    "no_quote": _m("[symptom] quotes no number: give at least one number the story quotes, as `kata run` prints it",
                   "[symptom] no cita ningún número: da al menos uno de los que cita la historia, tal como lo "
                   "imprime `kata run`"),
    "unquoted": _m("the {story_lang} story does not quote {text}, which [symptom] says it does",
                   "la historia en '{story_lang}' no cita {text}, aunque [symptom] dice que sí"),
    "hints": _m("it has {n} hint; give 2 or 3, from vague to precise",
                "tiene {n} pista; da 2 o 3, de vaga a precisa"),
    "no_mutant": _m("its mutant {mid!r} does not exist (no mutants/{mid}.toml)",
                    "su mutante {mid!r} no existe (no hay mutants/{mid}.toml)"),
    "unproven": _m("its mutant {mid} is not proven killed yet (or changed since): run `kata new --check {slug}"
                   "{on_track}` or `kata mutants verify --only {mid}{on_track}`",
                   "aún no está probado que las comprobaciones maten su mutante {mid} (o cambió desde entonces): "
                   "ejecuta `kata new --check {slug}{on_track}` o `kata mutants verify --only {mid}{on_track}`"),
    "survives": _m("its mutant {mid} survives: every check passes on it, so `kata check` could not tell a fix "
                   "from the broken loop (see `kata mutants verify --only {mid}{on_track}`)",
                   "su mutante {mid} sobrevive: pasa todas las comprobaciones, así que `kata check` no distinguiría "
                   "un arreglo del bucle roto (mira `kata mutants verify --only {mid}{on_track}`)"),
    "missing": _m("its mutant {mid} is not killed by {checks}, which it declares in killed_by",
                  "su mutante {mid} no lo matan {checks}, que declara en killed_by"),
    "unreadable": _m("the mutants cannot be read: {error}", "no se pueden leer los mutantes: {error}"),
}
"""Why a kata is a draft, in English and Spanish (instructors read them in `kata new --check`)."""


def _say(key: str, lang: str, **params: Any) -> str:
    return REASONS[key].render(lang, **params)


def _placeholders(where: str, texts: Mapping[str, Any], lang: str = "en") -> list[str]:
    out = []
    for name, value in texts.items():
        if value is None:
            continue
        parts = {"en": value.en, "es": value.es} if hasattr(value, "en") else {"": value}
        for text_lang, text in parts.items():
            if PLACEHOLDER in str(text):
                label = f"{where}{name} ({text_lang})" if text_lang else f"{where}{name}"
                out.append(_say("placeholder", lang, label=label, text=str(text).strip().splitlines()[0][:70]))
    return out


def symptom_problems(kata, lang: str = "en") -> list[str]:
    """What is missing or inconsistent in the kata's [symptom] claim, read without running anything."""
    symptom = getattr(kata, "symptom", None)
    if not symptom:
        return [_say("no_symptom", lang)]
    out = []
    kind = symptom.get("kind")
    if kind not in SYMPTOM_KINDS:
        out.append(_say("kind", lang, kind=kind, kinds=", ".join(SYMPTOM_KINDS)))
    quotes = symptom.get("quotes", [])
    texts = [str(q[3]) for q in quotes if isinstance(q, list | tuple) and len(q) == 4]
    if len(texts) != len(quotes):
        out.append(_say("quote_shape", lang))
    texts += [str(t) for t in symptom.get("quotes_text", [])]
    if not texts:
        out.append(_say("no_quote", lang))
    for text in texts:
        for story_lang in ("en", "es"):
            story = getattr(kata.story, story_lang)
            if not re.search(rf"(?<![\d.]){re.escape(text)}(?!\d)", story):
                out.append(_say("unquoted", lang, story_lang=story_lang, text=text))
    return out


def draft_reasons(kata, mutants: Mapping[str, Any], proofs: Mapping[str, Proof], reference: str,
                  lang: str = "en") -> list[str]:
    """Every reason ``kata`` is not ready for learners, in plain words; [] when it is."""
    texts = {"[title]": kata.title, "[story]": kata.story, "[read]": kata.read}
    texts.update({f"[[hints]] #{i}": h for i, h in enumerate(kata.hints, start=1)})
    reasons = _placeholders("", texts, lang)
    mid = getattr(kata, "mutant", None)
    if not mid or getattr(kata, "practice", None):  # a practice kata: no broken loop, no claim to run
        return reasons
    if len(kata.hints) < 2:
        reasons.append(_say("hints", lang, n=len(kata.hints)))
    reasons += symptom_problems(kata, lang)
    mutant = mutants.get(mid)
    if mutant is None:
        reasons.append(_say("no_mutant", lang, mid=mid))
        return reasons
    texts = {"title": mutant.title, "description": mutant.description, "documented_in": mutant.documented_in,
             "teaches": getattr(mutant, "teaches", None)}
    reasons += _placeholders(f"mutant {mid}: ", texts, lang)
    proof = proofs.get(mid)
    track = getattr(kata, "track", None)
    on_track = f" --track {track}" if isinstance(track, str) and track else ""
    if proof is None or proof.key != proof_key(mutant, reference):
        reasons.append(_say("unproven", lang, mid=mid, slug=kata.slug, on_track=on_track))
    elif proof.status == "Survived":
        reasons.append(_say("survives", lang, mid=mid, on_track=on_track))
    elif proof.missing:
        reasons.append(_say("missing", lang, mid=mid, checks=", ".join(proof.missing)))
    return reasons


def drafts_of(katas: Iterable[Any], mutants_dir: Path | None = None) -> dict[str, list[str]]:
    """slug -> reasons, for every kata that is a draft (each track's mutants and proofs read once)."""
    by_track: dict[str, list[Any]] = {}
    for kata in katas:
        by_track.setdefault(getattr(kata, "track", "moons"), []).append(kata)
    out = {}
    for track_id, group in by_track.items():
        track = get_track(track_id)
        folder = resolve_dir(mutants_dir, track)
        try:
            mutants = load_mutants(folder, check_operators=False)
        except MutantFileError as exc:
            out.update({k.slug: [_say("unreadable", "en", error=exc)] for k in group})
            continue
        proofs = load_proofs(folder)
        reference = reference_source(track)
        for kata in group:
            reasons = draft_reasons(kata, mutants, proofs, reference)
            if reasons:
                out[kata.slug] = reasons
    return out


def without_drafts(katas: list[Any]) -> list[Any]:
    """``katas`` less the drafts, unless ``KATA_DRAFTS=1`` asks for them."""
    if drafts_wanted():
        return katas
    drafts = drafts_of(katas)
    return [k for k in katas if k.slug not in drafts]
