"""Every kata's story is true.

For each kata, its mutant (``checker.mutation.mutant_source``) is trained in the sandbox exactly as
``kata run`` trains it with the kata's ``[try] args``. The test then asserts
- the symptom the story describes (``SYMPTOMS[slug]`` below), and that the reference loop run with the
  same flags does NOT show it;
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
                      (its message containing every ``quotes_text``) while passing on the reference.
"""

from __future__ import annotations

import math
import re

import pytest

from checker.katas import load_katas
from checker.term import fmt

KATAS = load_katas()
REF = "reference"


def SGD(lr: float, epochs: int) -> list[str]:  # noqa: N802  (reads like the constant below)
    return ["--optimizer", "sgd", "--lr", str(lr), "--epochs", str(epochs)]


SGD10 = SGD(0.1, 10)

# slug -> claim. "quotes": (run, epoch, column, text) where run is "mutant", "reference",
# "mutant+other" or "reference+other" (the "+other" runs use the claim's "other" flags).
SYMPTOMS: dict[str, dict] = {
    # --- batches and the five steps ---
    "not-quite-the-lesson": dict(kind="diverges_at", epoch=1, quotes=[
        ("mutant", 1, "val_loss", "0.6726"), ("reference", 1, "val_loss", "0.6511"),
        ("mutant", 1, "val_acc", "0.6200"), ("reference", 1, "val_acc", "0.6400"),
        ("mutant", 10, "val_acc", "0.8400"), ("reference", 10, "val_acc", "0.8800")]),
    "two-batches-or-one": dict(kind="ends_like_other", tol=0.01, other=SGD10 + ["--batch-size", "150"],
                               quotes=[
        ("reference", 10, "train_loss", "0.5461"), ("reference+other", 10, "train_loss", "0.6099"),
        ("mutant", 10, "train_loss", "0.6082"), ("mutant+other", 10, "train_loss", "0.6099")]),
    "falls-then-rises": dict(kind="falls_then_rises", epoch=5, quotes=[
        ("mutant", 1, "train_loss", "0.6794"), ("reference", 1, "train_loss", "0.7108"),
        ("mutant", 5, "train_loss", "0.3885"), ("mutant", 10, "train_loss", "0.5111"),
        ("mutant", 6, "val_acc", "0.9200"), ("mutant", 10, "val_acc", "0.7000"),
        ("reference", 10, "train_loss", "0.4247")]),
    "too-good-to-be-true": dict(kind="diverges_at", epoch=1, quotes=[
        ("mutant", 1, "train_loss", "0.6794"), ("reference", 1, "train_loss", "0.7108"),
        ("mutant", 10, "train_loss", "0.3089"), ("reference", 10, "train_loss", "0.4247"),
        ("mutant", 10, "val_acc", "0.9000"), ("reference", 10, "val_acc", "0.8800")]),
    "frozen-table": dict(kind="flat", quotes=[
        ("mutant", 1, "train_loss", "0.7520"), ("mutant", 10, "train_loss", "0.7520"),
        ("mutant", 10, "val_loss", "0.7528"), ("mutant", 10, "val_acc", "0.5000"),
        ("reference", 10, "train_loss", "0.4247")]),
    "not-even-lr-one": dict(kind="flat", quotes=[
        ("reference", 1, "train_loss", "0.5835"), ("reference", 10, "train_loss", "0.2712"),
        ("mutant", 1, "train_loss", "0.7520"), ("mutant", 10, "train_loss", "0.7520"),
        ("mutant", 10, "val_acc", "0.5000")]),
    "adam-stands-still": dict(kind="flat", quotes=[
        ("mutant", 1, "train_loss", "0.7520"), ("mutant", 10, "train_loss", "0.7520"),
        ("mutant", 10, "val_acc", "0.5000"),
        ("reference", 1, "train_loss", "0.7111"), ("reference", 10, "train_loss", "0.3356")]),
    "small-batches-no-faster": dict(kind="ends_like_other", tol=0.01, other=SGD10 + ["--batch-size", "150"],
                                    quotes=[
        ("reference", 10, "train_loss", "0.3048"), ("reference+other", 10, "train_loss", "0.6099"),
        ("mutant", 10, "train_loss", "0.6116"), ("mutant+other", 10, "train_loss", "0.6099"),
        ("mutant", 1, "train_loss", "0.7520"), ("reference", 1, "train_loss", "0.6297")]),
    # --- overfitting one batch ---
    "twenty-epochs-standing-still": dict(kind="flat", quotes=[
        ("mutant", 1, "train_loss", "0.7520"), ("mutant", 20, "train_loss", "0.7520"),
        ("mutant", 20, "val_loss", "0.7528"), ("mutant", 20, "val_acc", "0.5000"),
        ("reference", 1, "train_loss", "0.6262"), ("reference", 20, "train_loss", "0.2633"),
        ("mutant", 20, "lr", "0.5")]),
    "loss-floor": dict(kind="stays_above", value=0.35, from_epoch=50, quotes=[
        ("mutant", 100, "val_loss", "0.1117"), ("mutant", 100, "val_acc", "0.9400"),
        ("reference", 100, "val_loss", "0.1053"), ("reference", 100, "val_acc", "0.9600"),
        ("mutant", 100, "train_loss", "0.3553"), ("reference", 100, "train_loss", "0.1088")]),
    "runs-clean-learns-nothing": dict(kind="flat", quotes=[
        ("mutant", 1, "train_loss", "0.7520"), ("mutant", 30, "train_loss", "0.7520"),
        ("mutant", 30, "val_acc", "0.5000"), ("reference", 30, "train_loss", "0.2350")]),
    # --- optimizer and lr ---
    "every-lr-alike": dict(kind="same_as_other", other=SGD(0.01, 10), quotes=[
        ("mutant", 10, "train_loss", "0.7400"), ("mutant+other", 10, "train_loss", "0.7400"),
        ("reference+other", 10, "train_loss", "0.6607"), ("reference", 10, "train_loss", "0.2712"),
        ("mutant", 1, "lr", "0.001000"), ("mutant+other", 1, "lr", "0.001000")]),
    # --- schedules ---
    "schedule-in-a-hurry": dict(kind="lr", lrs={3: 0.5, 5: 0.25}, quotes=[
        ("mutant", 3, "lr", "0.5"), ("mutant", 5, "lr", "0.25"), ("mutant", 21, "lr", "0.000977"),
        ("mutant", 21, "train_loss", "0.2921"), ("mutant", 30, "train_loss", "0.2921"),
        ("reference", 10, "lr", "1.0"), ("reference", 11, "lr", "0.5"),
        ("reference", 30, "train_loss", "0.1941")]),
    "cosine-that-stays-flat": dict(kind="lr", lrs={16: 3.0, 30: 3.0}, quotes=[
        ("mutant", 30, "lr", "3.0"), ("mutant", 27, "val_loss", "0.1661"),
        ("mutant", 29, "val_loss", "0.4125"),
        ("mutant", 30, "val_loss", "0.1402"), ("reference", 16, "lr", "1.5"),
        ("reference", 30, "lr", "0.008217"), ("reference", 29, "val_loss", "0.1589"),
        ("reference", 30, "val_loss", "0.1589")]),
    "nine-good-epochs": dict(kind="diverges_at", epoch=10, quotes=[
        ("mutant", 9, "train_loss", "0.2801"), ("reference", 9, "train_loss", "0.2801"),
        ("mutant", 10, "lr", "1.0"), ("mutant", 10, "train_loss", "0.2754"),
        ("reference", 10, "train_loss", "0.2712"), ("mutant", 30, "train_loss", "0.2011"),
        ("reference", 30, "train_loss", "0.1941")]),
    "lr-column-ahead": dict(kind="lr", lrs={10: 0.5, 20: 0.25, 30: 0.125}, quotes=[
        ("mutant", 10, "lr", "0.5"), ("mutant", 20, "lr", "0.25"), ("mutant", 30, "lr", "0.125"),
        ("mutant", 10, "train_loss", "0.2712"), ("reference", 10, "train_loss", "0.2712"),
        ("mutant", 30, "train_loss", "0.1941"), ("reference", 30, "train_loss", "0.1941")]),
    # --- clipping ---
    "clip-that-clips-nothing": dict(kind="same_as_other", other=SGD10, quotes=[
        ("mutant", 10, "train_loss", "0.4247"), ("mutant+other", 10, "train_loss", "0.4247"),
        ("reference", 10, "train_loss", "0.6535")]),
    "clipping-changes-nothing": dict(kind="same_as_other", other=SGD(1.0, 10), quotes=[
        ("mutant+other", 3, "train_loss", "0.3382"), ("mutant+other", 4, "train_loss", "0.3457"),
        ("mutant+other", 2, "val_loss", "0.3055"), ("mutant+other", 3, "val_loss", "0.4658"),
        ("mutant", 4, "train_loss", "0.3457"),
        ("reference", 1, "train_loss", "0.6763"), ("reference", 10, "train_loss", "0.2949")]),
    # --- validation and modes (the lesson's MLP cannot show the first four: the stories use kata check) ---
    "perfect-table-failing-check": dict(kind="check_fails", check="modes.train", quotes_text=["15"], quotes=[
        ("mutant", 1, "train_loss", "0.7108"), ("mutant", 10, "train_loss", "0.4247")]),
    "there-but-not-working": dict(kind="check_fails", check="modes.train", quotes_text=["15"], quotes=[
        ("mutant", 1, "train_loss", "0.7108"), ("mutant", 10, "train_loss", "0.4247")]),
    "validation-changes-its-mind": dict(kind="check_fails", check="modes.eval", quotes=[
        ("mutant", 10, "val_loss", "0.3885"), ("mutant", 10, "val_acc", "0.8800")]),
    "heavy-validation": dict(kind="check_fails", check="modes.eval", quotes=[
        ("mutant", 10, "val_loss", "0.3885"), ("mutant", 10, "val_acc", "0.8800")]),
    "impossible-accuracy": dict(kind="off_grid", column="val_acc", grid=0.02, quotes=[
        ("mutant", 1, "val_acc", "0.6867"), ("mutant", 10, "val_acc", "0.8267"),
        ("mutant", 10, "val_loss", "0.4144"), ("mutant", 10, "train_loss", "0.4247"),
        ("reference", 10, "val_loss", "0.3885"), ("reference", 10, "val_acc", "0.8800")]),
    "zero-accuracy": dict(kind="flat", column="val_acc", quotes=[
        ("mutant", 1, "val_loss", "0.6511"), ("mutant", 10, "val_loss", "0.3885"),
        ("mutant", 1, "val_acc", "0.0000"), ("mutant", 10, "val_acc", "0.0000"),
        ("reference", 10, "val_acc", "0.8800")]),
    # --- memory ---
    "warning-under-the-table": dict(kind="warns",
                                    warning="epoch 1: train_loss is a Tensor, not a plain number",
                                    quotes=[("mutant", 10, "train_loss", "0.4247")]),
    # --- epoch mean ---
    "bumpy-train-loss": dict(kind="bumpy", steady="val_loss", quotes=[
        ("mutant", 1, "val_loss", "0.7031"), ("mutant", 10, "val_loss", "0.5292"),
        ("mutant", 6, "train_loss", "0.5610"), ("mutant", 7, "train_loss", "0.6125"),
        ("mutant", 10, "train_loss", "0.5887"), ("reference", 10, "train_loss", "0.5491")]),
    # --- reproducibility ---
    "same-seed-other-numbers": dict(kind="diverges_at", epoch=1, quotes=[
        ("mutant", 1, "train_loss", "0.7136"), ("reference", 1, "train_loss", "0.7108"),
        ("mutant", 10, "train_loss", "0.4234"), ("reference", 10, "train_loss", "0.4247")]),
    "same-script-different-start": dict(kind="check_fails", check="model.init", quotes_text=["1.13"], quotes=[
        ("mutant", 1, "train_loss", "0.7108"), ("mutant", 10, "train_loss", "0.4247")]),
    "close-but-not-the-lesson": dict(kind="diverges_at", epoch=1, quotes=[
        ("mutant", 1, "train_loss", "0.7103"), ("reference", 1, "train_loss", "0.7108"),
        ("mutant", 3, "val_acc", "0.8000"), ("reference", 3, "val_acc", "0.8400"),
        ("mutant", 10, "train_loss", "0.4271"), ("reference", 10, "train_loss", "0.4247")]),
    # --- devices (on a CPU-only machine the table cannot show it: kata check's device check does) ---
    "fine-on-the-cpu": dict(kind="check_fails", check="device.moved", quotes=[
        ("mutant", 1, "train_loss", "0.7108"), ("mutant", 10, "train_loss", "0.4247")]),
}


