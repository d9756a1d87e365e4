"""Coverage analysis in `kata mutants verify` (checker.mutation.reach): a mutant runs only the checks that reach
the code it changed, and that selection never changes what verify concludes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from checker.catalogue.mutants import load_mutants, parse_mutant
from checker.checks import REGISTRY, ordered_ids
from checker.mutation.reach import EVERYTHING, changed_units, checks_reaching, reached, units_of

MODULE = textwrap.dedent('''
    import torch

    SCALE = 2


    def seed_worker(worker_id):
        return worker_id


    def helper(x):
        return x * SCALE


    class Points:
        kind = "points"

        def __getitem__(self, i):
            return helper(i)


    def make_loader(data, seed=0):
        return torch.utils.data.DataLoader(Points(), worker_init_fn=seed_worker)


    def train(model):
        return model


    def main():
        train(make_loader(None))
''')


def edited(old: str, new: str) -> str:
    assert old in MODULE
    return MODULE.replace(old, new)


def test_the_changed_unit_is_the_function_or_class_whose_body_changed():
    ref = units_of(MODULE)
    assert changed_units(ref, units_of(MODULE)) == frozenset()
    assert changed_units(ref, units_of(edited("return model", "return None"))) == {"train"}
    assert changed_units(ref, units_of(edited("return helper(i)", "return helper(i + 1)"))) == {"Points"}
    # a comment or a blank line is no change
    assert changed_units(ref, units_of(edited("def train(model):\n", "def train(model):\n    # here\n"))) == set()


@pytest.mark.parametrize("old, new", [
    ("SCALE = 2", "SCALE = 3"),  # the module part
    ("import torch", "import torch, math"),
    ("def make_loader(data, seed=0)", "def make_loader(data, seed=1)"),  # a default: evaluated at import
    ('kind = "points"', 'kind = "rows"'),  # a class's own statement
    ("def train(model):", "def train(model: int):"),  # an annotation
    ("def main():\n    train(make_loader(None))",  # a new function
     "def main():\n    train(make_loader(None))\n\n\ndef more():\n    pass"),
])
def test_a_change_evaluated_at_import_may_touch_any_check(old, new):
    assert changed_units(units_of(MODULE), units_of(edited(old, new))) is EVERYTHING


def test_a_file_that_does_not_parse_touches_every_check():
    assert changed_units(units_of(MODULE), units_of("def broken(:\n")) is EVERYTHING


def test_a_name_passed_as_an_argument_is_reached_and_so_is_what_a_class_calls():
    units = units_of(MODULE)
    # seed_worker runs in a loader's worker process: named as an argument, it is reached all the same
    assert reached(units, ["make_loader"]) == {"make_loader", "seed_worker", "Points", "helper"}
    assert reached(units, ["train"]) == {"train"}
    assert reached(units, ["main"]) == {"main", "train", "make_loader", "seed_worker", "Points", "helper"}


def test_checks_are_chosen_by_what_their_declared_functions_reach():
    units = units_of(MODULE)
    calls = {"a": ("make_loader",), "b": ("train",), "c": ("train", "make_loader")}.__getitem__
    assert checks_reaching(["a", "b", "c"], calls, units, frozenset({"helper"})) == ["a", "c"]
    assert checks_reaching(["a", "b", "c"], calls, units, frozenset({"train"})) == ["b", "c"]
    assert checks_reaching(["a", "b", "c"], calls, units, EVERYTHING) is None
    assert checks_reaching(["a", "b", "c"], calls, units, frozenset({"main"})) is None  # no check reaches it


def _recording(module) -> set[str]:
    """Wrap every top-level function and every method of a top-level class of ``module`` (defined in its own
    file) so that a call records its unit's name; calls between them go through the module's globals, so the
    wrappers see those too. Returns the set the calls are recorded in."""
    import functools
    import inspect

    seen: set[str] = set()
    filename = module.__file__

    def wrap(fn, unit):
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            seen.add(unit)
            return fn(*args, **kwargs)

        return recorded

    for name, value in list(vars(module).items()):
        if inspect.isfunction(value) and value.__code__.co_filename == filename:
            setattr(module, name, wrap(value, name))
        elif inspect.isclass(value) and value.__module__ == module.__name__:
            for attr, member in list(vars(value).items()):
                if inspect.isfunction(member):
                    setattr(value, attr, wrap(member, name))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_every_check_runs_only_code_its_declared_functions_reach(track_id, tmp_path):
    """What the selection rests on, measured: each check, run on the reference, calls nothing of the loop file
    beyond what its declared functions reach (the static closure also covers what runs in worker processes)."""
    import dataclasses

    from checker.loopfile.loading import load_loop
    from checker.setting.draws import Draw
    from checker.setting.lab import Lab
    from checker.setting.tracks import get_track

    track = get_track(track_id)
    source = track.reference.read_text(encoding="utf-8")
    # what a check calls does not depend on how long it trains: short runs keep this test quick
    short = dataclasses.replace(track.thresholds, overfit_steps=3, converge_epochs=2, falls_epochs=2, epochs=2)
    track = dataclasses.replace(track, thresholds=short)
    lab = Lab(track=track).prepare()
    lab.draw = Draw.fresh(track)
    module = load_loop(source, str(tmp_path / "loop.py"), track)
    seen = _recording(module)
    units = units_of(source)
    for cid in ordered_ids(None, track=track):
        chk = REGISTRY[cid]
        seen.clear()
        try:
            chk.measure(module, lab)
        except Exception as exc:  # a measure that needs the full run may give up: what it called is still seen
            assert seen, f"{cid} raised {exc!r} before calling the loop"
        assert seen, f"{cid} ran nothing of the loop"
        assert seen <= reached(units, chk.calls), f"{cid} runs {sorted(seen - reached(units, chk.calls))} " \
                                                  f"beyond what {chk.calls} reach"


@pytest.mark.parametrize("track_id", ["moons", "three-classes", "data-pipeline"])
def test_every_declared_killer_is_among_the_checks_its_mutant_reaches(track_id):
    """Else the mutant runs the whole battery: the selection would buy nothing."""
    from checker.catalogue.mutants import apply, resolve_dir
    from checker.mutation.verify import MutantResult, _selection
    from checker.setting.tracks import get_track

    track = get_track(track_id)
    reference = track.reference.read_text(encoding="utf-8")
    ids = ordered_ids(None, track=track)
    narrowed = 0
    for mutant in load_mutants(resolve_dir(None, track)).values():
        if mutant.equivalent:
            continue
        chosen = _selection(MutantResult(mutant, "Pending", source=apply(mutant, reference)), reference, ids)
        if chosen is not None:
            narrowed += 1
            assert set(mutant.killed_by) & set(ids) <= set(chosen)
    assert narrowed >= 5


def test_the_selection_concludes_what_the_whole_battery_concludes(lab):
    """Three mutants in three functions, verified both ways under one draw: same statuses, same killers among the
    checks that ran, and every check left out passes under the whole battery."""
    from checker.mutation.verify import run_verify

    only = ["loader-drop-last", "eval-mode-missing", "lr-ignored"]
    narrowed = run_verify(seeds=1, lab=lab, only=only)
    whole = run_verify(seeds=1, lab=lab, only=only, all_checks=True)
    assert not narrowed.problems and not whole.problems
    for a, b in zip(narrowed.results, whole.results, strict=True):
        assert a.mutant.id == b.mutant.id and a.status == b.status
        assert a.not_run and not b.not_run
        assert set(a.checks) | set(a.not_run) == set(b.checks)
        assert {c for c in a.killers} == {c for c in b.killers if c in a.checks}, a.mutant.id
        assert all(b.checks[c] == "pass" for c in a.not_run), a.mutant.id
    assert narrowed.config["coverageAnalysis"] == "perTest" and whole.config["coverageAnalysis"] == "all"


def test_a_mutant_the_selection_leaves_surviving_is_rerun_on_the_whole_battery(lab, tmp_path):
    """Calling model.eval() twice changes evaluate and nothing it does: the checks reaching evaluate pass, so the
    whole battery runs before the mutant is said to survive."""
    from checker.mutation.verify import SURVIVED, run_verify

    text = textwrap.dedent('''
        id = "eval-twice"
        title = "model.eval() called twice"
        description = "Harmless."
        killed_by = ["modes.eval"]
        documented_in = "a test"
        teaches = "nothing"

        operator = "insert_statement"
        function = "evaluate"
        target = "model.eval()"
        code = "model.eval()"
    ''')
    mutant = parse_mutant(text, Path(tmp_path / "eval-twice.toml"))
    plans: list[int] = []
    v = run_verify(seeds=1, lab=lab, mutants=[mutant], on_plan=plans.append)
    (result,) = v.results
    assert result.status == SURVIVED
    assert result.not_run == [] and set(result.checks) == set(v.check_ids)  # the whole battery decided
    assert len(plans) == 2 and plans[1] == plans[0] + len(v.check_ids)
