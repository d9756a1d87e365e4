"""The numbers a kata's story quotes, measured: ``kata new --check`` trains what the [symptom] names.

It runs loops (the mutant and the reference, as `kata run` trains them), so only an author's check does
it: ``kata list`` reads drafts without running anything (``checker.catalogue.proofs``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from checker.base.errors import UsageProblem
from checker.catalogue.proofs import REASONS, _m, _say
from checker.runs.training import RunFailed, RunSettings, run_files

FlagParser = Callable[[Sequence[str]], RunSettings]
"""`kata run`'s flags (as a kata's [try] gives them) as settings; a bad flag raises UsageProblem. The command
line passes its own parser down (``checker.cli.run.run_settings_of``), so the two can never disagree."""

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


def _printed(value: Any, text: str) -> str:
    """``value`` as `kata run` prints it, to as many decimals as ``text`` has."""
    if not isinstance(value, int | float):
        return str(value)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{value:.{decimals}f}"


QUOTABLE = {
    "epoch": "the epoch (from 1)",
    "lr": "the learning rate that epoch's steps used",
    "train_loss": "the mean training loss over the epoch's examples",
    "val_loss": "the validation loss after the epoch",
    "val_acc": "the validation accuracy after the epoch (0-1)",
    "steps": "the optimizer steps taken in the epoch (blank where the file's fit never calls train_epoch)",
}
"""The columns of `kata run`'s table a story may quote (``[symptom] quotes``), as docs/courses.md lists them."""


def printed_rows(result) -> list[dict]:
    """A run's rows as `kata run` prints them: the history's columns and the epoch's optimizer ``steps``."""
    steps = list(result.steps or [])
    return [row | ({"steps": steps[i]} if i < len(steps) and steps[i] is not None else {})
            for i, row in enumerate(result.history)]


def _quote_settings(kata, symptom: dict, lab, lang: str, parse_flags: FlagParser) -> tuple[dict, list[str]]:
    """The run settings of the kata's [try] flags ("") and the claim's ``other`` flags ("+other"), and what is wrong."""
    flag_sets = {"": tuple(kata.try_args), "+other": tuple(symptom.get("other", ()))}
    out, settings = [], {}
    for suffix, args in flag_sets.items():
        try:
            settings[suffix] = parse_flags(args)
            if "--batch-size" not in args:  # `kata run`'s default: the track's batch size
                settings[suffix] = replace(settings[suffix], batch_size=lab.track.thresholds.batch_size)
        except UsageProblem as exc:
            out.append(_say("try_flags", lang, args=list(args), error=exc.message))
    return settings, out


def _bad_runs(wanted: list[str], lang: str) -> list[str]:
    """A line for each quoted run that is not mutant or reference, with or without +other."""
    out = []
    for run in wanted:
        who, _, extra = run.partition("+")
        if who not in ("mutant", "reference") or extra not in ("", "other"):
            out.append(_say("quote_run", lang, quote=run))
    return out


def _quoted_histories(wanted: list[str], settings: dict, mutant_source: str, reference: str, lab,
                      lang: str) -> tuple[dict[str, list[dict]], list[str]]:
    """The printed rows of every quoted run (trained as `kata run` does), or the line saying a run failed."""
    histories: dict[str, list[dict]] = {}
    for suffix in sorted({("+" + r.partition("+")[2]) if "+" in r else "" for r in wanted}):
        names = [r for r in ("mutant", "reference") if r + suffix in wanted]
        sources = [(mutant_source if r == "mutant" else reference, f"{r}.py") for r in names]
        try:
            for name, result in zip(names, run_files(sources, settings[suffix], lab), strict=True):
                histories[name + suffix] = printed_rows(result)
        except RunFailed as exc:
            return histories, [_say("run_failed", lang, run=" and ".join(names), error=exc.message)]
    return histories, []


def false_quotes(kata, mutant_source: str, reference: str, lab, lang: str = "en", *,
                 parse_flags: FlagParser) -> list[str]:
    """Train what the [symptom] quotes name (the mutant and the reference, with the kata's [try] flags or
    the claim's ``other`` flags), as `kata run` does, and say which quoted number it does not print."""
    symptom = getattr(kata, "symptom", None) or {}
    quotes = [q for q in symptom.get("quotes", []) if isinstance(q, list | tuple) and len(q) == 4]
    if not quotes:
        return []
    settings, out = _quote_settings(kata, symptom, lab, lang, parse_flags)
    if out:
        return out
    wanted = sorted({str(q[0]) for q in quotes})
    out = _bad_runs(wanted, lang)
    if out:
        return out
    histories, out = _quoted_histories(wanted, settings, mutant_source, reference, lab, lang)
    if out:
        return out
    for run, epoch, column, text in quotes:
        rows = [r for r in histories.get(str(run), []) if r.get("epoch") == epoch]
        seen = _printed(rows[0].get(column), str(text)) if rows and column in rows[0] else "nothing"
        if seen != str(text):
            out.append(_say("quote_false", lang, text=text, run=run, column=column, epoch=epoch, seen=seen))
    return out