def _settings(args: tuple[str, ...]) -> dict:
    """The settings `kata run` would train with, from its own option parsing of the flags."""
    from checker.cli.run import run_cmd

    p = run_cmd.make_context("run", ["loop.py", *args]).params
    return {"optimizer": p["optimizer"], "lr": p["lr"], "epochs": p["epochs"], "batch_size": p["batch_size"],
            "scheduler": None if p["scheduler"] == "none" else p["scheduler"], "clip": p["clip"],
            "seed": p["seed"], "device": p["device"]}


def _needed() -> tuple[set, set]:
    runs, checks = set(), set()
    for kata in KATAS:
        sym = SYMPTOMS.get(kata.slug)
        if sym is None:
            continue
        for who in (kata.mutant, REF):
            runs.add((who, kata.try_args))
            if "other" in sym:
                runs.add((who, tuple(sym["other"])))
            if sym["kind"] == "check_fails":
                checks.add((who, sym["check"]))
    return runs, checks


@pytest.fixture(scope="module")
def observed(lab, reference_source) -> dict:
    """Every run and check the stories need, as one batch of sandboxed children on both cores."""
    from checker.checks import REGISTRY
    from checker.mutation import mutant_source
    from checker.sandbox import Job, Limits, run_jobs
    from checker.worker import check_target, run_target

    runs, checks = _needed()
    sources = {REF: reference_source}
    for who, _ in runs | checks:
        if who not in sources:
            sources[who] = mutant_source(who)
    jobs = []
    for who, args in sorted(runs, key=lambda r: -_settings(r[1])["epochs"]):  # longest first
        settings = _settings(args)
        jobs.append(Job(run_target(sources[who], f"{who}.py", settings, lab),
                        Limits(step_timeout=60.0 + settings["epochs"]), tag=("run", who, args)))
    for who, cid in sorted(checks):
        jobs.append(Job(check_target(sources[who], f"{who}.py", [cid], lab), Limits(),
                        tag=("check", who, cid)))
    results: dict = {}
    for outcome in run_jobs(jobs, workers=2):
        kind, who, what = outcome.job.tag
        events = {e.get("event"): e for e in outcome.events}
        if kind == "run":
            hist = events.get("history")
            error = None if hist else events.get("raised", {}).get("error", f"no history ({sorted(events)})")
            results[(who, what)] = {"history": hist["history"] if hist else None,
                                    "warnings": hist["warnings"] if hist else [], "error": error}
        elif "measured" in events:
            verdict = REGISTRY[what].judge(events["measured"]["measured"])
            results[(who, what)] = {"passed": verdict.passed, "message": verdict.render("en")}
        else:
            results[(who, what)] = {"passed": None, "message": f"not measured: {events}"}
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
    mutants = [k.mutant for k in KATAS]
    assert len(mutants) == len(set(mutants)), "two katas share a mutant"


