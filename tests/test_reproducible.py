"""Reproducible grades: a grading secret (--secret, KATA_SECRET, else OUT/.secret) and the file's code fix
the differential checks' arguments, so the same file and secret give the same report."""

from __future__ import annotations

import csv
import json
import stat
from pathlib import Path

import pytest

from checker.cli import main
from checker.setting.draws import Draw
from tests.conftest import REFERENCE

# a differential check of each kind of argument (a loader's, a training run's), and a fixed-setting check
ONLY = ("reference.make_loader", "reference.fit", "steps.fresh_grads")
TIMEOUT = 20


def _only() -> list[str]:
    return [arg for cid in ONLY for arg in ("--only", cid)]


def _broken(old: str, new: str) -> str:
    source = REFERENCE.read_text()
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _timeless(value):
    """``value`` without its timings (every ``seconds`` field), which no grade depends on."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


UNSET = {"KATA_SECRET": None}
"""CliRunner's env: KATA_SECRET unset, whatever the environment running the tests holds."""


def _grade(runner, folder: Path, out: Path, *extra: str, env: dict | None = None):
    result = runner.invoke(main, ["grade", str(folder), "-o", str(out), "--timeout", str(TIMEOUT), "--lang", "en",
                                  *_only(), *extra], env=env or UNSET)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text())


def _by_name(results: list[dict]) -> dict[str, dict]:
    return {entry["submission"]: entry for entry in results}


def _fit_draw(entry: dict) -> dict:
    """The training run's arguments reference.fit was measured at, as results.json records them."""
    return next(c for c in entry["checks"] if c["id"] == "reference.fit")["measured"]["draw"]


def _expected_fit_draw(secret: bytes, path: Path) -> dict:
    return dict(Draw.from_secret(secret, path.read_text().encode("utf-8")).fit.__dict__)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("class")
    (folder / "a_correct.py").write_text(REFERENCE.read_text())
    (folder / "b_no_zero_grad.py").write_text(_broken("        optimizer.zero_grad()\n", ""))
    (folder / "c_correct_too.py").write_text(REFERENCE.read_text() + "\n# the same loop, one comment more\n")
    return folder


@pytest.fixture(scope="module")
def twice(folder, tmp_path_factory):
    """The folder graded twice with the same --secret, into two OUT folders."""
    from click.testing import CliRunner

    outs = [tmp_path_factory.mktemp("out") / "grades" for _ in range(2)]
    results = [_grade(CliRunner(), folder, out, "--secret", "s3cr3t") for out in outs]
    return outs, results


# --- the draw itself -------------------------------------------------------------------------------------


def test_the_draw_derives_from_the_secret_and_the_code():
    from checker.setting.tracks import get_track

    code = REFERENCE.read_bytes()
    draw = Draw.from_secret(b"s", code)
    assert Draw.from_secret(b"s", code) == draw  # same secret, same code: the same arguments
    assert Draw.from_secret(b"t", code) != draw  # another secret
    assert Draw.from_secret(b"s", code + b" ") != draw  # one byte more in the file
    track = get_track("three-classes")
    assert Draw.from_secret(b"s", code, track) == Draw.from_secret(b"s", code, track)
    # each field that names an argument moves with the secret: not one lucky coincidence
    a, b = vars(Draw.from_secret(b"s", code)), vars(Draw.from_secret(b"s2", code))
    assert sum(a[k] != b[k] for k in ("seed_everything", "data_seed", "loader_seed", "model_seed",
                                      "evaluate_seed")) == 5


def test_the_seed_is_keyed_by_the_secret_and_the_track():
    from checker.setting.draws import secret_seed

    code = b"def f(): pass\n"
    assert secret_seed(b"k", code, "moons") == secret_seed(b"k", code, "moons")
    assert len({secret_seed(b"k", code, "moons"), secret_seed(b"k", code, "other"),
                secret_seed(b"k2", code, "moons"), secret_seed(b"k", code + b"\n", "moons")}) == 4
    # a long secret is hashed to a key, not cut: two that share their first 64 bytes still differ
    assert secret_seed(b"x" * 64 + b"a", code, "moons") != secret_seed(b"x" * 64 + b"b", code, "moons")
    with pytest.raises(ValueError):
        secret_seed(b"", code, "moons")


# --- kata grade --------------------------------------------------------------------------------------------


