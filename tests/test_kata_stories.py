"""Every kata's story is true.

For each kata, its mutant (``checker.catalogue.mutants.mutant_source``) is trained in the sandbox exactly as
``kata run`` trains it with the kata's ``[try] args``. The test then asserts
- the symptom the story describes (the kata's ``[symptom]`` table), and that the reference loop run
  with the same flags does NOT show it;
- every number the story quotes: each quote names the run (the mutant or the reference, with the
  kata's flags or with the symptom's ``other`` flags), the epoch and the column, and gives the text as
  ``kata run``'s table shows it (to as many decimals as the text has); the text must appear in both
  the English and the Spanish story.

Symptom kinds (each is a claim about what ``kata run`` shows; ``check_fails`` is for faults that no
loss table of the lesson's MLP on a CPU can show, where the story sends the learner to ``kata check``):

``falls_then_rises``  the column's lowest value is at ``epoch`` and the last epoch is clearly above it.
``flat``              the column is the same (to 4 decimals) in every epoch.
``stays_above``       the column stays above ``value`` from ``from_epoch`` to the end.
``same_as_other``     the kata's flags and the ``other`` flags print the same table (train loss, val loss,
                      val acc to 4 decimals): the flag that differs has no effect.
``ends_like_other``   the last train loss with the kata's flags and with the ``other`` flags differ by at
                      most ``tol``.
``lr``                the lr column shows ``lrs`` (epoch -> lr).
``diverges_at``       the table equals the reference's (the lesson's) before ``epoch`` and differs at it.
``bumpy``             the column rises at least once while ``steady`` (another column) equals the
                      reference's; the reference's column falls every epoch.
``off_grid``          some value of the column is not a multiple of ``grid``.
``warns``             ``kata run`` prints a warning containing ``warning``.
``check_fails``       the table equals the lesson's, and ``kata check``'s ``check`` fails on the mutant
                      (its message containing every ``quotes_text``) while passing on the reference. With
                      ``raises``, the mutant's ``kata run`` stops with an error containing that text instead
                      of printing a table (the reference's runs as usual).

Every kata is run on its own track (``kata run --track``): its mutant, its reference, its setting.
"""

from __future__ import annotations

import math
import re

import pytest

from checker.base.term import fmt
from checker.catalogue.katas import load_katas
from checker.checks.base import judging
from checker.setting.tracks import get_track

KATAS = [k for k in load_katas() if k.practice is None]  # practice katas break no loop: tests/test_practice.py
REF = "reference"


def _claim(raw: dict) -> dict:
    """A kata's [symptom] table as the checks below read it (quotes as tuples, lr epochs as ints)."""
    claim = dict(raw)
    claim["quotes"] = [tuple(q) for q in raw.get("quotes", [])]
    if "lrs" in raw:
        claim["lrs"] = {int(epoch): lr for epoch, lr in raw["lrs"].items()}
    return claim


# slug -> claim, from each kata's [symptom] table. "quotes": (run, epoch, column, text) where run is
# "mutant", "reference", "mutant+other" or "reference+other" (the "+other" runs use the claim's "other" flags).
SYMPTOMS: dict[str, dict] = {k.slug: _claim(k.symptom) for k in KATAS if k.symptom}


def _settings(args: tuple[str, ...]):
    """The settings `kata run` would train with, from its own option parsing of the flags."""
    from checker.cli.run import run_cmd
    from checker.runs.training import RunSettings

    return RunSettings.from_options(**run_cmd.make_context("run", ["loop.py", *args]).params)


def _needed() -> tuple[set, set]:
    """(track, who, flags) runs and (track, who, check id) checks the stories need."""
    runs, checks = set(), set()
    for kata in KATAS:
        sym = SYMPTOMS.get(kata.slug)
        if sym is None:
            continue
        for who in (kata.mutant, REF):
            runs.add((kata.track, who, kata.try_args))
            if "other" in sym:
                runs.add((kata.track, who, tuple(sym["other"])))
            if sym["kind"] == "check_fails":
                checks.add((kata.track, who, sym["check"]))
    return runs, checks


