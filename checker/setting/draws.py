"""Arguments the graded file cannot predict, drawn in the parent for every grading run.

The differential checks call each protocol function with these arguments, in the learner's child
and in the trusted reference process alike, and the parent compares the answers. The draw is made
after the file was read and before any child forks, and is never written anywhere the file could
read it beforehand. It comes either

- from a *grading secret* and the file's code (``Draw.from_secret``): a keyed BLAKE2b of the track
  and the code seeds the generator, so the same file and secret always get the same arguments (a
  regrade repeats) while a changed file gets new ones, and nobody without the secret can predict
  them; or
- without a secret, from the operating system's generator (``Draw.fresh``): every run differs.

A fixed draw can be given for tests (``Draw.from_seed``).
"""

from __future__ import annotations

import hashlib
import random
import secrets
from dataclasses import dataclass

from checker.setting import coverage
from checker.setting.coverage import Coverage


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
    coverage: Coverage | None = None
    """Every argument class's case (``checker.setting.coverage``), drawn after the fields above from the same rng."""

    @classmethod
    def fresh(cls, track=None) -> Draw:
        """A draw for ``track`` (a ``checker.setting.tracks.Track``; default: moons) from the OS's generator."""
        return cls.from_rng(random.Random(secrets.randbits(64)), track)

    @classmethod
    def from_secret(cls, secret: bytes, data: bytes, track=None) -> Draw:
        """The draw for the file whose code is ``data``, under the grading ``secret`` (not empty)."""
        return cls.from_rng(random.Random(secret_seed(secret, data, _track(track).id)), track)

    @classmethod
    def from_seed(cls, seed: int, track=None) -> Draw:
        return cls.from_rng(random.Random(seed), track)

    @classmethod
    def from_rng(cls, rng: random.Random, track=None) -> Draw:
        if track is None:
            from checker.setting.tracks import get_track

            track = get_track()
        n_train, n_val = track.data.n_train, track.data.n_val

        def sizes(choices: tuple[int, ...], *, short: bool) -> tuple[int, ...]:
            """``choices`` that fit the track: below its training set, never a last batch of one its model
            cannot train on and, with ``short``, leaving a short last batch (so a loader that drops or pads it
            shows)."""
            fit = tuple(b for b in choices if b < n_train and not track.model.leaves_one(n_train, b)
                        and (not short or n_train % b != 0))
            return fit or (max(1, n_train // 3),)

        def seed() -> int:
            return rng.randrange(1, 2**31 - 1)

        def lr(low: float, high: float) -> float:
            # log-uniform, rounded to 3 significant digits so messages stay readable
            return float(f"{low * (high / low) ** rng.random():.3g}")

        def train(epochs: int, scheduled: bool) -> TrainDraw:
            name = rng.choice(("sgd", "adam"))
            return TrainDraw(
                optimizer=name, lr=lr(0.02, 0.5) if name == "sgd" else lr(0.002, 0.05),
                batch_size=rng.choice(sizes((6, 10, 16, 20, 25, 40, 48, 64), short=False)),
                loader_seed=seed(), model_seed=seed(), epochs=epochs,
                scheduler=rng.choice((None, "step", "cosine")) if scheduled else None,
                step_size=rng.choice((1, 2)), gamma=float(f"{rng.uniform(0.3, 0.9):.2f}"),
                clip=rng.choice((None, float(f"{rng.uniform(0.05, 1.0):.2f}"))),
            )

        loader_seed = seed()
        other = seed()
        while other == loader_seed:
            other = seed()
        fields = dict(
            seed_everything=seed(), data_seed=rng.randrange(1, 10**6),
            # batch sizes that do not divide the training set (150 on moons), so the last batch is short
            loader_batch=rng.choice(sizes((4, 7, 8, 9, 11, 13, 16, 20, 23, 40, 64), short=True)),
            loader_seed=loader_seed, loader_other_seed=other, model_seed=seed(),
            sgd_lr=lr(0.001, 0.9), adam_lr=lr(0.0001, 0.05),
            train_epoch=train(1, scheduled=False), fit=train(3, scheduled=True),
            evaluate_seed=seed(), evaluate_rows=rng.randrange(min(7, n_val - 1), n_val),
        )
        # drawn last, so the fields above stay what they were for a given rng
        return cls(**fields, coverage=coverage.draw(rng, track))


DRAW_PERSON = b"kata-draw-v1"
"""BLAKE2b's personalisation for draws: a secret used elsewhere never yields the same seeds."""


def secret_seed(secret: bytes, data: bytes, track_id: str) -> int:
    """A 256-bit seed: BLAKE2b keyed by ``secret`` over the track's id and ``data`` (the file's code).

    Without the secret the seed cannot be told from random; a one-byte change of the file or of the
    secret gives an unrelated one.
    """
    if not secret:
        raise ValueError("a grading secret cannot be empty")
    key = secret if len(secret) <= 64 else hashlib.blake2b(secret, digest_size=64).digest()
    mac = hashlib.blake2b(key=key, digest_size=32, person=DRAW_PERSON)
    name = track_id.encode("utf-8")
    mac.update(len(name).to_bytes(4, "big") + name)
    mac.update(data)
    return int.from_bytes(mac.digest(), "big")


def _track(track):
    if track is None:
        from checker.setting.tracks import get_track

        return get_track()
    return track