def test_the_same_folder_and_secret_give_the_same_grades(twice):
    (out1, out2), (first, second) = twice
    assert (out1 / "grades.csv").read_text() == (out2 / "grades.csv").read_text()
    assert _timeless(first) == _timeless(second)
    rows = {r["submission"]: r for r in csv.DictReader((out1 / "grades.csv").open(newline=""))}
    assert rows["a_correct.py"]["passed"] == "true" and rows["b_no_zero_grad.py"]["steps.fresh_grads"] == "fail"
    assert all(entry["reproducible"] is True for entry in first)
    # with a --secret nothing is kept in OUT
    assert not (out1 / ".secret").exists()


def test_each_file_is_graded_at_the_draw_of_its_own_code(twice, folder):
    _, (first, _) = twice
    by_name = _by_name(first)
    for name in by_name:
        assert _fit_draw(by_name[name]) == _expected_fit_draw(b"s3cr3t", folder / name), name
    # two files that differ by a comment: other arguments (and both still pass)
    assert _fit_draw(by_name["a_correct.py"]) != _fit_draw(by_name["c_correct_too.py"])


def test_a_file_graded_alone_gets_the_grade_it_gets_in_its_class(twice, folder, tmp_path, runner):
    """The reference answers many draws in one process; an answer never depends on the draws before it."""
    _, (first, _) = twice
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "c_correct_too.py").write_text((folder / "c_correct_too.py").read_text())
    results = _grade(runner, alone, tmp_path / "out", "--secret", "s3cr3t")
    here, there = _timeless(results[0]), _timeless(_by_name(first)["c_correct_too.py"])
    assert here.pop("file").endswith("alone/c_correct_too.py")  # the only difference: the folder it is in
    there.pop("file")
    assert here == there


def test_another_secret_gives_other_draws(folder, tmp_path, runner):
    results = _by_name(_grade(runner, folder, tmp_path / "out", "--secret", "another"))
    draw = _fit_draw(results["a_correct.py"])
    assert draw == _expected_fit_draw(b"another", folder / "a_correct.py")
    assert draw != _expected_fit_draw(b"s3cr3t", folder / "a_correct.py")


def test_without_a_secret_one_is_kept_in_out_and_a_regrade_repeats(folder, tmp_path, runner):
    import shutil

    class_ = tmp_path / "class"
    shutil.copytree(folder, class_)
    out = tmp_path / "out"
    first = _by_name(_grade(runner, class_, out))
    kept = out / ".secret"
    assert kept.is_file() and stat.S_IMODE(kept.stat().st_mode) == 0o600
    secret = kept.read_text().strip()
    assert len(secret) == 64
    for name, entry in first.items():  # graded at the kept secret's draws
        assert _fit_draw(entry) == _expected_fit_draw(secret.encode(), class_ / name)
    # the secret never reaches what students or a grade sheet see
    written = [p for p in out.rglob("*") if p.is_file() and p != kept]
    assert written and not any(secret in p.read_text() for p in written)

    # edit one file, grade again into the same OUT without --secret: the secret kept is reused
    (class_ / "b_no_zero_grad.py").write_text(REFERENCE.read_text() + "\n# fixed\n")
    result = runner.invoke(main, ["grade", str(class_), "-o", str(out), "--timeout", str(TIMEOUT), "--lang", "en",
                                  *_only(), "--force"], env={"KATA_SECRET": ""})  # empty: as if unset
    assert result.exit_code == 0, result.output
    assert "1 changed, 2 unchanged, 0 new" in result.output
    assert kept.read_text().strip() == secret
    second = _by_name(json.loads((out / "results.json").read_text()))
    for name in ("a_correct.py", "c_correct_too.py"):
        assert _timeless(second[name]) == _timeless(first[name]), name
    assert _fit_draw(second["b_no_zero_grad.py"]) == _expected_fit_draw(secret.encode(), class_ / "b_no_zero_grad.py")
    assert _fit_draw(second["b_no_zero_grad.py"]) != _fit_draw(first["b_no_zero_grad.py"])
    changes = (out / "changes.md").read_text()
    assert "- a_correct.py: unchanged" in changes and "- c_correct_too.py: unchanged" in changes
    assert "- b_no_zero_grad.py: changed" in changes
    assert "| b_no_zero_grad.py |" in changes and "steps.fresh_grads fail -> pass" in changes
    assert all(len(e["sha256"]) == 64 for e in second.values())


def test_kata_secret_is_the_default_secret(folder, tmp_path, runner):
    results = _by_name(_grade(runner, folder, tmp_path / "out", env={"KATA_SECRET": "s3cr3t"}))
    assert not (tmp_path / "out" / ".secret").exists()
    assert _fit_draw(results["a_correct.py"]) == _expected_fit_draw(b"s3cr3t", folder / "a_correct.py")


