"""What a course's author reads (docs/courses.md) agrees with the code: the fields of kata.toml and of a track file,
the columns a story may quote (`steps` among them), the catalogue's mutants from a wheel (`--track` after list,
show and export, `export --toml`), and a scaffold that names the track's reference, not moons'."""

from __future__ import annotations

import dataclasses
import re

import pytest
import tomllib

from checker.cli import main
from tests.conftest import ROOT

DOC = ROOT / "docs" / "courses.md"


def _block(name: str) -> str:
    (block,) = re.findall(rf"<!-- {name}: begin -->\n(.*?)<!-- {name}: end -->", DOC.read_text(), re.S)
    return block


def test_the_fields_table_is_the_code_s():
    from checker.setting.tracks import DATA_FIELDS, THRESHOLD_FIELDS, fields_markdown

    assert _block("fields") == fields_markdown(), "run: python -m checker.setting.tracks, into docs/courses.md"
    assert all(f.doc for f in (*DATA_FIELDS[:4], *THRESHOLD_FIELDS)), "every field says what it is"


def test_the_quotable_columns_are_what_kata_run_prints():
    from checker.author.quotes import QUOTABLE
    from checker.learn.tables import COLUMNS

    assert [row.split("`")[1] for row in _block("quotable").splitlines()[2:]] == list(QUOTABLE)
    assert set(QUOTABLE) == {*COLUMNS, "steps"}


