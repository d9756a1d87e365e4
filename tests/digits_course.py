"""A realistic course for tests: scikit-learn's bundled 8x8 digits (64 features, 10 classes), shipped by the course
as ``tracks/digits.npz`` beside its track file, with the reference reading it as CONTRIBUTING says
(``Path(__file__).with_name("digits.npz")``), one mutant, one kata, and a course file of weights (``[points]``) and
language. Built in a temporary folder outside the repository, with no edit to checker/.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

TRACK = """id = "digits"
order = 7
protocol = ["v1"]
reference = "solutions/digits/loop.py"
mutants = "mutants/digits"
katas = "katas/digits"

[title]
en = "Digits: 8x8 handwritten digits"
es = "Dígitos: dígitos manuscritos de 8x8"

[data]
file = "digits.npz"
n_samples = 1797
n_val = 297
stratify = true

[model]
widths = [64, 32, 10]

[thresholds]
converge_epochs = 20
converge_acc = 0.9
converge_reached = 0.9
epochs = 10
batch_size = 64
"""

COURSE = """title = "Digits course"
track = "digits"
{language}
[points]
"data.lesson" = 2
"reference.train_epoch" = 5
"loader.order" = 3

[read]
"reference.train_epoch" = "Lesson 4, section 4: zero_grad"
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

KATA = """mutant = "zero-grad-missing"

[title]
en = "Digits that will not settle"
es = "Dígitos que no se asientan"

[story]
en = "Predict first: with SGD at lr 0.1, should the loss ever climb back?"
es = "Primero, predice: con SGD y lr 0.1, ¿debería volver a subir la pérdida?"

[[hints]]
en = "backward() adds into .grad; something must clear it once per batch."
es = "backward() suma sobre .grad; algo debe vaciarlo una vez por lote."

[read]
en = "PyTorch docs: torch.optim.Optimizer.zero_grad."
es = "Documentación de PyTorch: torch.optim.Optimizer.zero_grad."

[symptom]
kind = "check_fails"
check = "steps.fresh_grads"
"""

READ = """    with np.load(Path(__file__).with_name("digits.npz")) as data:  # the course's file, beside this one
        X, y = data["X"], data["y"]"""


def digits_reference() -> str:
    """solutions/loop.py on the course's digits file, as CONTRIBUTING's "a track on a course's file" says."""
    src = (ROOT / "solutions" / "loop.py").read_text(encoding="utf-8")
    for old, new in (("import random\n", "import random\nfrom pathlib import Path\n"),
                     ("from sklearn.datasets import make_moons\n", ""),
                     ("    X, y = make_moons(n_samples=200, noise=0.2, random_state=seed)", READ),
                     ("test_size=50", "test_size=297"),
                     ("nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))",
                      "nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))")):
        assert old in src, old
        src = src.replace(old, new, 1)
    return src


def zero_grad_missing(source: str) -> str:
    """``source`` without its optimizer.zero_grad() (the course's mutant, by hand)."""
    assert "        optimizer.zero_grad()\n" in source
    return source.replace("        optimizer.zero_grad()\n", "", 1)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_digits_course(root: Path, *, language: str | None = None) -> Path:
    """The digits course in ``root`` (created); ``language``: the course's ``language`` field."""
    from sklearn.datasets import load_digits

    _write(root / "kata.toml", COURSE.format(language=f'language = "{language}"\n' if language else ""))
    _write(root / "tracks" / "digits.toml", TRACK)
    X, y = load_digits(return_X_y=True)
    np.savez(root / "tracks" / "digits.npz", X=(X / 16.0).astype(np.float64), y=y.astype(np.int64))
    _write(root / "solutions" / "digits" / "loop.py", digits_reference())
    _write(root / "mutants" / "digits" / "zero-grad-missing.toml", ZERO_GRAD)
    _write(root / "katas" / "digits" / "010-digits-that-will-not-settle.toml", KATA)
    return root