def test_an_unreadable_kept_secret_is_a_usage_error(folder, tmp_path, runner):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".secret").write_text("\n")
    result = runner.invoke(main, ["grade", str(folder), "-o", str(out), *_only()], env=UNSET)
    assert result.exit_code == 2 and ".secret is empty" in result.output and "Traceback" not in result.output
    assert not (out / "grades.csv").exists()


# --- kata check ----------------------------------------------------------------------------------------------


def _check(runner, path: Path, *extra: str, env: dict | None = None) -> dict:
    result = runner.invoke(main, ["check", str(path), "--json", "--lang", "en", *_only(), *extra], env=env or UNSET)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def test_kata_check_with_a_secret_repeats_and_says_so(folder, runner):
    path = folder / "b_no_zero_grad.py"
    first = _check(runner, path, "--secret", "s3cr3t")
    second = _check(runner, path, env={"KATA_SECRET": "s3cr3t"})
    assert first["reproducible"] is True and second["reproducible"] is True
    assert [(c["id"], c["status"], c["message"]) for c in first["checks"]] == \
        [(c["id"], c["status"], c["message"]) for c in second["checks"]]
    assert _timeless(first) == _timeless(second)
    assert _fit_draw(first) == _expected_fit_draw(b"s3cr3t", path)
    assert "s3cr3t" not in json.dumps(first)  # said to be reproducible, never the secret itself


def test_kata_check_without_a_secret_draws_fresh(folder, runner):
    report = _check(runner, folder / "a_correct.py", env={"KATA_SECRET": ""})
    assert report["reproducible"] is False and report["passed"] is True


@pytest.mark.parametrize("command", ["check", "grade"])
@pytest.mark.parametrize("secret", ["", "   "])
def test_an_empty_secret_is_a_usage_error(command, secret, folder, tmp_path, runner):
    args = [str(folder / "a_correct.py")] if command == "check" else [str(folder), "-o", str(tmp_path / "out")]
    result = runner.invoke(main, [command, *args, "--secret", secret, "--lang", "en"])
    assert result.exit_code == 2, result.output
    assert "--secret is empty" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    spanish = runner.invoke(main, [command, *args, "--secret", secret, "--lang", "es"], env={"KATA_LANG": "es"})
    assert spanish.exit_code == 2 and "--secret está vacío" in spanish.output


def test_changes_say_per_file_whether_it_changed_in_english_and_spanish():
    from checker.gradebook.book import FileState, changes_markdown, compare, file_states

    before = [{"submission": "same.py", "score": 1.0, "sha256": "a" * 64, "checks": []},
              {"submission": "edited.py", "score": 0.5, "sha256": "b" * 64, "checks": []},
              {"submission": "moved.py", "score": 1.0, "sha256": "c" * 64, "checks": []},
              {"submission": "old.py", "score": 1.0, "checks": []}]  # graded by a kata that kept no hash
    now = [{"submission": "same.py", "score": 1.0, "sha256": "a" * 64, "checks": []},
           {"submission": "edited.py", "score": 0.5, "sha256": "d" * 64, "checks": []},
           {"submission": "moved.py", "score": 0.5, "sha256": "c" * 64, "checks": []},
           {"submission": "old.py", "score": 1.0, "sha256": "e" * 64, "checks": []},
           {"submission": "new.py", "score": 0.0, "sha256": "f" * 64, "checks": []}]
    states = file_states(before, now)
    assert states == {"same.py": FileState.UNCHANGED, "edited.py": FileState.CHANGED,
                      "moved.py": FileState.UNCHANGED, "old.py": FileState.UNKNOWN, "new.py": FileState.NEW}
    english = changes_markdown(compare(before, now), len(before), "en", states)
    assert "1 changed, 2 unchanged, 1 new, 1 unknown" in english
    assert "- same.py: unchanged\n" in english and "- edited.py: changed\n" in english
    # an unchanged file whose grade moved: not the student's doing
    assert "- moved.py: unchanged, yet its grade moved" in english
    spanish = changes_markdown(compare(before, now), len(before), "es", states)
    assert "- same.py: sin cambios" in spanish and "- edited.py: cambiado" in spanish and "- new.py: nuevo" in spanish
    # nothing moved: the files are still listed
    quiet = changes_markdown([], 1, "en", {"same.py": FileState.UNCHANGED})
    assert "Nothing changed" in quiet and "- same.py: unchanged" in quiet