def test_a_story_can_quote_the_steps_column(lab):
    from checker.author.quotes import false_quotes
    from checker.catalogue.katas import load_katas
    from checker.catalogue.mutants import mutant_source, reference_source
    from checker.cli.run import run_settings_of

    kata = next(k for k in load_katas() if k.slug == "falls-then-rises")
    mutant, reference = mutant_source(kata.mutant), reference_source()
    settings = run_settings_of(kata.try_args)
    batch = settings.batch_size if "--batch-size" in kata.try_args else lab.track.thresholds.batch_size
    steps = -(-lab.track.data.n_train // batch)  # one step per batch: 150 examples
    true = dataclasses.replace(kata, symptom={**kata.symptom, "quotes": [["mutant", 1, "steps", str(steps)]]})
    assert false_quotes(true, mutant, reference, lab, parse_flags=run_settings_of) == []
    bent = dataclasses.replace(kata, symptom={**kata.symptom, "quotes": [["mutant", 1, "steps", str(steps + 1)]]})
    assert false_quotes(bent, mutant, reference, lab, parse_flags=run_settings_of) == [
        f"the story quotes {steps + 1} for the mutant's steps at epoch 1, but `kata run` prints {steps} there"]


@pytest.mark.parametrize("command", [["list", "--json"], ["show", "labels-float"]])
def test_track_after_list_and_show_is_the_groups(runner, command):
    after = runner.invoke(main, ["mutants", *command, "--track", "three-classes"])
    before = runner.invoke(main, ["mutants", "--track", "three-classes", *command])
    moons = runner.invoke(main, ["mutants", *command])
    assert after.exit_code == before.exit_code, after.output
    assert after.output == before.output != moons.output


def test_export_writes_the_mutants_own_file_for_a_course_to_adapt(runner, tmp_path):
    from checker.catalogue.mutants import load_mutants

    done = runner.invoke(main, ["mutants", "export", "zero-grad-missing", str(tmp_path), "--toml"])
    assert done.exit_code == 0, done.output
    written = tmp_path / "zero-grad-missing.toml"
    assert written.read_text() == load_mutants()["zero-grad-missing"].path.read_text()
    assert tomllib.loads(written.read_text())["id"] == "zero-grad-missing"
    loop = runner.invoke(main, ["mutants", "export", "labels-float", str(tmp_path / "l.py"), "--track",
                                "three-classes"])
    assert loop.exit_code == 0, loop.output
    assert "make_blobs" in (tmp_path / "l.py").read_text()  # the three-classes reference, broken


def test_the_scaffold_names_the_tracks_reference(runner, tmp_path, monkeypatch):
    course = tmp_path / "course"
    from tests.digits_course import make_digits_course

    make_digits_course(course)
    monkeypatch.chdir(course)
    made = runner.invoke(main, ["new", "clip-missing", "--slug", "no-clip", "--target", "optimizer.step()",
                                "--killed-by", "steps.fresh_grads", "--track", "digits"])
    assert made.exit_code == 0, made.output
    text = (course / "mutants" / "digits" / "clip-missing.toml").read_text()
    assert "solutions/digits/loop.py" in text and "(solutions/loop.py)" not in text


def test_the_course_weights_warning_agrees_with_verifys_kills(tmp_path):
    """A mutant verify saw killed by a counted check (reference.fit, which it does not declare) draws no warning;
    one no counted check killed does, naming the checks that did; without a kept list, the declared killers."""
    import shutil
    from types import SimpleNamespace

    from checker.author.instructing import blind_spots
    from checker.catalogue.mutants import load_mutants, reference_source
    from checker.catalogue.proofs import load_proofs, record_proofs
    from checker.setting.tracks import get_track

    shutil.copy(ROOT / "mutants" / "zero-grad-missing.toml", tmp_path)
    mutant = load_mutants(tmp_path)["zero-grad-missing"]
    track = dataclasses.replace(get_track("moons"), mutants_path=str(tmp_path))
    assert track.mutants_dir == tmp_path
    assert blind_spots(["reference.fit"], track, "en")  # no proof yet: the declared steps.fresh_grads only
    seen = SimpleNamespace(mutant=mutant, status="Killed", missing=[],
                           checks={"steps.fresh_grads": "fail", "reference.fit": "fail", "loader.order": "pass"})
    record_proofs(tmp_path, [seen], reference_source())
    assert load_proofs(tmp_path)["zero-grad-missing"].killers == ("steps.fresh_grads", "reference.fit")
    assert blind_spots(["reference.fit"], track, "en") == []
    (warning,) = blind_spots(["loader.order"], track, "en")
    assert "zero-grad-missing" in warning and "reference.fit" in warning


def test_a_run_of_the_declared_checks_alone_keeps_the_killers_a_run_of_every_check_found(tmp_path):
    """`kata mutants verify` runs a mutant's declared checks; `--all-checks` runs them all. For the same mutant,
    reference and checker, a narrower run keeps what the checks it did not run were found to do (a test's narrow run
    once dropped data.lesson from the shipped three-classes proof) and says anew for the checks it ran; a changed
    mutant or reference starts afresh."""
    import shutil
    from types import SimpleNamespace

    from checker.catalogue.mutants import load_mutants, reference_source
    from checker.catalogue.proofs import load_proofs, record_proofs

    shutil.copy(ROOT / "mutants" / "zero-grad-missing.toml", tmp_path)
    mutant = load_mutants(tmp_path)["zero-grad-missing"]
    every = SimpleNamespace(mutant=mutant, status="Killed", missing=[],
                            checks={"steps.fresh_grads": "fail", "reference.fit": "fail", "loss.falls": "fail"})
    declared = SimpleNamespace(mutant=mutant, status="Killed", missing=[], checks={"steps.fresh_grads": "fail"})
    record_proofs(tmp_path, [every], reference_source())
    record_proofs(tmp_path, [declared], reference_source())
    assert load_proofs(tmp_path)["zero-grad-missing"].killers == ("steps.fresh_grads", "reference.fit", "loss.falls")
    # a check the run did run says anew: one that no longer kills leaves the proof
    rerun = SimpleNamespace(mutant=mutant, status="Killed", missing=[],
                            checks={"steps.fresh_grads": "fail", "loss.falls": "pass"})
    record_proofs(tmp_path, [rerun], reference_source())
    assert load_proofs(tmp_path)["zero-grad-missing"].killers == ("steps.fresh_grads", "reference.fit")
    record_proofs(tmp_path, [declared], reference_source() + "\n# another reference\n")
    assert load_proofs(tmp_path)["zero-grad-missing"].killers == ("steps.fresh_grads",)
