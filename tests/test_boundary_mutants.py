"""Boundary mutants (issue 30, item 3): a threshold on one parameter of one reference function, at thresholds
spread over the parameter's domain; the argument classes must kill every one (checker/mutation/boundary.py).

The whole set on every track under 5 draws is long (hundreds of mutants a track): it runs under the marker
``boundary`` (``pytest -m boundary tests/test_boundary_mutants.py``); the default suite grades a representative
slice (a cap, a floor, a switch, a cut of rows) on one draw.
"""

from __future__ import annotations

import types

import libcst as cst
import pytest

from checker.catalogue.mutants import reference_source
from checker.catalogue.operators import OperatorError, apply_step
from checker.mutation.boundary import (
    Span,
    boundary_of_tracks,
    generate_boundary,
    render_boundary,
    spread,
    track_domains,
    verify_boundary,
)
from checker.setting.tracks import all_tracks, track_named

MOONS = reference_source(track_named("moons"))


def _module(source: str) -> types.ModuleType:
    module = types.ModuleType("mutated")
    exec(compile(source, "<mutated>", "exec"), module.__dict__)
    return module


def _mutate(operator: str, function: str, parameter: str, **args) -> types.ModuleType:
    return _module(apply_step(cst.parse_module(MOONS), operator, function, parameter, **args).code)


# --------------------------------------------------------------------------- the operators, run


def test_clamp_above_caps_only_values_past_the_threshold():
    m = _mutate("clamp_above", "make_optimizer", "lr", threshold=5.0)
    model = m.make_model()
    assert m.make_optimizer(model, "sgd", lr=10.0).param_groups[0]["lr"] == 5.0
    assert m.make_optimizer(model, "sgd", lr=1.0).param_groups[0]["lr"] == 1.0


def test_clamp_below_floors_and_leaves_a_none_alone():
    source = apply_step(cst.parse_module(MOONS), "clamp_below", "train_epoch", "clip_norm", threshold=0.5).code
    assert "if clip_norm is not None:\n        clip_norm = max(clip_norm, 0.5)\n" in source
    m = _module(source)
    assert m.make_optimizer(m.make_model(), lr=1e-3).param_groups[0]["lr"] == 1e-3  # the rest is the reference


def test_keep_rows_cuts_x_and_y_together():
    m = _mutate("keep_rows", "make_loader", "X", threshold=10, together="y")
    X, y, _, _ = m.make_data()
    assert sum(len(b[1]) for b in m.make_loader(X, y, batch_size=4)) == 10


def test_keep_rows_on_a_loader_cuts_every_epoch_after_t_rows():
    import torch

    m = _mutate("keep_rows", "fit", "loader", threshold=40, form="loader")
    X, y, Xv, yv = m.make_data()
    seen = []

    def loss(logits, target):
        seen.append(len(target))
        return torch.nn.functional.cross_entropy(logits, target)

    model = m.make_model()
    m.fit(model, m.make_optimizer(model), m.make_loader(X, y, batch_size=32), loss, 2)
    assert seen == [32, 8, 32, 8]  # 40 rows an epoch, the second batch cut short, both epochs


def test_switch_past_runs_its_code_past_the_threshold_only():
    m = _mutate("switch_past", "make_optimizer", "lr", threshold=1.0, code="lr = 0.0")
    model = m.make_model()
    assert m.make_optimizer(model, lr=3.0).param_groups[0]["lr"] == 0.0
    assert m.make_optimizer(model, lr=0.5).param_groups[0]["lr"] == 0.5


def test_switch_past_compares_an_objects_figure_above_or_below_the_threshold():
    import torch

    def lr_after(below: bool, lr: float) -> float:
        m = _mutate("switch_past", "train_epoch", "optimizer", threshold=1.0, of='{p}.param_groups[0]["lr"]',
                    below=below, code='for group in optimizer.param_groups:\n    group["lr"] = 1.0')
        model = m.make_model()
        optimizer = m.make_optimizer(model, lr=lr)
        X, y, _, _ = m.make_data()
        m.train_epoch(model, m.make_loader(X, y), optimizer, torch.nn.functional.cross_entropy)
        return optimizer.param_groups[0]["lr"]

    assert (lr_after(False, 3.0), lr_after(False, 0.5)) == (1.0, 0.5)  # capped past 1, left alone under it
    assert (lr_after(True, 0.5), lr_after(True, 3.0)) == (1.0, 3.0)  # raised under 1, left alone past it


