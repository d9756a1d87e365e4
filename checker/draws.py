"""Arguments the graded file cannot predict, drawn fresh in the parent for every grading run.

The differential checks call each protocol function with these arguments, in the learner's child
and in the trusted reference process alike, and the parent compares the answers. The draw comes
from the operating system's generator (``secrets``), is made after the file was read and before
any child forks, and is never written anywhere the file could read it beforehand. A fixed draw
can be given for tests (``Draw.from_seed``).
"""

from __future__ import annotations

import random
import secrets
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class TrainDraw:
    """One short training run: the checker builds the model, loader and scheduler; the file its optimizer."""

    optimizer: str
    lr: float
    batch_size: int
    loader_seed: int
    model_seed: int
    epochs: int
    scheduler: str | None
    """None, "step" or "cosine"."""
    step_size: int
    gamma: float
    clip: float | None


@dataclass(frozen=True)
class Draw:
    seed_everything: int
    data_seed: int
    loader_batch: int
    loader_seed: int
    loader_other_seed: int
    model_seed: int
    sgd_lr: float
    adam_lr: float
    train_epoch: TrainDraw
    fit: TrainDraw
    evaluate_seed: int
    evaluate_rows: int

    @classmethod
    def fresh(cls) -> Draw:
        return cls.from_rng(random.Random(secrets.randbits(64)))

    @classmethod
    def from_seed(cls, seed: int) -> Draw:
        return cls.from_rng(random.Random(seed))

    @classmethod
    def from_rng(cls, rng: random.Random) -> Draw:
        def seed() -> int:
            return rng.randrange(1, 2**31 - 1)

        def lr(low: float, high: float) -> float:
            # log-uniform, rounded to 3 significant digits so messages stay readable
            return float(f"{low * (high / low) ** rng.random():.3g}")

        def train(epochs: int, scheduled: bool) -> TrainDraw:
            name = rng.choice(("sgd", "adam"))
            return TrainDraw(
                optimizer=name, lr=lr(0.02, 0.5) if name == "sgd" else lr(0.002, 0.05),
                batch_size=rng.choice((6, 10, 16, 20, 25, 40, 48, 64)),
                loader_seed=seed(), model_seed=seed(), epochs=epochs,
                scheduler=rng.choice((None, "step", "cosine")) if scheduled else None,
                step_size=rng.choice((1, 2)), gamma=float(f"{rng.uniform(0.3, 0.9):.2f}"),
                clip=rng.choice((None, float(f"{rng.uniform(0.05, 1.0):.2f}"))),
            )

        loader_seed = seed()
        other = seed()
        while other == loader_seed:
            other = seed()
        return cls(
            seed_everything=seed(), data_seed=rng.randrange(1, 10**6),
            # batch sizes that do not divide 150, so the last batch is short
            loader_batch=rng.choice((4, 7, 8, 9, 11, 13, 16, 20, 23, 40, 64)),
            loader_seed=loader_seed, loader_other_seed=other, model_seed=seed(),
            sgd_lr=lr(0.001, 0.9), adam_lr=lr(0.0001, 0.05),
            train_epoch=train(1, scheduled=False), fit=train(3, scheduled=True),
            evaluate_seed=seed(), evaluate_rows=rng.randrange(7, 50),
        )

    def as_dict(self) -> dict:
        return asdict(self)