@pytest.fixture(scope="module")
def observed(lab) -> dict:
    """Every run and check the stories need, each on its kata's track, as one batch of sandboxed children."""
    from checker.catalogue.mutants import mutant_source, reference_source
    from checker.checks import REGISTRY
    from checker.sandbox.jobs import Job, Limits, run_jobs
    from checker.sandbox.zygote import Task
    from checker.setting.lab import Lab

    runs, checks = _needed()
    labs = {"moons": lab}
    sources = {}
    for track, who, _ in runs | checks:
        if track not in labs:
            labs[track] = Lab(track=track).prepare()
        if (track, who) not in sources:
            setting = get_track(track)
            sources[track, who] = reference_source(setting) if who == REF else mutant_source(who, track=setting)
    jobs = []
    for track, who, args in sorted(runs, key=lambda r: -_settings(r[2]).epochs):  # longest first
        settings = _settings(args)
        jobs.append(Job(Task("checker.engine.worker:run_target",
                             (sources[track, who], f"{who}.py", settings, labs[track])),
                        Limits(step_timeout=60.0 + settings.epochs), tag=("run", track, who, args)))
    for track, who, cid in sorted(checks):
        jobs.append(Job(Task("checker.engine.worker:check_target",
                             (sources[track, who], f"{who}.py", [cid], labs[track])),
                        Limits(),
                        tag=("check", track, who, cid)))
    results: dict = {}
    for outcome in run_jobs(jobs, workers=2):
        kind, track, who, what = outcome.job.tag
        events = {str(e.kind): e for e in outcome.events}
        if kind == "run":
            hist = events.get("history")
            raised = events.get("raised")
            error = None if hist else (raised.error if raised else f"no history ({sorted(events)})")
            results[(track, who, what)] = {"history": hist.history if hist else None,
                                           "warnings": list(hist.warnings) if hist else [], "error": error}
        elif "measured" in events:
            with judging(get_track(track)):
                verdict = REGISTRY[what].judge(events["measured"].measured)
            results[(track, who, what)] = {"passed": verdict.passed, "message": verdict.render("en")}
        else:
            results[(track, who, what)] = {"passed": None, "message": f"not measured: {events}"}
    return results


def _col(history: list[dict], column: str) -> list[float]:
    return [row[column] for row in history]


def _falls_every_epoch(values: list[float]) -> bool:
    return all(b < a for a, b in zip(values, values[1:], strict=False))


def _same_rows(a: dict, b: dict) -> bool:
    cols = ("train_loss", "val_loss", "val_acc")
    return a["epoch"] == b["epoch"] and all(fmt(a[c]) == fmt(b[c]) for c in cols)


