"""A course folder (checker/setting/course.py): a kata.toml found from the working folder upwards names the
course's tracks, default track, language and weights; a track's data may be a dataset bundled with
scikit-learn, a file the course ships, or the reference's own make_data; `kata new` and `verify` write into
the course, never into the installed package; `kata check --course` weighs every format.

The end-to-end test adds an iris track (load_iris, standardised on the training split) in a course folder
under tmp_path, outside the repository, by following CONTRIBUTING.md alone: no edit to checker/.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from checker.setting.tracks import TrackError, arrays_of, parse_track

ROOT = Path(__file__).resolve().parent.parent

IRIS = """id = "iris"
order = 5
protocol = ["v1"]
reference = "solutions/iris/loop.py"
mutants = "mutants/iris"
katas = "katas/iris"

[title]
en = "Iris: a bundled dataset"
es = "Iris: un conjunto de datos incluido"

[data]
dataset = "load_iris"
n_samples = 150
n_val = 30
standardize = true

[model]
widths = [4, 16, 3]

[thresholds]
converge_epochs = 30
converge_acc = 0.8
converge_reached = 0.9
epochs = 20
batch_size = 16
"""

COURSE = """title = "Iris course"
track = "iris"

[points]
"data.lesson" = 2
"steps.fresh_grads" = 5
"loss.falls" = 1
"""

ZERO_GRAD = """id = "zero-grad-missing"
title = "optimizer.zero_grad() is missing"
description = "Gradients add up across batches, so every step uses the sum of all the gradients so far."
killed_by = ["steps.fresh_grads"]
documented_in = "pitfalls article, table of mistakes: no optimizer.zero_grad() before backward()"
operator = "delete_statement"
function = "train_epoch"
target = "optimizer.zero_grad()"
"""

UNSEEDED = """id = "loader-unseeded"
title = "the loader's generator is not seeded"
description = "The order of the batches changes from run to run."
killed_by = ["loader.order"]
documented_in = "lesson, section 3: a seeded loader"
operator = "delete_statement"
function = "make_loader"
target = "generator = torch.Generator().manual_seed(seed)"
"""

KATA = """mutant = "zero-grad-missing"

[title]
en = "Petals that will not settle"
es = "Pétalos que no se asientan"

[story]
en = "Predict first: with SGD at lr 0.1, should the loss ever climb back? It reads 1.5 at some epoch."
es = "Primero, predice: con SGD y lr 0.1, ¿debería volver a subir la pérdida? Marca 1.5 en alguna época."

[[hints]]
en = "What is each update made of: this batch's gradient alone, or more?"
es = "¿De qué está hecha cada actualización: solo del gradiente de este lote, o de algo más?"

[[hints]]
en = "backward() adds into .grad; something must clear it once per batch."
es = "backward() suma sobre .grad; algo debe vaciarlo una vez por lote."

[read]
en = "PyTorch docs: torch.optim.Optimizer.zero_grad."
es = "Documentación de PyTorch: torch.optim.Optimizer.zero_grad."

