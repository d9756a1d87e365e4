"""What a check is, and the registry every check joins.

A check has two halves:
- ``measure(loop, lab) -> dict`` runs in the sandboxed child: it drives the learner's
  protocol functions with the lab's instruments and returns plain figures (JSON-able);
- ``judge(measured) -> Verdict`` runs in the parent, where the learner's code cannot reach:
  it decides pass or fail from those figures and picks the message that quotes them.

A *differential* check (``reference=True``) reads the arguments the parent drew (``lab.draw``);
its measure also runs in the trusted reference process, on the reference loop, and its judge
is ``judge(measured, reference_measured)``: it compares the file's answers with the reference's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from checker.base.i18n import Message

FAMILIES = (
    "data", "loader", "model", "optimizer", "steps", "loss", "schedule",
    "clip", "modes", "eval", "memory", "repro", "device", "converge", "reference",
    "best", "pipeline",
)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: Message
    params: dict[str, Any] = field(default_factory=dict)

    def render(self, lang: str = "en") -> str:
        return self.message.render(lang, **self.params)


def passed(message: Message, **params: Any) -> Verdict:
    return Verdict(True, message, params)


def failed(message: Message, **params: Any) -> Verdict:
    return Verdict(False, message, params)


@dataclass(frozen=True)
class Check:
    id: str
    family: str
    title: Message
    measure: Callable[[Any, Any], dict]
    judge: Callable[[dict], Verdict]
    cost: float = 10.0
    """About how many milliseconds the measure takes on the moons reference, on one core: how ``kata check``
    shares checks between its processes (a track's [costs] table, measured on its own reference, overrides it)."""
    timeout: float = 30.0
    """Seconds the measure may take before the child is killed."""
    devices: tuple[str, ...] = ("cpu", "cuda")
    reference: bool = False
    """Differential: measured in the reference process too; the judge takes both answers."""
    calls: tuple[str, ...] = ()
    """The protocol functions the measure calls: the check runs on a track that declares them all."""
    protocol: str = "v1"
    """The protocol group (``checker.loopfile.protocol.PROTOCOLS``) whose signatures those calls follow."""
    early: bool = False
    """The measure builds no optimizer (nor does the reference's code it calls), so it needs no torch._dynamo: in
    ``kata check`` it runs in a child forked while the zygote still imports that (``Job.early``). A file that
    builds one anyway is still graded alike, only later by the import."""


REGISTRY: dict[str, Check] = {}

_JUDGING: ContextVar[Any] = ContextVar("kata_judging_track", default=None)


@contextmanager
def judging(track) -> Iterator[None]:
    """Judges called inside see ``track`` (a ``checker.setting.tracks.Track``) as :func:`judged_track`."""
    token = _JUDGING.set(track)
    try:
        yield
    finally:
        _JUDGING.reset(token)


def judged_track():
    """The track a judge compares against: the one the parent is grading (default: moons).

    Judges run in the parent, so what they expect (sizes, shapes, thresholds) comes from the parent's
    own track, never from figures the child reported.
    """
    track = _JUDGING.get()
    if track is None:
        from checker.setting.tracks import get_track

        track = get_track()
    return track


class _Pending:
    def __init__(self, measure: Callable, **spec: Any):
        self.measure = measure
        self.spec = spec

    def judge(self, fn: Callable[[dict], Verdict]) -> Check:
        chk = Check(measure=self.measure, judge=fn, **self.spec)
        if chk.id in REGISTRY:
            raise ValueError(f"check {chk.id!r} registered twice")
        if chk.family not in FAMILIES:
            raise ValueError(f"check {chk.id!r}: unknown family {chk.family!r}")
        if not chk.calls:
            raise ValueError(f"check {chk.id!r}: declare the protocol functions it calls (calls=...)")
        REGISTRY[chk.id] = chk
        return chk


def check(
    id: str, *, family: str, title: Message, cost: float = 10.0, timeout: float = 30.0,
    devices: tuple[str, ...] = ("cpu", "cuda"), reference: bool = False, calls: tuple[str, ...] = (),
    protocol: str = "v1", early: bool = False,
) -> Callable[[Callable], _Pending]:
    """Declare a check's measure; then give its judge with ``@<name>.judge``."""

    def deco(measure: Callable) -> _Pending:
        return _Pending(measure, id=id, family=family, title=title, cost=cost, timeout=timeout, devices=devices,
                        reference=reference, calls=calls, protocol=protocol, early=early)

    return deco
