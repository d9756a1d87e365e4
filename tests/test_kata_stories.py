"""Every kata's story is true.

For each kata, its mutant (``checker.mutation.mutant_source``) is trained in the sandbox exactly as
``kata run`` trains it with the kata's ``[try] args``. The test then asserts
- the symptom the story describes (``SYMPTOMS[slug]``, below), and that the reference loop run with
  the same flags does NOT show it;
- every number the story quotes: each quote names the run (mutant or reference, with the kata's
  flags or the symptom's ``other`` flags), the epoch and the column, and gives the text exactly as
  ``kata run``'s table prints it; the text must appear in the English and the Spanish story.

Symptom kinds (each claim is about what ``kata run`` shows, or for faults a loss table cannot show
on this machine, about what ``kata check`` reports):

``falls_then_rises``  column's lowest value is at ``epoch``, and the last epoch is clearly above it.
``flat``              column is the same (to 4 decimals) in every epoch: nothing is learnt.
``stays_above``       column stays above ``value`` from ``from_epoch`` to the end.
``same_as_other``     the run with the kata's flags and the run with the ``other`` flags print the
                      same table (train loss, val loss, val acc to 4 decimals): the flag that differs
                      has no effect.
``ends_like_other``   the last epoch's train loss of the two runs differ by at most ``tol``.
``lr``                the lr column shows these values at these epochs (``lrs``: epoch -> lr).
``bumpy``             column rises at least once, while ``steady`` (another column) is identical to
                      the reference's; the reference's column falls every epoch.
``off_grid``          some val accuracy is not a multiple of ``grid`` (1/50: there are 50 val points).
``raises``            the run stops with an error whose text contains ``error``.
``warns``             ``kata run`` prints a warning containing ``warning``.
``figures``           only the quotes: the mutant prints them, and the reference differs at each
                      of those places (the story compares with the lesson's own table).
``check_fails``       ``kata check``'s ``check`` fails on the mutant and passes on the reference.
"""

from __future__ import annotations

import math
import re

import pytest

from checker.katas import load_katas
from checker.term import fmt

KATAS = load_katas()
ROOT_REFERENCE = "reference"

# slug -> claim. "quotes": (who, epoch, column, text) with who one of "mutant", "reference",
# "mutant+other", "reference+other" (the "+other" runs use the symptom's "other" flags).
SYMPTOMS: dict[str, dict] = {}


def _settings(args: tuple[str, ...]) -> dict:
    """`kata run`'s own option parsing turns the flags into the settings a run uses."""
    from checker.cli.run import run_cmd

    ctx = run_cmd.make_context("run", ["loop.py", *args])
    p = ctx.params
    return {"optimizer": p["optimizer"], "lr": p["lr"], "epochs": p["epochs"], "batch_size": p["batch_size"],
            "scheduler": None if p["scheduler"] == "none" else p["scheduler"], "clip": p["clip"],
            "seed": p["seed"], "device": p["device"]}


def _runs_needed() -> tuple[set, set]:
    histories, checks = set(), set()
    for kata in KATAS:
        sym = SYMPTOMS.get(kata.slug)
        if sym is None:
            continue
        for who in (kata.mutant, ROOT_REFERENCE):
            if sym["kind"] == "check_fails":
                checks.add((who, sym["check"]))
            else:
                histories.add((who, kata.try_args))
                if "other" in sym:
                    histories.add((who, tuple(sym["other"])))
    return histories, checks


