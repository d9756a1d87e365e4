"""The lesson's fixed setting (CURRICULUM.md), computed independently of any loop file."""

from __future__ import annotations

from dataclasses import dataclass

N_SAMPLES = 200
NOISE = 0.2
DATA_SEED = 0
N_VAL = 50
N_TRAIN = N_SAMPLES - N_VAL
BATCH_SIZE = 32
BATCH_SIZES = (32, 32, 32, 32, 22)
N_PARAMS = 82  # Linear(2, 16) + Linear(16, 2)
STEP_SIZE, GAMMA = 10, 0.5  # kata run --scheduler step


@dataclass(frozen=True)
class LessonData:
    X_train: object
    y_train: object
    X_val: object
    y_val: object

    def as_tuple(self) -> tuple:
        return self.X_train, self.y_train, self.X_val, self.y_val


def lesson_data(seed: int = DATA_SEED) -> LessonData:
    """The 150/50 stratified split of make_moons(200, noise=0.2), as float32/int64 tensors."""
    import torch
    from sklearn.datasets import make_moons
    from sklearn.model_selection import train_test_split

    X, y = make_moons(n_samples=N_SAMPLES, noise=NOISE, random_state=seed)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=N_VAL, random_state=seed, stratify=y)
    return LessonData(
        torch.tensor(X_tr, dtype=torch.float32),
        torch.tensor(y_tr, dtype=torch.int64),
        torch.tensor(X_va, dtype=torch.float32),
        torch.tensor(y_va, dtype=torch.int64),
    )


def import_heavy() -> None:
    """Import torch and scikit-learn in parallel (two threads overlap part of the work).

    Called once in the parent before forking children, so no child pays the import.
    """
    import os
    import threading

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")

    def sklearn_imports() -> None:
        import sklearn.datasets  # noqa: F401
        import sklearn.model_selection  # noqa: F401

    thread = threading.Thread(target=sklearn_imports, daemon=True)
    thread.start()
    import torch  # noqa: F401

    thread.join()