@pytest.mark.parametrize("kata", KATAS, ids=[k.slug for k in KATAS])
def test_story_is_true(kata, observed) -> None:
    sym = SYMPTOMS[kata.slug]
    runs = {"mutant": observed[(kata.mutant, kata.try_args)], "reference": observed[(REF, kata.try_args)]}
    if "other" in sym:
        runs["mutant+other"] = observed[(kata.mutant, tuple(sym["other"]))]
        runs["reference+other"] = observed[(REF, tuple(sym["other"]))]
    for name, run in runs.items():
        assert run["history"] is not None, f"{kata.slug}: the {name} run failed: {run['error']}"
    if sym["kind"] == "check_fails":
        assert _same_table(runs["mutant"]["history"], runs["reference"]["history"]), (
            f"{kata.slug}: the story says the table is the lesson's, but it differs")
        bad, good = observed[(kata.mutant, sym["check"])], observed[(REF, sym["check"])]
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


def test_catalogue_doc_lists_every_kata() -> None:
    """docs/katas.md is written by hand: its table must list every kata, once, as the catalogue has it."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "katas.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if re.match(r"^\| \d{3} \|", line)]
    listed = []
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        listed.append((int(cells[0]), cells[1].strip("`"), cells[2], cells[3].strip("`")))
    expected = [(k.number, k.slug, k.title.en, k.mutant) for k in KATAS]
    assert listed == expected