@pytest.fixture(scope="module")
def observed(lab, reference_source) -> dict:
    """Every run and check the stories need, in one batch of sandboxed children on both cores."""
    from checker.checks import REGISTRY
    from checker.mutation import mutant_source
    from checker.sandbox import Job, Limits, run_jobs
    from checker.worker import check_target, run_target

    histories, checks = _runs_needed()
    sources = {ROOT_REFERENCE: reference_source}
    for who, _ in histories | checks:
        if who not in sources:
            sources[who] = mutant_source(who)
    jobs = []
    for who, args in sorted(histories):
        settings = _settings(args)
        jobs.append(Job(run_target(sources[who], f"{who}.py", settings, lab),
                        Limits(step_timeout=60.0 + settings["epochs"]), tag=("run", who, args)))
    for who, cid in sorted(checks):
        jobs.append(Job(check_target(sources[who], f"{who}.py", [cid], lab), Limits(), tag=("check", who, cid)))
    results: dict = {}
    for outcome in run_jobs(jobs, workers=2):
        kind, who, what = outcome.job.tag
        events = {e.get("event"): e for e in outcome.events}
        if kind == "run":
            if "history" in events:
                results[(who, what)] = {"history": events["history"]["history"],
                                        "warnings": events["history"]["warnings"], "error": None}
            else:
                error = events.get("raised", {}).get("error") or f"no history: {sorted(events)}"
                results[(who, what)] = {"history": None, "warnings": [], "error": error}
        else:
            measured = events.get("measured")
            if measured is None:
                results[(who, what)] = {"passed": None, "message": str(events.get("raised", sorted(events)))}
            else:
                verdict = REGISTRY[what].judge(measured["measured"])
                results[(who, what)] = {"passed": verdict.passed, "message": verdict.render("en")}
    return results


def _column(history: list[dict], column: str) -> list[float]:
    return [row[column] for row in history]


def _falls_every_epoch(values: list[float]) -> bool:
    return all(b < a for a, b in zip(values, values[1:]))


def _same_table(a: list[dict], b: list[dict]) -> bool:
    cols = ("train_loss", "val_loss", "val_acc")
    return len(a) == len(b) and all(fmt(ra[c]) == fmt(rb[c]) for ra, rb in zip(a, b) for c in cols)


def shows(sym: dict, run: dict, other: dict | None, reference: dict | None) -> tuple[bool, str]:
    """Whether one run shows the symptom; the reason, for the assertion message."""
    kind = sym["kind"]
    if kind == "raises":
        error = run["error"] or ""
        return sym["error"] in error, f"error: {error[-300:]!r}"
    hist = run["history"]
    if hist is None:
        return False, f"the run failed: {run['error'][-300:]}"
    col = sym.get("column", "train_loss")
    values = _column(hist, col)
    if kind == "falls_then_rises":
        lowest = min(range(len(values)), key=values.__getitem__)
        ok = lowest + 1 == sym["epoch"] and values[-1] > values[lowest] + 0.05
        return ok, f"{col}: lowest at epoch {lowest + 1} ({values[lowest]:.4f}), last {values[-1]:.4f}"
    if kind == "flat":
        return len({fmt(v) for v in values}) == 1, f"{col}: {[fmt(v) for v in values]}"
    if kind == "stays_above":
        tail = values[sym["from_epoch"] - 1:]
        return min(tail) > sym["value"], f"{col} from epoch {sym['from_epoch']}: lowest {min(tail):.4f}"
    if kind == "same_as_other":
        return _same_table(hist, other["history"]), "tables compared"
    if kind == "ends_like_other":
        a, b = values[-1], _column(other["history"], col)[-1]
        return abs(a - b) <= sym["tol"], f"last {col}: {a:.4f} vs {b:.4f} with the other flags"
    if kind == "lr":
        lrs = {int(e): hist[int(e) - 1]["lr"] for e in sym["lrs"]}
        ok = all(math.isclose(lrs[int(e)], v, rel_tol=1e-9) for e, v in sym["lrs"].items())
        return ok, f"lr by epoch: {lrs}"
    if kind == "bumpy":
        steady = _column(hist, sym["steady"])
        same = reference is not None and [fmt(v) for v in steady] == [
            fmt(v) for v in _column(reference["history"], sym["steady"])]
        return not _falls_every_epoch(values) and same, f"{col}: {[fmt(v) for v in values]}"
    if kind == "off_grid":
        grid = sym["grid"]
        off = [v for v in values if abs(v / grid - round(v / grid)) > 1e-4]
        return bool(off), f"{col} values off the {grid} grid: {off}"
    if kind == "warns":
        return any(sym["warning"] in w for w in run["warnings"]), f"warnings: {run['warnings']}"
    if kind == "figures":
        return True, "quotes only"
    raise AssertionError(f"unknown symptom kind {kind!r}")