@pytest.mark.parametrize(("operator", "args", "error"), [
    ("switch_past", {"threshold": 1, "code": "x = 1", "of": "{p}.("}, "is not an expression"),
    ("clamp_above", {"threshold": "big"}, "is not a number"),
    ("keep_rows", {"threshold": 10, "together": "z"}, "names a parameter"),
    ("keep_rows", {"threshold": 2.5}, "whole number of rows"),
    ("keep_rows", {"threshold": 10, "form": "rows"}, "use one of"),
])
def test_bad_operator_arguments_are_one_clear_error(operator, args, error):
    with pytest.raises(OperatorError, match=error):
        apply_step(cst.parse_module(MOONS), operator, "make_loader", "X", **args)


def test_spread_keeps_both_ends_and_evenly_spaced_points():
    points = list(range(1, 23))
    assert spread(points, 5) == [1, 6, 11, 17, 22]  # round half to even: 10.5 -> 10
    assert spread(points, None) == points
    assert spread([3, 1], 5) == [1, 3]


# --------------------------------------------------------------------------- generating, per track


@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_generate_covers_every_numeric_and_data_parameter_of_every_function(track_id):
    track = track_named(track_id)
    mutants = generate_boundary(track, domains=track_domains(track))
    where = {(b.function, b.parameter) for b in mutants}
    expected = {("seed_everything", "seed"), ("make_data", "seed"), ("make_loader", "batch_size"),
                ("make_loader", "seed"), ("make_model", "seed"), ("make_optimizer", "lr"),
                ("train_epoch", "clip_norm"), ("train_epoch", "loader"), ("evaluate", "X"), ("fit", "epochs"),
                ("fit", "clip_norm"), ("fit", "loader"), ("fit", "val")}
    expected |= {"three-classes": {("fit_best", "epochs"), ("fit_best", "clip_norm"), ("best_epoch", "history")},
                 "data-pipeline": {("make_loader", "num_workers"), ("make_loader", "dataset"),
                                   ("make_dataset", "X")},
                 "moons": {("make_loader", "X")}}[track_id]
    assert expected <= where
    assert len({b.mutant.id for b in mutants}) == len(mutants)
    for b in mutants:  # each compiled by generate: a runnable loop file
        assert b.mutant.killed_by in ((), (f"reference.{b.function}",))
    # the optimizer handed to train_epoch and fit, by its lr: capped, raised, a clip switched on past T
    for function in ("train_epoch", "fit"):
        kinds = {b.mutant.id.split("-optimizer-")[1].split("-t")[0] for b in mutants
                 if (b.function, b.parameter) == (function, "optimizer")}
        assert kinds == {"lr-cap", "lr-floor", "clip-on"}, function
    ops = {b.operator for b in mutants if (b.function, b.parameter) == ("make_optimizer", "lr")}
    assert ops == {"clamp_above", "clamp_below", "switch_past"}
    lrs = sorted({b.threshold for b in mutants if b.parameter == "lr"})
    assert lrs[0] < 1e-4 and lrs[-1] == 5.0  # both ends of SGD's domain, 1e-5 to 10


def test_a_threshold_past_the_domain_is_equivalent_not_a_hole():
    track = track_named("moons")
    mutants = generate_boundary(track, functions=["make_optimizer"],
                                domains=lambda f, p: (Span(1e-5, 10.0), [0.5, 10.0, 20.0]) if p == "lr" else None)
    eq = {b.mutant.id: b.mutant.equivalent for b in mutants}
    assert eq["make-optimizer-lr-clamp-above-t0.5"] is None
    assert "top of the domain" in eq["make-optimizer-lr-clamp-above-t20.0"]
    assert "top of the domain" in eq["make-optimizer-lr-clamp-above-t10.0"]
    assert eq["make-optimizer-lr-clamp-below-t20.0"] is None  # a floor at 20 changes every value below it


def test_generate_boundary_dry_run_lists_every_track(runner):
    from checker.cli import main

    result = runner.invoke(main, ["mutants", "generate", "--boundary", "--all-tracks", "--dry-run",
                                  "--function", "make_optimizer"])
    assert result.exit_code == 0, result.output
    for track_id in ("moons", "three-classes", "data-pipeline"):
        assert f"{track_id}: 15 boundary mutants" in result.output
    assert "make-optimizer-lr-clamp-above-t5.0" in result.output
    assert "killed by reference.make_optimizer" in result.output


