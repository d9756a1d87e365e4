"""The catalogue as typed data: one loader for kata and mutant files, drafts, and proofs of kills.

- ``read_toml(path, error)``: a TOML file as a dict, read once per process while it is unchanged
  (keyed by path, size and modification time), any problem raised as ``error`` naming the file;
- ``Field`` / ``take(data, fields, where, error)``: the fields of a table converted to typed values
  (non-empty text, English/Spanish messages, lists of strings, booleans, positive integers), with a
  message naming the file and the field for anything missing, mistyped or unknown. Both
  ``checker.mutation.parse_mutant`` and ``checker.katas.parse_kata`` read through these;
- proofs: ``kata mutants verify`` (and ``kata new --check``) record, per mutant, whether the checks it
  declares kill it, keyed by the mutant's definition, the reference's text and the checker's version,
  in ``<mutants folder>/proofs.json`` (committed for the shipped catalogue, so it is proven out of the
  box; the test suite proves it again). A stale or missing proof is no proof;
- ``draft_reasons(kata, mutants, proofs)``: why a kata is not ready for learners, in plain words (a
  placeholder text, no ``[symptom]``, a quoted number missing from a story, a mutant that is not proven
  killed). A kata with reasons is a *draft*: ``kata list`` and ``kata next`` hide it unless
  ``KATA_DRAFTS=1``; ``kata new --check`` prints the reasons;
- ``false_quotes(kata, ...)``: the numbers a ``[symptom]`` quotes, trained as ``kata run`` trains them
  (``kata new --check`` only: it runs loops, so ``kata list`` does not).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DRAFTS_ENV = "KATA_DRAFTS"
"""Set to 1 to list and open draft katas too (an author trying a kata before it is proven)."""
PROOFS_FILE = "proofs.json"
PLACEHOLDER = "TODO"
SYMPTOM_KINDS = (
    "falls_then_rises", "flat", "stays_above", "same_as_other", "ends_like_other", "lr", "diverges_at",
    "bumpy", "off_grid", "warns", "check_fails",
)
"""The kinds of claim a kata's [symptom] table can make (described in tests/test_kata_stories.py)."""


# --------------------------------------------------------------------------- reading TOML, typed

_CACHE: dict[tuple[str, int, int], dict] = {}


def read_toml(path: Path, error: type[Exception]) -> dict:
    """The file's TOML as a dict (a fresh copy); ``error`` names the file when it cannot be read."""
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in _CACHE:
            _CACHE[key] = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise error(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    return json.loads(json.dumps(_CACHE[key]))


def loads_toml(text: str, path: Path, error: type[Exception]) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


TEXT, BOOL, STRINGS, POSITIVE_INT, MESSAGE, MESSAGES, TABLE, NUMBER, FRACTION, INTS = (
    "text", "bool", "strings", "positive int", "message", "messages", "table", "positive number", "fraction",
    "positive ints")


@dataclass(frozen=True)
class Field:
    """One field of a catalogue file: its name, kind, whether it is required, and what it means."""

    name: str
    kind: str
    required: bool = True
    doc: str = ""


def _convert(value: Any, f: Field, where: str, error: type[Exception]) -> Any:
    from checker.i18n import LANGS, Message

    def bad(expected: str) -> Exception:
        return error(f"{where}: field `{f.name}` must be {expected}, got {value!r}")

    if f.kind == TEXT:
        if not isinstance(value, str) or not value.strip():
            raise bad("a non-empty string")
        return value.strip()
    if f.kind == BOOL:
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if f.kind == POSITIVE_INT:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad("a whole number from 1")
        return value
    if f.kind in (NUMBER, FRACTION):
        if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
            raise bad("a number above 0")
        if f.kind == FRACTION and not value < 1:
            raise bad("a number between 0 and 1")
        return float(value)
    if f.kind == INTS:
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)):
            raise bad("a non-empty list of whole numbers from 1")
        return tuple(value)
    if f.kind == STRINGS:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
            raise bad("a non-empty list of strings")
        return tuple(v.strip() for v in value)
    if f.kind == TABLE:
        if not isinstance(value, dict):
            raise bad("a table")
        return value
    if f.kind in (MESSAGE, MESSAGES):
        items = value if f.kind == MESSAGES else [value]
        if f.kind == MESSAGES and (not isinstance(value, list) or not value):
            raise bad("a non-empty array of tables, each with 'en' and 'es' strings")
        out = []
        for i, item in enumerate(items, start=1):
            at = f"`{f.name}` #{i}" if f.kind == MESSAGES else f"`{f.name}`"
            if not isinstance(item, dict):
                raise error(f"{where}: field {at} must be a table with 'en' and 'es' strings")
            for lang in LANGS:
                if not isinstance(item.get(lang), str) or not item[lang].strip():
                    raise error(f"{where}: field {at}: '{lang}' must be a non-empty string")
            extra = sorted(set(item) - set(LANGS))
            if extra:
                raise error(f"{where}: field {at}: unknown key(s) {', '.join(extra)} (only 'en' and 'es')")
            out.append(Message(en=item["en"].strip(), es=item["es"].strip()))
        return tuple(out) if f.kind == MESSAGES else out[0]
    raise ValueError(f"unknown field kind {f.kind!r}")