[symptom]
kind = "check_fails"
check = "steps.fresh_grads"
quotes_text = ["1.5"]
"""


def iris_reference() -> str:
    """solutions/loop.py turned into the iris setting, as CONTRIBUTING's step 2 says."""
    src = (ROOT / "solutions" / "loop.py").read_text(encoding="utf-8")
    for old, new in (("from sklearn.datasets import make_moons", "from sklearn.datasets import load_iris"),
                     ("from sklearn.model_selection import train_test_split",
                      "from sklearn.model_selection import train_test_split\nfrom sklearn.preprocessing import "
                      "StandardScaler"),
                     ("X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)",
                      "X, y = load_iris(return_X_y=True)"),
                     ("test_size=50", "test_size=30"),
                     ("    # Features as float32", "    scaler = StandardScaler().fit(X_train)\n"
                      "    X_train, X_val = scaler.transform(X_train), scaler.transform(X_val)\n"
                      "    # Features as float32"),
                     ("nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))",
                      "nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))")):
        assert old in src, old
        src = src.replace(old, new)
    return src


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def kata(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("KATA_TRACKS", "KATA_COURSE", "KATA_LANG")}
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=cwd, capture_output=True, text=True,
                          env={**clean, "NO_COLOR": "1", **(env or {})}, timeout=600)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course folder outside the repository: kata.toml, the iris track, its reference, mutants and kata."""
    root = tmp_path_factory.mktemp("course")
    _write(root / "kata.toml", COURSE)
    _write(root / "tracks" / "iris.toml", IRIS)
    _write(root / "solutions" / "iris" / "loop.py", iris_reference())
    _write(root / "mutants" / "iris" / "zero-grad-missing.toml", ZERO_GRAD)
    _write(root / "mutants" / "iris" / "loader-unseeded.toml", UNSEEDED)
    _write(root / "katas" / "iris" / "010-petals-that-will-not-settle.toml", KATA)
    return root


def test_a_course_track_on_a_bundled_dataset_end_to_end(course, tmp_path):
    before = {p.relative_to(ROOT / "checker"): p.read_bytes() for p in (ROOT / "checker").rglob("*.py")}
    # the course's tracks are found from any folder inside it; its default track is iris
    inside = course / "solutions"
    tracks = {row["track"]: row for row in json.loads(kata("tracks", "--json", cwd=inside).stdout)}
    assert tracks["iris"]["data"] == "load_iris(), standardised on the training split"
    assert tracks["iris"]["split"] == "120/30" and "moons" in tracks

    verify = kata("mutants", "verify", "--seeds", "1", "-q", "--track", "iris", "--json", str(tmp_path / "v.json"),
                  cwd=course)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert list(json.loads((tmp_path / "v.json").read_text())["files"]) == ["solutions/iris/loop.py"]
    proofs = json.loads((course / "mutants" / "iris" / "proofs.json").read_text())
    assert proofs["proofs"]["zero-grad-missing"]["status"] == "Killed"
    assert proofs["proofs"]["loader-unseeded"]["status"] == "Killed"

    # learners: the kata is listed and opened under the course's track; its file fails, the reference passes
    (tmp_path / "me").mkdir()
    work = ["--dir", str(tmp_path / "me")]
    listed = json.loads(kata("list", "--json", "--track", "iris", *work, cwd=course).stdout)
    assert [row["kata"] for row in listed] == ["petals-that-will-not-settle"]
    opened = kata("next", "--json", *work, cwd=course)  # the course's default track
    assert opened.returncode == 0, opened.stderr
    assert json.loads(opened.stdout)["kata"] == "petals-that-will-not-settle"
    failing = kata("check", "--json", *work, cwd=course)
    assert failing.returncode == 1, failing.stderr
    statuses = {c["id"]: c["status"] for c in json.loads(failing.stdout)["checks"]}
    assert statuses["steps.fresh_grads"] == "fail" and statuses["data.lesson"] == "pass"

    # a class graded against the course's track and weights: the reference passes, the mutants fail
    subs = tmp_path / "class"
    _write(subs / "alice.py", iris_reference())
    exported = kata("mutants", "export", "zero-grad-missing", str(subs / "bob.py"), cwd=course)
    assert exported.returncode == 0, exported.stderr
    graded = kata("grade", str(subs), "-o", str(tmp_path / "out"), "--course", str(course), cwd=course)
    assert graded.returncode == 0, graded.stderr
    # the course counts no check that kills the unseeded loader: kata grade says so
    assert "loader-unseeded" in graded.stderr and "loader.order" in graded.stderr
    assert "zero-grad-missing" not in graded.stderr
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows["alice.py"]["passed"] == "true" and rows["bob.py"]["passed"] == "false"
    assert float(rows["bob.py"]["points"]) == 2.0 and float(rows["alice.py"]["max_points"]) == 8.0
    feedback = (tmp_path / "out" / "feedback" / "bob.py.md").read_text()
    assert "`kata next petals-that-will-not-settle --track iris`" in feedback  # the course's kata, not moons'

    # Gradescope gets the course's weights: each test's max_score is its check's points
    scoped = kata("check", str(subs / "bob.py"), "--format", "gradescope", "--course", str(course), cwd=tmp_path)
    assert scoped.returncode == 1, scoped.stderr
    results = json.loads(scoped.stdout)
    worth = {t["extra_data"]["check"]: (t["score"], t["max_score"]) for t in results["tests"]}
    # (without zero_grad the summed gradients also make the loss climb: loss.falls fails too)
    assert worth == {"data.lesson": (2.0, 2.0), "steps.fresh_grads": (0.0, 5.0), "loss.falls": (0.0, 1.0)}
    assert results["score"] == 2.0
    junit = kata("check", str(subs / "bob.py"), "--format", "junit", "--course", str(course), cwd=tmp_path)
    assert '<property name="max_points" value="8" />' in junit.stdout

    after = {p.relative_to(ROOT / "checker"): p.read_bytes() for p in (ROOT / "checker").rglob("*.py")}
    assert before == after


# ------------------------------------------------------------------ the data sources, one by one

TRACK = """id = "{id}"
order = 9
protocol = ["v1"]
reference = "solutions/{id}/loop.py"
mutants = "mutants/{id}"
katas = "katas/{id}"
[title]
en = "t"
es = "t"
[data]
{data}
[model]
widths = [{features}, 8, {classes}]
"""


def _track(tmp_path: Path, data: str, *, features: int = 4, classes: int = 3, name: str = "t"):
    path = _write(tmp_path / "tracks" / f"{name}.toml", TRACK.format(id=name, data=data, features=features,
                                                                     classes=classes))
    return parse_track(path, tmp_path)


def test_a_bundled_dataset_scaled_and_split_as_a_learner_would_write_it(tmp_path):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    track = _track(tmp_path, 'dataset = "load_digits"\nn_samples = 1797\nn_val = 297\nscale = 0.0625',
                   features=64, classes=10)
    assert track.data.call() == "load_digits() * 0.0625" and track.data.n_train == 1500
    X, y = load_digits(return_X_y=True)
    X_tr, X_va, y_tr, y_va = train_test_split(X / 16.0, y, test_size=297, random_state=0, stratify=y)
    data = track.split(0)
    assert torch.equal(data.X_train, torch.tensor(X_tr, dtype=torch.float32))
    assert torch.equal(data.y_val, torch.tensor(y_va, dtype=torch.int64))
    assert float(data.X_train.max()) == 1.0


def test_standardisation_is_fitted_on_the_training_split_alone(tmp_path):
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    track = _track(tmp_path, 'dataset = "load_wine"\nn_samples = 178\nn_val = 38\nstandardize = true', features=13)
    X, y = load_wine(return_X_y=True)
    X_tr, X_va, _, _ = train_test_split(X, y, test_size=38, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    data = track.split(0)
    assert torch.allclose(data.X_train, torch.tensor(scaler.transform(X_tr), dtype=torch.float32), atol=1e-6)
    assert torch.allclose(data.X_val, torch.tensor(scaler.transform(X_va), dtype=torch.float32), atol=1e-6)
    assert abs(float(data.X_val.mean())) > 1e-3  # the validation part keeps the training part's centre


@pytest.mark.parametrize("kind", ["csv", "npz"])
def test_a_file_the_course_ships_beside_the_track_file(tmp_path, kind):
    from checker.setting.lab import Lab

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 4)), np.repeat([0, 1], 20)
    folder = tmp_path / "tracks"
    folder.mkdir()
    if kind == "csv":
        np.savetxt(folder / "points.csv", np.column_stack([X, y]), delimiter=",", header="a,b,c,d,label",
                   comments="")
    else:
        np.savez(folder / "points.npz", X=X, y=y)
    track = _track(tmp_path, f'file = "points.{kind}"\nn_samples = 40\nn_val = 10', classes=2)
    assert track.data.trusted and track.data.call() == f"points.{kind} (40 rows)"
    lab = Lab(track=track)
    with pytest.raises(TrackError, match="read only in kata's own process"):
        lab.data  # noqa: B018 - never computed where the track's folder would be hidden
    lab.load_trusted()
    restored = __import__("pickle").loads(__import__("pickle").dumps(lab))  # as a child receives it
    data = restored.data
    assert data.X_train.shape == (30, 4) and data.y_val.dtype == torch.int64
    assert sorted(torch.cat([data.y_train, data.y_val]).tolist()) == sorted(y.tolist())


def test_the_references_own_make_data(tmp_path):
    _write(tmp_path / "solutions" / "r" / "loop.py", iris_reference())
    track = _track(tmp_path, 'source = "reference"\nn_samples = 150\nn_val = 30', name="r")
    parts = arrays_of(track.data)
    assert [p.shape for p in parts] == [(120, 4), (120,), (30, 4), (30,)]
    wrong = _track(tmp_path, 'source = "reference"\nn_samples = 150\nn_val = 50', name="r")
    with pytest.raises(TrackError, match="120/30 rows"):
        arrays_of(wrong.data)


@pytest.mark.parametrize("data, says", [
    ('generator = "make_moons"\ndataset = "load_iris"\nn_samples = 150\nn_val = 30', "exactly one of"),
    ('n_samples = 150\nn_val = 30', "exactly one of"),
    ('dataset = "fetch_covtype"\nn_samples = 150\nn_val = 30', "nothing is downloaded"),
    ('file = "missing.csv"\nn_samples = 150\nn_val = 30', "no such file"),
    ('file = "data.json"\nn_samples = 150\nn_val = 30', ".csv or an .npz"),
    ('source = "elsewhere"\nn_samples = 150\nn_val = 30', "the only source"),
])
def test_a_bad_data_table_names_the_field(tmp_path, data, says):
    with pytest.raises(TrackError, match=says):
        _track(tmp_path, data)


def test_a_dataset_of_another_size_than_declared_is_said_when_loaded(tmp_path):
    track = _track(tmp_path, 'dataset = "load_iris"\nn_samples = 160\nn_val = 30')
    with pytest.raises(TrackError, match="has 150 rows, but the track declares n_samples = 160"):
        arrays_of(track.data)


# ------------------------------------------------------------------ the course folder itself

def test_the_course_is_found_from_the_working_folder_upwards(course, tmp_path, monkeypatch):
    from checker.setting.course import CourseError, find_course, parse_course

    monkeypatch.delenv("KATA_COURSE", raising=False)
    monkeypatch.chdir(course / "solutions" / "iris")
    found = find_course()
    assert found.root == course.resolve() and found.track == "iris" and found.has_points
    monkeypatch.chdir(tmp_path)
    assert find_course() is None
    _write(tmp_path / "py" / "pyproject.toml", '[project]\nname = "x"\n[tool.kata]\nlanguage = "es"\n')
    assert parse_course(tmp_path / "py").language == "es"
    _write(tmp_path / "bad" / "kata.toml", 'language = "fr"\n')
    with pytest.raises(CourseError, match="field `language`"):
        parse_course(tmp_path / "bad")
    _write(tmp_path / "bad2" / "kata.toml", 'tracks = ["nowhere"]\n')
    with pytest.raises(CourseError, match="not a folder"):
        parse_course(tmp_path / "bad2")


def test_nothing_is_written_into_the_installed_package(tmp_path):
    inside = ROOT / "checker" / "_data" / "mutants"
    proc = kata("new", "x-y", "--slug", "a-b", "--target", "optimizer.zero_grad()", "--killed-by",
                "steps.fresh_grads", "--mutants-dir", str(inside), "--katas-dir", str(tmp_path / "k"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "inside the installed kata package" in proc.stderr and "kata.toml" in proc.stderr
    assert not inside.exists() and not (tmp_path / "k").exists()
    proc = kata("mutants", "--mutants-dir", str(inside), "verify", "--only", "x", cwd=tmp_path)
    assert proc.returncode == 2


def test_a_course_language_is_the_default(course, tmp_path):
    es = _write(tmp_path / "es" / "kata.toml", 'language = "es"\n').parent
    english = json.loads(kata("tracks", "--json", cwd=tmp_path, env={"LANG": "C"}).stdout)
    spanish = json.loads(kata("tracks", "--json", cwd=es, env={"LANG": "C"}).stdout)
    assert english[0]["title"] == "Two moons: the lesson's loop" and spanish[0]["title"] != english[0]["title"]
    again = json.loads(kata("tracks", "--json", "--lang", "en", cwd=es, env={"LANG": "C"}).stdout)
    assert again[0]["title"] == english[0]["title"]  # --lang still wins


# ------------------------------------------------------------------ the track found from the file

def test_a_file_of_another_track_is_graded_against_it_from_any_folder(tmp_path):
    """Checked from a folder no track owns, a three-classes file is graded against three-classes (found from its
    data's shapes), the note said first; never a moons verdict."""
    path = _write(tmp_path / "blobs.py", (ROOT / "solutions" / "three-classes" / "loop.py").read_text())
    proc = kata("check", str(path), "--only", "data.lesson", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("graded against track three-classes") and "240/60" in first
    as_json = kata("check", str(path), "--only", "data.lesson", "--json", cwd=tmp_path)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["passed"] is True
    assert "three-classes" in as_json.stderr  # the note, kept out of the JSON on stdout
    # a file that follows no track's protocol: exit 2, what it lacks first, then the --track hint
    _write(tmp_path / "half.py", "def make_data(seed=0):\n    return None\n")
    half = kata("check", str(tmp_path / "half.py"), cwd=tmp_path)
    assert half.returncode == 2 and "does not follow loop protocol" in half.stderr.splitlines()[0], half.stderr
    assert "needs --track NAME" in half.stderr.splitlines()[-1], half.stderr  # what it lacks first (issue 34)


def test_kata_grade_says_when_a_submission_follows_another_track(course, tmp_path):
    """A moons loop handed in on the iris assignment (same protocol): the grade stands, and kata grade and the
    feedback file say the file follows track moons."""
    subs = tmp_path / "class"
    _write(subs / "moons.py", (ROOT / "solutions" / "loop.py").read_text())
    graded = kata("grade", str(subs), "-o", str(tmp_path / "out"), "--track", "iris", "--only", "data.lesson",
                  cwd=course)
    assert graded.returncode == 0, graded.stderr
    assert "make_data gives the shapes of track moons (150/50)" in " ".join(graded.stderr.split())
    feedback = (tmp_path / "out" / "feedback" / "moons.py.md").read_text()
    assert "not those of track iris" in feedback


def test_a_large_tensor_is_compared_through_digests_a_sample_and_means():
    """reference.make_data sends a real dataset's features compactly: equal data agrees, reordered rows are
    told apart from other values, and a changed value shows in the difference."""
    from checker.checks.reference import FULL_VALUES, _same_rows, _values_diff, _values_of

    X = torch.rand(1500, 64, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert X.numel() > FULL_VALUES
    mine = _values_of(X.reshape(-1), 64)
    assert "values" not in mine and len(mine["sample"]) < 2000
    assert _values_diff(_values_of(X.clone().reshape(-1), 64), mine) == 0.0
    shuffled = _values_of(X[torch.randperm(1500, generator=torch.Generator().manual_seed(1))].reshape(-1), 64)
    assert _values_diff(shuffled, mine) > 0.1 and _same_rows(shuffled, mine)
    scaled = _values_of((X * 16).reshape(-1), 64)
    assert _values_diff(scaled, mine) > 1 and not _same_rows(scaled, mine)
    small = torch.rand(10, 2, dtype=torch.float64)
    assert "values" in _values_of(small.reshape(-1), 2)


def test_kata_run_takes_the_tracks_batch_size(course):
    """iris declares batch_size = 16: `kata run` steps 8 times over its 120 training examples, 4 at 32."""
    def steps(*flags: str) -> str:
        proc = kata("run", "--lesson", "--epochs", "1", *flags, cwd=course)
        assert proc.returncode == 0, proc.stderr
        row = next(line for line in proc.stdout.splitlines() if line.strip().startswith("1 "))
        return row.split()[-1]

    assert steps() == "8" and steps("--batch-size", "32") == "4"


def test_a_drafts_commands_name_its_track(course):
    """The commands a draft's reasons give (`kata new --check`, `kata mutants verify --only`) carry --track."""
    from checker.catalogue.katas import parse_kata
    from checker.catalogue.mutants import load_mutants
    from checker.catalogue.proofs import draft_reasons

    kata_ = parse_kata(course / "katas" / "iris" / "010-petals-that-will-not-settle.toml", "iris")
    mutants = load_mutants(course / "mutants" / "iris")
    (reason,) = draft_reasons(kata_, mutants, {}, "reference source")
    assert "`kata mutants verify --only zero-grad-missing --track iris`" in reason
    assert "`kata new --check petals-that-will-not-settle --track iris`" in reason


# ------------------------------------------------------------------ a course's data file, for learners too

POINTS = IRIS.replace('id = "iris"', 'id = "points"').replace("/iris", "/points").replace(
    'dataset = "load_iris"', 'file = "points.npz"')
POINTS_COURSE = COURSE.replace('track = "iris"', 'track = "points"')
READ_NPZ = """    with np.load(Path(__file__).with_name("points.npz")) as data:  # the course's file, beside this one
        X, y = data["X"], data["y"]"""


def points_reference(read: str = READ_NPZ) -> str:
    """The iris reference whose make_data reads the course's file (CONTRIBUTING: a track on a course's file)."""
    src = iris_reference().replace("    X, y = load_iris(return_X_y=True)", read)
    return src.replace("import random\n", "import random\nfrom pathlib import Path\n", 1)


@pytest.fixture(scope="module")
def points_course(tmp_path_factory) -> Path:
    """A course whose track's data is a file it ships (iris, shuffled, as points.npz beside the track file); its
    reference reads the file through ``Path(__file__).with_name``."""
    from sklearn.datasets import load_iris

    root = tmp_path_factory.mktemp("points-course")
    _write(root / "kata.toml", POINTS_COURSE)
    _write(root / "tracks" / "points.toml", POINTS)
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(1).permutation(len(y))
    np.savez(root / "tracks" / "points.npz", X=X[order], y=y[order])
    _write(root / "solutions" / "points" / "loop.py", points_reference())
    _write(root / "mutants" / "points" / "zero-grad-missing.toml", ZERO_GRAD)
    _write(root / "katas" / "points" / "010-petals-that-will-not-settle.toml", KATA)
    return root


def test_a_course_file_track_works_for_the_reference_and_for_a_learner(points_course, tmp_path):
    course = points_course
    shipped = (course / "tracks" / "points.npz").read_bytes()
    # the reference, graded in sandboxed children that cannot see the course folder, reads its copy of the file
    verify = kata("mutants", "verify", "--seeds", "1", "-q", "--track", "points", "--json", str(tmp_path / "v.json"),
                  cwd=course)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    proofs = json.loads((course / "mutants" / "points" / "proofs.json").read_text())
    assert proofs["proofs"]["zero-grad-missing"]["status"] == "Killed"

    # a learner's folder: `kata next` puts the data file beside the kata file and says so
    me = tmp_path / "me"
    me.mkdir()
    opened = kata("next", "--dir", str(me), cwd=course)
    assert opened.returncode == 0, opened.stderr
    assert (me / "points.npz").read_bytes() == shipped
    assert "points.npz (new)" in opened.stdout and 'with_name(\'points.npz\')' in opened.stdout
    (starter,) = me.glob("*.py")
    # a correct loop, reading the file as the reference does, passes every check in the sandbox
    starter.write_text(points_reference(), encoding="utf-8")
    checked = kata("check", "--json", "--dir", str(me), cwd=course)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    statuses = {c["id"]: c["status"] for c in json.loads(checked.stdout)["checks"]}
    assert statuses["data.lesson"] == statuses["reference.make_data"] == "pass", statuses
    # so does one reading it by its bare name (the child works in its private folder, where the copy lies)
    bare = _write(tmp_path / "bare" / "loop.py", points_reference(READ_NPZ.replace(
        'Path(__file__).with_name("points.npz")', '"points.npz"')))
    only = ["--only", "data.lesson", "--only", "reference.make_data"]
    checked = kata("check", str(bare), "--track", "points", "--json", *only, cwd=course)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # and `kata run` (its own children) trains on it
    ran = kata("run", str(starter), "--epochs", "1", "--track", "points", cwd=course)
    assert ran.returncode == 0, ran.stdout + ran.stderr

    # a different points.npz of the learner's own is never overwritten: kept, and said (in Spanish too)
    np.savez(me / "points.npz", X=np.zeros((2, 4)), y=np.zeros(2))
    mine = (me / "points.npz").read_bytes()
    reset = kata("reset", "--yes", "--dir", str(me), "--lang", "es", cwd=course)
    assert reset.returncode == 0, reset.stderr
    assert "points.npz ya existía y es distinto" in reset.stdout
    assert (me / "points.npz").read_bytes() == mine
    again = kata("next", "petals-that-will-not-settle", "--dir", str(me), cwd=course)
    assert again.returncode == 0, again.stderr
    assert "points.npz was already there and differs" in again.stdout
    assert (me / "points.npz").read_bytes() == mine
    # an identical copy needs no word; a missing one is put back by `kata reset`
    (me / "points.npz").unlink()
    reset = kata("reset", "--yes", "--dir", str(me), cwd=course)
    assert (me / "points.npz").read_bytes() == shipped and "points.npz (new)" in reset.stdout
    quiet = kata("reset", "--yes", "--dir", str(me), cwd=course)
    assert "points.npz" not in quiet.stdout


def test_a_learners_loop_reads_a_course_csv_in_the_sandbox(tmp_path):
    """A CSV track: the learner's make_data reads the file beside it (a copy in the child's folder), or the
    course's original by its own path: the track's declared data file is never taken for interference (issue 32),
    while the track file beside it stays out of the child's reach."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    _write(tmp_path / "kata.toml", POINTS_COURSE)
    _write(tmp_path / "tracks" / "points.toml", POINTS.replace("points.npz", "points.csv"))
    np.savetxt(tmp_path / "tracks" / "points.csv", np.column_stack([X, y]), delimiter=",",
               header="a,b,c,d,label", comments="")
    read_csv = """    table = np.loadtxt(Path(__file__).with_name("points.csv"), delimiter=",", skiprows=1)
    X, y = table[:, :-1], table[:, -1].astype(int)"""
    _write(tmp_path / "solutions" / "points" / "loop.py", points_reference(read_csv))
    mine = _write(tmp_path / "me" / "loop.py", points_reference(read_csv))
    only = ["--only", "data.lesson", "--only", "reference.make_data"]
    checked = kata("check", str(mine), "--json", *only, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # the course's original, by its own path: read where it lies, read-only
    pinned = _write(tmp_path / "pinned" / "loop.py", points_reference(read_csv.replace(
        'Path(__file__).with_name("points.csv")', repr(str(tmp_path / "tracks" / "points.csv")))))
    read = kata("check", str(pinned), "--json", *only, cwd=tmp_path)
    assert read.returncode == 0, read.stdout + read.stderr
    # the track file beside it is not the track's data: refused
    peeking = _write(tmp_path / "peeking" / "loop.py", points_reference(read_csv.replace(
        'Path(__file__).with_name("points.csv")', repr(str(tmp_path / "tracks" / "points.toml")))))
    refused = kata("check", str(peeking), "--json", *only, cwd=tmp_path)
    assert refused.returncode in (1, 2), refused.stdout + refused.stderr  # not there, or refused: never read
    assert "points.toml" in refused.stdout + refused.stderr
    if refused.returncode == 1:
        statuses = {c["id"]: c["status"] for c in json.loads(refused.stdout)["checks"]}
        assert statuses["data.lesson"] != "pass"


def test_a_new_zygote_computes_a_course_tracks_data_once_for_every_child(tmp_path):
    """The zygote runs in / without the course's environment, so it cannot find a course's tracks itself: the
    lab hands it the track's data spec to warm (``track_preload``); a child forked afterwards finds the data computed.
    Built-in tracks are warmed anyway, and a file's data comes with the lab: neither needs it."""
    from checker.sandbox.zygote import _warm
    from checker.setting.lab import track_preload
    from checker.setting.tracks import get_track, split_of

    track = _track(tmp_path, 'dataset = "load_wine"\nn_samples = 178\nn_val = 38', features=13)
    spec = track_preload(track)
    assert spec is not None and track_preload(get_track("moons")) is None
    np.savez(tmp_path / "tracks" / "points.npz", X=np.zeros((40, 4)), y=np.repeat([0, 1], 20))
    assert track_preload(_track(tmp_path, 'file = "points.npz"\nn_samples = 40\nn_val = 10', name="f")) is None
    split_of.cache_clear()
    _warm([spec])  # as a new zygote does with it, before it forks any child
    before = split_of.cache_info()
    track.split(0)  # a child's lab, its track parsed in kata's own process
    after = split_of.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)


def test_a_course_names_the_mutants_and_katas_folders_of_its_track_files(tmp_path, monkeypatch):
    """kata.toml's `mutants` and `katas`: one subfolder per track, for the course's track files that name no
    folder of their own; a track file that names one keeps it, and one that names none where the course gives
    no default is refused, naming the field."""
    from checker.sandbox.zygote import _warm
    from checker.setting.lab import track_preload
    from checker.setting.tracks import all_tracks, split_of

    monkeypatch.delenv("KATA_COURSE", raising=False)
    monkeypatch.delenv("KATA_TRACKS", raising=False)
    _write(tmp_path / "kata.toml", 'mutants = "course-mutants"\nkatas = "course-katas"\n')
    bare = IRIS.replace('mutants = "mutants/iris"\n', "").replace('katas = "katas/iris"\n', "")
    _write(tmp_path / "tracks" / "iris.toml", bare)
    _write(tmp_path / "tracks" / "wine.toml",
           bare.replace('id = "iris"', 'id = "wine"').replace("order = 5", 'order = 6\nkatas = "own/wine"'))
    monkeypatch.chdir(tmp_path)
    tracks = all_tracks()
    assert tracks["iris"].mutants_dir.resolve() == (tmp_path / "course-mutants" / "iris").resolve()
    assert tracks["iris"].katas_dir.resolve() == (tmp_path / "course-katas" / "iris").resolve()
    assert tracks["wine"].katas_dir.resolve() == (tmp_path / "own" / "wine").resolve()
    assert tracks["wine"].mutants_dir.resolve() == (tmp_path / "course-mutants" / "wine").resolve()
    # the zygote warms that track's data though it cannot read the course's kata.toml
    split_of.cache_clear()
    _warm([track_preload(tracks["iris"])])
    before = split_of.cache_info()
    tracks["iris"].split(0)
    after = split_of.cache_info()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)
    (tmp_path / "kata.toml").write_text('katas = "course-katas"\n')
    with pytest.raises(TrackError, match="missing field `mutants`.*kata.toml"):
        all_tracks()


def test_kata_explore_and_trace_train_on_a_course_file(tmp_path):
    """A 2-D track on a file the course ships: `kata explore` (kata's grid from the file, read in kata's own
    process) and `kata trace` run the learner's loop, which reads its copy of the file in the sandbox."""
    from sklearn.datasets import make_moons

    _write(tmp_path / "kata.toml", 'track = "m"\n')
    _write(tmp_path / "tracks" / "m.toml", TRACK.format(
        id="m", data='file = "moons.npz"\nn_samples = 200\nn_val = 50', features=2, classes=2).replace(
        "widths = [2, 8, 2]", "widths = [2, 16, 2]"))
    X, y = make_moons(n_samples=200, noise=0.2, random_state=0)
    np.savez(tmp_path / "tracks" / "moons.npz", X=X, y=y)
    src = (ROOT / "solutions" / "loop.py").read_text(encoding="utf-8")
    old = "    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)"
    assert old in src
    src = src.replace(old, '    with np.load(Path(__file__).with_name("moons.npz")) as data:\n'
                           '        X, y = data["X"], data["y"]').replace("import random\n",
                                                                        "import random\nfrom pathlib import Path\n")
    _write(tmp_path / "solutions" / "m" / "loop.py", src)
    mine = _write(tmp_path / "me" / "loop.py", src)
    explored = kata("explore", str(mine), "-o", str(tmp_path / "page.html"), cwd=tmp_path)
    assert explored.returncode == 0, explored.stdout + explored.stderr
    assert (tmp_path / "page.html").stat().st_size > 0 and "Your loop: train loss" in explored.stdout
    traced = kata("trace", str(mine), cwd=tmp_path)
    assert traced.returncode == 0, traced.stdout + traced.stderr