def _same_table(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(_same_rows(ra, rb) for ra, rb in zip(a, b, strict=True))


def shows(sym: dict, run: dict, other: dict | None, reference: dict) -> tuple[bool, str]:
    """Whether one run shows the claimed symptom, and what was seen (for the assertion message)."""
    kind, hist = sym["kind"], run["history"]
    if hist is None:
        return False, f"the run failed: {run['error'][-400:]}"
    col = sym.get("column", "train_loss")
    values = _col(hist, col)
    shown = [fmt(v) for v in values]
    if kind == "falls_then_rises":
        low = min(range(len(values)), key=values.__getitem__)
        return low + 1 == sym["epoch"] and values[-1] > values[low] + 0.05, f"{col}: {shown}"
    if kind == "flat":
        return len(set(shown)) == 1, f"{col}: {shown}"
    if kind == "stays_above":
        return min(values[sym["from_epoch"] - 1:]) > sym["value"], f"{col}: {shown}"
    if kind == "same_as_other":
        return _same_table(hist, other["history"]), "the tables with both sets of flags compared"
    if kind == "ends_like_other":
        a, b = values[-1], _col(other["history"], col)[-1]
        return abs(a - b) <= sym["tol"], f"last {col} {a:.4f}, with the other flags {b:.4f}"
    if kind == "lr":
        lrs = {e: hist[e - 1]["lr"] for e in sym["lrs"]}
        return all(math.isclose(lrs[e], v, rel_tol=1e-9) for e, v in sym["lrs"].items()), f"lr: {lrs}"
    if kind == "diverges_at":
        ref = reference["history"]
        pairs = enumerate(zip(hist, ref, strict=True), start=1)
        first = next((epoch for epoch, (a, b) in pairs if not _same_rows(a, b)), None)
        return first == sym["epoch"], f"first epoch that differs from the reference: {first}"
    if kind == "bumpy":
        steady = [fmt(v) for v in _col(hist, sym["steady"])]
        same = steady == [fmt(v) for v in _col(reference["history"], sym["steady"])]
        seen = f"{col}: {shown}; {sym['steady']} as the reference's: {same}"
        return not _falls_every_epoch(values) and same, seen
    if kind == "off_grid":
        off = [v for v in values if abs(v / sym["grid"] - round(v / sym["grid"])) > 1e-4]
        return bool(off), f"{col} off the {sym['grid']} grid: {off}"
    if kind == "warns":
        return any(sym["warning"] in w for w in run["warnings"]), f"warnings: {run['warnings']}"
    raise AssertionError(f"unknown symptom kind {kind!r}")


def _as_printed(value: float, text: str) -> str:
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{value:.{decimals}f}"


def test_catalogue_has_a_claim_per_kata() -> None:
    slugs = {k.slug for k in KATAS}
    assert len(KATAS) >= 22
    assert slugs <= set(SYMPTOMS), f"katas without a symptom claim: {sorted(slugs - set(SYMPTOMS))}"
    assert set(SYMPTOMS) <= slugs, f"claims for no kata: {sorted(set(SYMPTOMS) - slugs)}"
    mutants = [(k.track, k.mutant) for k in KATAS]
    assert len(mutants) == len(set(mutants)), "two katas of one track share a mutant"


@pytest.mark.parametrize("kata", KATAS, ids=[k.slug for k in KATAS])
def test_story_is_true(kata, observed) -> None:
    sym = SYMPTOMS[kata.slug]
    t = kata.track
    runs = {"mutant": observed[(t, kata.mutant, kata.try_args)], "reference": observed[(t, REF, kata.try_args)]}
    if "other" in sym:
        runs["mutant+other"] = observed[(t, kata.mutant, tuple(sym["other"]))]
        runs["reference+other"] = observed[(t, REF, tuple(sym["other"]))]
    raises = sym.get("raises")
    if raises:  # the mutant's run stops with this error instead of printing a table
        error = runs.pop("mutant")["error"] or ""
        assert raises in error, f"{kata.slug}: the mutant's run should stop with {raises!r}; it gave: {error[-400:]}"
    for name, run in runs.items():
        assert run["history"] is not None, f"{kata.slug}: the {name} run failed: {run['error']}"
    if sym["kind"] == "check_fails":
        assert raises or _same_table(runs["mutant"]["history"], runs["reference"]["history"]), (
            f"{kata.slug}: the story says the table is the lesson's, but it differs")
        bad, good = observed[(t, kata.mutant, sym["check"])], observed[(t, REF, sym["check"])]
        assert bad["passed"] is False, f"{sym['check']} does not fail on {kata.mutant}: {bad['message']}"
        assert good["passed"] is True, f"{sym['check']} does not pass on the reference: {good['message']}"
        for text in sym.get("quotes_text", ()):
            assert re.search(rf"(?<![\d.]){re.escape(text)}(?!\d)", bad["message"]), (
                f"{kata.slug}: the story quotes {text} from {sym['check']}, which says: {bad['message']}")
    else:
        ok, seen = shows(sym, runs["mutant"], runs.get("mutant+other"), runs["reference"])
        assert ok, f"{kata.slug}: the mutant does not show the story's symptom ({seen})"
        ok, seen = shows(sym, runs["reference"], runs.get("reference+other"), runs["reference"])
        assert not ok, f"{kata.slug}: the reference shows the symptom too ({seen})"
    for who, epoch, column, text in sym.get("quotes", ()):
        value = runs[who]["history"][epoch - 1][column]
        assert _as_printed(value, text) == text, (
            f"{kata.slug}: {who}, epoch {epoch}, {column} is {value!r}; the story says {text}")


@pytest.mark.parametrize("kata", KATAS, ids=[k.slug for k in KATAS])
def test_quoted_numbers_are_in_both_stories(kata) -> None:
    sym = SYMPTOMS[kata.slug]
    texts = [q[3] for q in sym.get("quotes", ())] + list(sym.get("quotes_text", ()))
    assert texts, f"{kata.slug}: a story quotes at least one number"
    for text in texts:
        for lang in ("en", "es"):
            story = getattr(kata.story, lang)
            assert re.search(rf"(?<![\d.]){re.escape(text)}(?!\d)", story), (
                f"{kata.slug}: the {lang} story does not quote {text}")


def test_identical_symptoms_are_spread_apart(observed) -> None:
    """Katas whose table shows one frozen train loss (the same value in every row) are never back to back:
    at least two other katas sit between any two that print the same frozen value."""
    order = load_katas()
    frozen: dict[tuple[str, str], list[int]] = {}
    for position, kata in enumerate(order):
        if kata.practice is not None:
            continue
        history = observed[(kata.track, kata.mutant, kata.try_args)]["history"] or []
        shown = {fmt(row["train_loss"]) for row in history}
        if len(shown) == 1:
            frozen.setdefault((kata.track, shown.pop()), []).append(position)
    assert frozen, "no kata shows a frozen train loss: the test has nothing to check"
    for value, positions in frozen.items():
        gaps = [b - a for a, b in zip(positions, positions[1:], strict=False)]
        assert all(gap >= 3 for gap in gaps), (
            f"katas at positions {[p + 1 for p in positions]} all show {value} in every row: spread them apart")


def test_catalogue_doc_lists_every_kata() -> None:
    """docs/katas.md is written by hand: its table must list every kata, once, as the catalogue has it."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "katas.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if re.match(r"^\| \d{3} \|", line)]
    listed = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        listed.append((int(cells[0]), cells[1].strip("`"), cells[2], cells[3].strip("`")))
    expected = [(k.number, k.slug, k.title.en, k.mutant) for k in load_katas(track="moons")]
    assert listed == expected


@pytest.mark.parametrize("track", ["three-classes", "data-pipeline"])
def test_each_tracks_catalogue_page_is_up_to_date(track) -> None:
    from pathlib import Path

    from checker.author.authoring import catalogue_markdown

    page = Path(__file__).resolve().parent.parent / "docs" / f"katas-{track}.md"
    assert page.read_text(encoding="utf-8") == catalogue_markdown(track=get_track(track)), (
        f"run: kata mutants --track {track} doc -o docs/katas-{track}.md")


@pytest.mark.parametrize("track", sorted({k.track for k in KATAS}))
def test_every_starter_fails_kata_check_for_its_mutants_reasons(track, lab) -> None:
    """The file a learner gets (the mutant without comments, with the kata header) fails the battery of its
    track, on at least the checks its mutant declares; the reference passes it (the learner's goal exists)."""
    from checker.catalogue.katas import starter_source
    from checker.catalogue.mutants import load_mutants, reference_source
    from checker.engine.grading import Submission, grade
    from checker.setting.lab import Lab

    setting = get_track(track)
    lab = lab if track == "moons" else Lab(track=setting).prepare()
    mutants = load_mutants(setting.mutants_dir)
    katas = [k for k in KATAS if k.track == track]
    # each starter graded on the checks its mutant declares (the whole battery of each is verify's work)
    subs = [Submission(starter_source(k), f"{k.slug}.py", check_ids=list(mutants[k.mutant].killed_by))
            for k in katas]
    reports = grade([Submission(reference_source(setting), "loop.py"), *subs], lab, workers=2, split=1)
    assert reports[0].passed, [c.id for c in reports[0].checks if not c.passed]
    for kata, report in zip(katas, reports[1:], strict=True):
        assert report.error is None, f"{kata.slug}: {report.error}"
        failing = {c.id for c in report.checks if not c.passed}
        missed = set(mutants[kata.mutant].killed_by) - failing
        assert not missed, f"{kata.slug}: the starter passes {sorted(missed)}, which should catch {kata.mutant}"