def take(
    data: Mapping[str, Any],
    fields: Iterable[Field],
    where: str,
    error: type[Exception],
    *,
    missing_hint: Callable[[Field], str] | None = None,
) -> dict[str, Any]:
    """The values of ``fields`` in ``data``, converted (absent optional fields are None)."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.name not in data or data[f.name] is None:
            if f.required:
                hint = missing_hint(f) if missing_hint else (f" ({f.doc})" if f.doc else "")
                raise error(f"{where}: missing field `{f.name}`{hint}")
            out[f.name] = None
            continue
        out[f.name] = _convert(data[f.name], f, where, error)
    return out


def refuse_unknown(data: Mapping[str, Any], known: Iterable[str], where: str, error: type[Exception]) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise error(f"{where}: unknown field(s) {', '.join(f'`{u}`' for u in unknown)} "
                    f"(known: {', '.join(sorted(known))})")


# --------------------------------------------------------------------------- proofs


def checker_version() -> str:
    from checker import __version__

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

    @property
    def proven(self) -> bool:
        return self.status in ("Killed", "Timeout") and not self.missing


def load_proofs(mutants_dir: Path) -> dict[str, Proof]:
    path = Path(mutants_dir) / PROOFS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {mid: Proof(p["key"], p["status"], tuple(p.get("missing", ()))) for mid, p in raw["proofs"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def record_proofs(mutants_dir: Path, results: Iterable[Any], reference: str) -> Path | None:
    """Add verify's verdicts (``MutantResult``s) to ``proofs.json``, written atomically; None if read-only."""
    path = Path(mutants_dir) / PROOFS_FILE
    proofs = load_proofs(mutants_dir)
    for r in results:
        if r.status in ("Killed", "Timeout", "Survived"):
            proofs[r.mutant.id] = Proof(proof_key(r.mutant, reference), r.status, tuple(r.missing))
    data = {
        "about": "written by `kata mutants verify`: which mutants the checks they declare kill, per "
                 "mutant definition, reference and checker version. Commit it with the mutant files.",
        "proofs": {mid: {"key": p.key, "status": p.status, "missing": list(p.missing)}
                   for mid, p in sorted(proofs.items())},
    }
    try:
        atomic_write(path, json.dumps(data, indent=2) + "\n")
    except OSError:
        return None
    return path


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path`` (never partial)."""
    import tempfile

    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- drafts


def drafts_wanted() -> bool:
    return os.environ.get(DRAFTS_ENV, "").strip().lower() in ("1", "true", "yes")


def _m(en: str, es: str):
    from checker.i18n import Message

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
    "unproven": _m("its mutant {mid} is not proven killed yet (or changed since): run `kata new --check {slug}` "
                   "or `kata mutants verify --only {mid}`",
                   "aún no está probado que las comprobaciones maten su mutante {mid} (o cambió desde entonces): "
                   "ejecuta `kata new --check {slug}` o `kata mutants verify --only {mid}`"),
    "survives": _m("its mutant {mid} survives: every check passes on it, so `kata check` could not tell a fix "
                   "from the broken loop (see `kata mutants verify --only {mid}`)",
                   "su mutante {mid} sobrevive: pasa todas las comprobaciones, así que `kata check` no distinguiría "
                   "un arreglo del bucle roto (mira `kata mutants verify --only {mid}`)"),
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
    if proof is None or proof.key != proof_key(mutant, reference):
        reasons.append(_say("unproven", lang, mid=mid, slug=kata.slug))
    elif proof.status == "Survived":
        reasons.append(_say("survives", lang, mid=mid))
    elif proof.missing:
        reasons.append(_say("missing", lang, mid=mid, checks=", ".join(proof.missing)))
    return reasons


def drafts_of(katas: Iterable[Any], mutants_dir: Path | None = None) -> dict[str, list[str]]:
    """slug -> reasons, for every kata that is a draft (each track's mutants and proofs read once)."""
    from checker.mutation import MutantFileError, load_mutants, reference_source, resolve_dir
    from checker.tracks import get_track

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


# --------------------------------------------------------------------------- the story's numbers, measured

REASONS.update({
    "try_flags": _m("[try] args {args} are not `kata run` flags ({error})",
                    "[try] args {args} no son opciones de `kata run` ({error})"),
    "quote_run": _m("[symptom] quote {quote}: the run must be mutant, reference, mutant+other or reference+other",
                    "[symptom] quote {quote}: la ejecución debe ser mutant, reference, mutant+other o "
                    "reference+other"),
    "quote_false": _m("the story quotes {text} for the {run}'s {column} at epoch {epoch}, but `kata run` prints "
                      "{seen} there",
                      "la historia cita {text} para {column} de {run} en la época {epoch}, pero `kata run` "
                      "imprime {seen} ahí"),
    "run_failed": _m("`kata run` could not train the {run}: {error}", "`kata run` no pudo entrenar {run}: {error}"),
})


def _settings(args: Sequence[str]):
    from checker.cli.run import run_cmd
    from checker.runs import RunSettings

    return RunSettings.from_options(**run_cmd.make_context("run", ["loop.py", *args]).params)


def _printed(value: Any, text: str) -> str:
    """``value`` as `kata run` prints it, to as many decimals as ``text`` has."""
    if not isinstance(value, int | float):
        return str(value)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{value:.{decimals}f}"


def false_quotes(kata, mutant_source: str, reference: str, lab, lang: str = "en") -> list[str]:
    """Train what the [symptom] quotes name (the mutant and the reference, with the kata's [try] flags or
    the claim's ``other`` flags), as `kata run` does, and say which quoted number it does not print."""
    import click

    from checker.runs import RunFailed, run_files

    symptom = getattr(kata, "symptom", None) or {}
    quotes = [q for q in symptom.get("quotes", []) if isinstance(q, list | tuple) and len(q) == 4]
    if not quotes:
        return []
    flag_sets = {"": tuple(kata.try_args), "+other": tuple(symptom.get("other", ()))}
    out, settings = [], {}
    for suffix, args in flag_sets.items():
        try:
            settings[suffix] = _settings(args)
        except click.ClickException as exc:
            out.append(_say("try_flags", lang, args=list(args), error=exc.format_message()))
    if out:
        return out
    histories: dict[str, list[dict]] = {}
    wanted = sorted({str(q[0]) for q in quotes})
    for run in wanted:
        who, _, extra = run.partition("+")
        if who not in ("mutant", "reference") or extra not in ("", "other"):
            out.append(_say("quote_run", lang, quote=run))
    if out:
        return out
    for suffix in sorted({("+" + r.partition("+")[2]) if "+" in r else "" for r in wanted}):
        names = [r for r in ("mutant", "reference") if r + suffix in wanted]
        sources = [(mutant_source if r == "mutant" else reference, f"{r}.py") for r in names]
        try:
            for name, result in zip(names, run_files(sources, settings[suffix], lab), strict=True):
                histories[name + suffix] = result.history
        except RunFailed as exc:
            return [_say("run_failed", lang, run=" and ".join(names), error=exc.message)]
    for run, epoch, column, text in quotes:
        rows = [r for r in histories.get(str(run), []) if r.get("epoch") == epoch]
        seen = _printed(rows[0].get(column), str(text)) if rows and column in rows[0] else "nothing"
        if seen != str(text):
            out.append(_say("quote_false", lang, text=text, run=run, column=column, epoch=epoch, seen=seen))
    return out