def test_an_unknown_function_is_one_line_and_exit_2(runner):
    from checker.cli import main

    result = runner.invoke(main, ["mutants", "verify", "--boundary", "--function", "no_such"])
    assert result.exit_code == 2
    assert "unknown function(s) no_such" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("args", [["verify", "--boundary", "--json", "out.json"],
                                  ["generate", "--boundary", "--limit", "3"]])
def test_options_boundary_cannot_honour_are_refused(runner, args):
    from checker.cli import main

    result = runner.invoke(main, ["mutants", *args])
    assert result.exit_code == 2
    assert "--boundary takes" in result.output


# --------------------------------------------------------------------------- verifying


def test_a_file_that_cannot_be_graded_is_not_a_hole_and_is_not_graded_again():
    from checker.mutation.boundary import BoundaryRun, BoundaryVerdict

    track = track_named("moons")
    b = generate_boundary(track, functions=["fit"],
                          domains=lambda f, p: (Span(1, 128), [50]) if p == "epochs" else None)
    ungraded = BoundaryVerdict(b[0], statuses=["RuntimeError"], reasons=["tampered: a malformed event"])
    survived = BoundaryVerdict(b[1], statuses=["Killed", "Survived"], reasons=["reference.fit: ...", ""])
    run = BoundaryRun("moons", [ungraded, survived], seeds=2, reference_problems=[], seconds=0.0)
    assert run.holes == [survived] and survived.survived_on == [1]
    assert run.ungraded == [ungraded] and not ungraded.hole
    assert run.exit_code == 1


@pytest.fixture(scope="module")
def moons_lab():
    from checker.setting.lab import Lab

    return Lab(track=track_named("moons")).prepare()


def _slice(track):
    """At the ends of their domains: a cap and a floor on the lr, the lr switched off past 0.5, evaluate's rows
    cut at the top, fit's epochs capped at the top."""
    found = boundary_of_tracks([track], functions=["make_optimizer", "evaluate", "fit"])[track.id]

    def pick(function, parameter, operator, end):
        group = [b for b in found if (b.function, b.parameter, b.operator) == (function, parameter, operator)]
        return (max if end == "top" else min)(group, key=lambda b: b.threshold)

    return [pick("make_optimizer", "lr", "clamp_above", "top"), pick("make_optimizer", "lr", "clamp_below", "bottom"),
            next(b for b in found if b.mutant.id == "make-optimizer-lr-switch-past-t0.5"),
            pick("evaluate", "X", "keep_rows", "top"), pick("fit", "epochs", "clamp_above", "top")]


def test_a_survivor_is_reported_as_a_hole_naming_function_parameter_and_threshold(moons_lab):
    """With a battery that never compares the optimizer's lr (a deliberately weak coverage), the lr cap survives."""
    from io import StringIO

    from rich.console import Console

    track = moons_lab.track
    cap = [b for b in _slice(track) if b.operator == "clamp_above" and b.parameter == "lr"]
    run = verify_boundary(cap, seeds=1, lab=moons_lab, reference=reference_source(track),
                          check_ids=["model.init"])
    assert [v.boundary.mutant.id for v in run.holes] == ["make-optimizer-lr-clamp-above-t5.0"]
    out = StringIO()
    assert render_boundary(run, Console(file=out, width=200, no_color=True)) == 1
    assert "make_optimizer(lr) clamp_above T=5.0" in out.getvalue()
    assert "survived draw 0 of 1" in out.getvalue()


def test_the_classes_kill_a_representative_slice(moons_lab):
    track = moons_lab.track
    chosen = _slice(track)
    assert len(chosen) == 5
    run = verify_boundary(chosen, seeds=1, lab=moons_lab, reference=reference_source(track))
    assert not run.reference_problems
    assert [v.boundary.where for v in run.holes] == []
    assert all(v.statuses == ["Killed"] for v in run.verdicts)


@pytest.mark.boundary
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_every_boundary_mutant_is_killed_on_five_draws(track_id, request):
    from checker.setting.lab import Lab

    if "boundary" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the whole set takes tens of minutes a track: pytest -m boundary")

    track = all_tracks()[track_id]
    lab = Lab(track=track).prepare()
    run = verify_boundary(boundary_of_tracks([track])[track_id], seeds=5, lab=lab, reference=reference_source(track))
    assert not run.reference_problems
    assert [f"{v.boundary.where} (draws {v.survived_on})" for v in run.holes] == []