def _cell(run: dict, epoch: int, column: str) -> str:
    value = run["history"][epoch - 1][column]
    return fmt(value, 4)


def test_every_kata_has_a_claim() -> None:
    slugs = {k.slug for k in KATAS}
    assert len(KATAS) >= 22
    assert slugs <= set(SYMPTOMS), f"katas without a symptom claim: {sorted(slugs - set(SYMPTOMS))}"
    assert set(SYMPTOMS) <= slugs, f"claims for no kata: {sorted(set(SYMPTOMS) - slugs)}"


def test_every_mutant_has_a_kata_at_most_once() -> None:
    mutants = [k.mutant for k in KATAS]
    assert len(mutants) == len(set(mutants))


@pytest.mark.parametrize("kata", KATAS, ids=[k.slug for k in KATAS])
def test_story_is_true(kata, observed) -> None:
    sym = SYMPTOMS[kata.slug]
    if sym["kind"] == "check_fails":
        bad, good = observed[(kata.mutant, sym["check"])], observed[(ROOT_REFERENCE, sym["check"])]
        assert bad["passed"] is False, f"{sym['check']} did not fail on {kata.mutant}: {bad['message']}"
        assert good["passed"] is True, f"{sym['check']} did not pass on the reference: {good['message']}"
        for text in sym.get("quotes_text", ()):
            assert text in bad["message"], f"{text!r} not in {bad['message']!r}"
        return
    args = kata.try_args
    other = tuple(sym.get("other", ()))
    runs = {
        "mutant": observed[(kata.mutant, args)],
        "reference": observed[(ROOT_REFERENCE, args)],
    }
    if other:
        runs["mutant+other"] = observed[(kata.mutant, other)]
        runs["reference+other"] = observed[(ROOT_REFERENCE, other)]
    ok, why = shows(sym, runs["mutant"], runs.get("mutant+other"), runs["reference"])
    assert ok, f"{kata.slug}: the mutant does not show the story's symptom ({why})"
    if sym["kind"] != "figures":
        ok, why = shows(sym, runs["reference"], runs.get("reference+other"), runs["reference"])
        assert not ok, f"{kata.slug}: the reference shows the symptom too ({why})"
    else:
        mutant_quotes = [q for q in sym["quotes"] if q[0] == "mutant"]
        assert mutant_quotes, "a 'figures' claim quotes the mutant at least once"
        for _, epoch, column, _text in mutant_quotes:
            assert _cell(runs["reference"], epoch, column) != _cell(runs["mutant"], epoch, column)
    for who, epoch, column, text in sym.get("quotes", ()):
        run = runs[who]
        assert run["history"] is not None, f"{who} run failed: {run['error']}"
        if column == "lr":
            assert math.isclose(run["history"][epoch - 1]["lr"], float(text), rel_tol=1e-9), (who, epoch, text)
        else:
            assert _cell(run, epoch, column) == text, f"{who} epoch {epoch} {column}: story says {text}"


@pytest.mark.parametrize("kata", KATAS, ids=[k.slug for k in KATAS])
def test_quoted_numbers_appear_in_both_stories(kata) -> None:
    sym = SYMPTOMS[kata.slug]
    texts = [q[3] for q in sym.get("quotes", ())] + list(sym.get("quotes_text", ()))
    for text in texts:
        for lang in ("en", "es"):
            story = getattr(kata.story, lang)
            assert re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", story), (
                f"{kata.slug}: the {lang} story does not quote {text}")
