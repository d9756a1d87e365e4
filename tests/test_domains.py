"""Every argument's domain, declared once (``checker.setting.domains``): complete, holding every value the course
uses, thresholds strictly inside, and the table of ``docs/checks.md`` generated from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from checker.loopfile.protocol import PROTOCOLS
from checker.setting import domains
from checker.setting.domains import DOMAINS, Kind, domain_of, thresholds
from checker.setting.tracks import get_track

ROOT = Path(__file__).resolve().parent.parent


def test_every_parameter_of_every_protocol_function_has_one_domain():
    for group, functions in PROTOCOLS.items():
        for f in functions:
            for parameter in (*f.positional, *f.keywords):
                d = domain_of(f.name, parameter)
                assert d.function == f.name and d.parameter == parameter
                assert group in d.groups, (group, d.key)
    declared = {(f.name, p) for fs in PROTOCOLS.values() for f in fs for p in (*f.positional, *f.keywords)}
    assert {(d.function, d.parameter) for d in DOMAINS} == declared  # nothing beyond the protocol
    assert len({d.key for d in DOMAINS}) == len(DOMAINS)
    with pytest.raises(KeyError):
        domain_of("make_loader", "shuffle")


def test_the_domains_the_issue_asks_for():
    sgd, adam = domain_of("make_optimizer", "lr", "sgd"), domain_of("make_optimizer", "lr", "adam")
    assert (sgd.low, sgd.high, adam.high) == (1e-5, 10.0, 1.0) and domain_of("make_optimizer", "lr") == sgd
    assert domain_of("make_loader", "seed").high == 2**32 - 1 and domain_of("make_loader", "seed").low == 0
    assert domain_of("fit", "epochs").high > 100 and domain_of("fit", "epochs").low == 1
    assert domain_of("make_loader", "batch_size").high == domain_of("make_loader", "X").high >= 10_000
    assert domain_of("evaluate", "X").high >= 20_000
    assert domain_of("evaluate", "X").low == 1 and domain_of("make_loader", "X").kind is Kind.DATA_SIZE
    clip = domain_of("train_epoch", "clip_norm")
    assert clip.low < 0.01 and clip.high > 100 and clip.default is None  # far below and above 0.28..3
    assert {"drop-last", "subset-sampler", "unequal-batches"} <= set(domain_of("fit", "loader").choices)
    assert domain_of("make_loader", "num_workers").default == 2 and domain_of("make_dataset", "augment").default
    for d in DOMAINS:
        if d.numeric:
            assert d.low < d.high and (d.default in (domains.REQUIRED, None) or d.contains(d.default)), d.key
        for u in d.uses:
            assert u.value is None or d.contains(u.value), (d.key, u.value)
            assert u.where.en and u.where.es and u.where.en != u.where.es


def _kata_runs() -> list[list[str]]:
    """Every argument list a kata's story runs (its [try] and its symptom's other run)."""
    runs = []
    for path in sorted((ROOT / "katas").rglob("*.toml")):
        data = tomllib.loads(path.read_text())
        for args in (data.get("try", {}).get("args"), data.get("symptom", {}).get("other")):
            if args:
                runs.append([a for a in args if a not in ("run", "trace", "--lesson")])
    return runs


def _option(args: list[str], name: str):
    return args[args.index(name) + 1] if name in args else None


def test_every_value_a_kata_a_track_or_the_explorer_uses_is_declared():
    from checker.runs.explore import EXPLORER, LRS

    runs = _kata_runs()
    assert len(runs) > 40
    want: dict[tuple, set] = {}

    def add(key, value):
        want.setdefault(key, set()).add(value)

    for args in runs:
        name = _option(args, "--optimizer") or "sgd"
        if _option(args, "--lr"):
            add(("make_optimizer", "lr", name), float(_option(args, "--lr")))
        for option, key, cast in (("--epochs", ("fit", "epochs", None), int),
                                  ("--batch-size", ("make_loader", "batch_size", None), int),
                                  ("--clip", ("fit", "clip_norm", None), float),
                                  ("--seed-model", ("make_model", "seed", None), int),
                                  ("--seed-loader", ("make_loader", "seed", None), int),
                                  ("--examples", ("make_loader", "X", None), int),
                                  ("--scheduler", ("fit", "scheduler", None), str)):
            if _option(args, option) is not None:
                add(key, cast(_option(args, option)))
    for lr in LRS:
        add(("make_optimizer", "lr", "sgd"), lr)
    add(("make_optimizer", "lr", "sgd"), EXPLORER.default_lr)
    add(("fit", "epochs", None), EXPLORER.epochs)
    add(("make_loader", "batch_size", None), EXPLORER.batch_size)
    add(("make_loader", "X", None), EXPLORER.data.n_samples - EXPLORER.data.n_val)
    for track_id in ("moons", "three-classes", "data-pipeline"):
        t = get_track(track_id)
        add(("make_loader", "X", None), t.data.n_train)
        add(("evaluate", "X", None), t.data.n_val)
        add(("make_loader", "X", None), t.thresholds.overfit_examples)
        add(("make_loader", "batch_size", None), t.thresholds.batch_size)
        add(("fit", "epochs", None), t.thresholds.epochs)
        add(("fit", "epochs", None), t.thresholds.converge_epochs)
        add(("make_optimizer", "lr", "sgd"), t.thresholds.falls_lr)
        add(("make_optimizer", "lr", "sgd"), t.thresholds.overfit_lr)
        add(("make_optimizer", "lr", "adam"), t.thresholds.converge_lr)
    assert ("make_optimizer", "lr", "adam") in want and 10.0 in want["make_optimizer", "lr", "sgd"]
    for key, values in want.items():
        declared = domain_of(*key).use_values()
        missing = {v for v in values if v not in declared}
        assert not missing, f"{key}: {sorted(missing)} used by the course, not declared in checker/setting/domains.py"


def test_thresholds_are_strictly_inside_spread_over_every_decade_and_hold_the_lessons_values():
    for d in DOMAINS:
        ts = thresholds(d)
        if not d.numeric:
            assert ts == ()
            continue
        assert ts == tuple(sorted(set(ts))) and len(ts) >= 3, d.key
        assert all(d.low < t < d.high for t in ts), d.key
        assert set(d.decades()) <= set(ts)
        assert {v for v in d.use_values() if isinstance(v, int | float) and d.low < v < d.high} <= set(ts)
    sgd = thresholds(domain_of("make_optimizer", "lr", "sgd"))
    assert 5.0 in sgd and 1.0 in sgd and min(sgd) < 1e-4  # the clamp of the issue sits at one of them
    assert 10_000 in thresholds(domain_of("evaluate", "X"))
    assert {1, 3, 7} <= set(thresholds(domain_of("make_loader", "num_workers")))


def test_a_domain_names_its_edges_and_the_course_values():
    sgd = domain_of("make_optimizer", "lr", "sgd")
    assert sgd.edge(10.0) == "high" and sgd.edge(1e-5) == "low" and sgd.edge(0.5) is None
    assert "raise the lr to 10" in sgd.use_of(10.0).where.en and "sube la lr a 10" in sgd.use_of(10.0).where.es
    assert sgd.use_of(0.7) is None


def test_the_table_of_docs_checks_md_is_the_generators_output(capsys):
    text = (ROOT / "docs" / "checks.md").read_text()
    start, end = text.index(domains.TABLE_BEGIN), text.index(domains.TABLE_END) + len(domains.TABLE_END)
    assert text[start:end] + "\n" == domains.markdown(), (
        "docs/checks.md's table of domains is stale: replace it with `python -m checker.setting.domains --markdown`")
    assert domains.main(["--markdown"]) == 0 and capsys.readouterr().out == domains.markdown()
    assert domains.main([]) == 2


# ---------------------------------------------------------------------------- the table of classes


def test_the_table_of_classes_in_docs_checks_md_is_the_generators_output(capsys):
    from checker.setting import coverage_table

    text = (ROOT / "docs" / "checks.md").read_text()
    start = text.index(coverage_table.TABLE_BEGIN)
    end = text.index(coverage_table.TABLE_END) + len(coverage_table.TABLE_END)
    assert text[start:end] + "\n" == coverage_table.markdown(), (
        "docs/checks.md's table of classes is stale: edit checker/setting/coverage_table.py (the words) or the "
        "declarations, then replace the table with `python -m checker.setting.coverage_table --markdown`")
    assert coverage_table.main(["--markdown"]) == 0 and capsys.readouterr().out == coverage_table.markdown()
    assert coverage_table.main([]) == 2


def test_the_table_of_classes_quotes_the_declarations_not_copies_of_them(monkeypatch):
    """Change a domain's end, a big run's size or the clip sweep's scale, and the table says the new figure."""
    from dataclasses import replace

    from checker.setting import coverage, coverage_table

    before = coverage_table.markdown()
    assert "the data-size domain's top (20,000 rows) in one batch" in before
    assert "validated on 21,504 rows" in before  # BIG_ROWS + BIG_VAL_TAIL: the docs once said 21,024
    wider = {("make_loader", "X"): replace(domain_of("make_loader", "X"), high=54_321),
             ("train_epoch", "clip_norm"): replace(domain_of("train_epoch", "clip_norm"), high=3e5)}
    monkeypatch.setattr(coverage_table, "domain_of", lambda f, p, v=None: wider.get((f, p)) or domain_of(f, p, v))
    monkeypatch.setattr(coverage, "BIG_ROWS", 40_960)
    monkeypatch.setattr(coverage, "CLIP_SCALE", 1e7)
    after = coverage_table.markdown()
    assert "the data-size domain's top (54,321 rows) in one batch" in after
    assert "a loader of 40,960 rows" in after and "validated on 41,984 rows" in after
    assert "under kata's loss times 10^7" in after and "10,000, 10^5 and 300,000: both ends" in after


def test_the_table_of_classes_has_a_row_for_every_differential_check():
    import re

    from checker.checks import REGISTRY
    from checker.setting import coverage_table

    named = {c for checks, _ in coverage_table.ROWS for c in re.findall(r"`([a-z_]+\.[a-z_]+)`", checks)}
    assert named <= set(REGISTRY), named - set(REGISTRY)
    # the pipeline family's rows are kept by the data-pipeline track's checks (their classes are their own)
    differential = {c.id for c in REGISTRY.values() if c.reference and c.family in ("reference", "best")}
    assert differential <= named, f"no row of classes for {sorted(differential - named)}"
