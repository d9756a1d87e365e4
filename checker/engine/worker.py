"""The child's side of a job: load the loop file, then measure (checks) or train (kata run).

These functions build ``target(reporter)`` callables for ``sandbox.Job``; they run only in a
forked child. They report figures, never verdicts.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from checker.base.errors import LoopFileError
from checker.base.i18n import Message
from checker.loopfile.loading import TRACEBACK_HEAD, learner_traceback, load_loop
from checker.sandbox.hardening import private_folder
from checker.sandbox.jobs import Reporter
from checker.sandbox.zygote import preload
from checker.setting.tracks import shared_files

LOAD_TIMEOUT = 20.0
preload("checker.checks", "checker.setting.instruments", "checker.sandbox.tamper", __name__)
"""A new zygote imports the checks and this module before it forks (after torch: ``checker.setting.lab``)."""


def child_setup() -> None:
    """What every child sets before loading a file: one torch thread, forked DataLoader workers, and the same
    global random state."""
    import multiprocessing

    import torch

    torch.set_num_threads(1)
    seed_globals()
    # DataLoader workers (the data-pipeline track) are forked from this child: the loaded loop module
    # (`_kata_loop_N`) is not importable by name, so a forkserver or spawn start (Python 3.14's default on
    # Linux is forkserver) could not rebuild the file's Dataset in a worker. Fork, as Python 3.11-3.13 do.
    if multiprocessing.get_start_method(allow_none=True) != "fork":
        multiprocessing.set_start_method("fork", force=True)


def seed_globals(seed: int = 0) -> None:
    """Python's, NumPy's and torch's global generators, seeded: every child starts from the same state.

    A child inherits the parent's generators, and Python and NumPy seed theirs from the operating system
    when imported: a figure drawn from them unseeded (a dataset's jitter before the loop seeds anything,
    a worker's stream) would differ between two gradings of the same file. The draws of arguments come
    from the parent (``checker.setting.draws``), never from these.
    """
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def module_file(filename: str, track) -> str | None:
    """What a loaded file's ``__file__`` says in this child: where the track's data is a course's file and the
    child has a private folder (the file's copy lies there: ``Limits.shared_files``), that folder and the loop
    file's base name, so the loop's ``Path(__file__).with_name(NAME)`` finds the copy; else None (the real
    name). The course's own folder stays hidden from the child."""
    folder = private_folder()
    if folder is None or not shared_files(track):
        return None
    return os.path.join(folder, os.path.basename(filename))


def _load(source: str, filename: str, rep: Reporter, track=None):
    """Load and validate; on failure report ``file_error`` and return None.

    Right before the file runs: a tamper guard the reporter consults before every event it sends, and
    the audit hook (checker.sandbox.hardening) that refuses, and reports at once, what no loop needs.
    """
    import tempfile

    from checker.sandbox.hardening import hidden, install_audit_hook
    from checker.sandbox.tamper import TamperGuard

    rep.start("load", timeout=LOAD_TIMEOUT)
    import checker.setting.instruments  # noqa: F401 - loaded before the snapshot, so a patch to it is seen

    guard = TamperGuard()
    if hasattr(rep, "arm"):  # before every event, and at every optimizer step
        rep.arm(lambda: guard.changes(full=True), guard.changes)
    refused: list[str] = []

    def refuse(what: list[str]) -> None:
        refused.extend(what)
        rep.send({"event": "tampered", "what": what})

    # what the parent hid from this child (harden_child), refused to the file too: no track is read here
    install_audit_hook(filename, refuse, private_dir=tempfile.tempdir, secret_dirs=hidden())
    try:
        module = load_loop(source, filename, track, module_file(filename, track))
    except LoopFileError as exc:
        if not refused:  # a refusal already said why the file stopped
            rep.send({"event": "file_error", "kind": exc.kind, "message": exc.message,
                      **({"es": exc.es} if exc.es else {})})
        return None
    rep.send({"event": "loaded"})
    return module


def job_seconds(check_ids: Sequence[str], step_timeout: float) -> float:
    """A check job's total time, fixed when its child starts: the load limit and each check's limit, as the parent
    caps them (``Job.seconds``). No event the child sends extends it."""
    from checker.checks import REGISTRY

    return min(LOAD_TIMEOUT, step_timeout) + sum(min(REGISTRY[c].timeout, step_timeout) for c in check_ids)


def reference_seconds(runs: Sequence[tuple[Any, Sequence[str]]], step_timeout: float) -> float:
    """A reference process's total time: its load, then each draw's opening step and checks."""
    return min(LOAD_TIMEOUT, step_timeout) + sum(job_seconds(ids, step_timeout) for _, ids in runs)


CALLED_EXIT = Message(en="your loop called exit({code}) in the middle of the check",
                     es="tu bucle llamó a exit({code}) en mitad de la comprobación")
OUT_OF_MEMORY = Message(en="your loop ran out of memory (the checker's memory limit): {error}",
                        es="tu bucle se quedó sin memoria (el límite de memoria del comprobador): {error}")


def describe_exception(exc: BaseException, filename: str) -> str:
    """What stopped the learner's loop, in English (the child knows no language: ``in_both`` says it in both)."""
    if isinstance(exc, SystemExit):
        return CALLED_EXIT.render("en", code=repr(exc.code))
    if isinstance(exc, MemoryError) or "allocate memory" in str(exc):
        return OUT_OF_MEMORY.render("en", error=exc)
    return learner_traceback(exc, filename)


def in_both(error: str) -> Message:
    """A child's ``describe_exception`` text in both languages: kata's own words (the traceback's heading, the
    exit and memory sentences) translated, Python's own (frames, the exception) as they are."""
    spanish = error.replace(TRACEBACK_HEAD.en, TRACEBACK_HEAD.es, 1)
    for said in (CALLED_EXIT, OUT_OF_MEMORY):
        head, _, tail = said.en.partition("{")
        if spanish.startswith(head):
            rest = spanish[len(head):]
            field, _, after = tail.partition("}")
            value = rest[: len(rest) - len(after)] if after and rest.endswith(after) else rest
            spanish = said.render("es", **{field: value})
    return Message(en=error, es=spanish)


def check_target(source: str, filename: str, check_ids: Sequence[str], lab, draw=None,
                 anchor: int | None = None) -> Callable[[Reporter], None]:
    """Load the learner's file and measure ``check_ids`` on it; ``draw``: the differential checks' arguments;
    ``anchor``: the parent's draw that moves the initial weights of the checks it confirms (``checker.checks.confirm``),
    so that no figures recorded from another run stand in for this one's."""

    def target(rep: Reporter) -> None:
        from checker.checks import REGISTRY

        child_setup()
        lab.draw = draw
        lab.anchor = anchor
        # arms the reporter's tamper guard: it looks before every event
        module = _load(source, filename, rep, lab.track)
        if module is None:
            return
        for cid in check_ids:
            chk = REGISTRY[cid]
            rep.start(cid, timeout=chk.timeout)
            started = time.perf_counter()
            try:
                measured = chk.measure(module, lab)
            except BaseException as exc:
                rep.send({
                    "event": "raised", "check": cid, "type": type(exc).__name__,
                    "error": describe_exception(exc, filename),
                    "seconds": time.perf_counter() - started,
                })
            else:
                rep.send({
                    "event": "measured", "check": cid, "measured": measured,
                    "seconds": time.perf_counter() - started,
                })

    return target


CONFIRM_STEP = "confirm:"
"""A confirming process opens the figures of its ``i``-th submission with a step named ``confirm:i``."""


def confirm_target(groups: Sequence[tuple[int | None, Sequence[tuple[str, dict]]]], lab) -> Callable[[Reporter], None]:
    """A trusted process (it loads no learner file): each check's figures recomputed from the witness its learner's
    child reported (``checker.checks.confirm``), sent as that check's ``measured``.

    ``groups``: one ``(anchor, items)`` pair per submission, answered in turn in this one process (many submissions
    cost one fork, not one each); before a submission's figures the process opens a step ``confirm:i``
    (``CONFIRM_STEP``), so the parent knows whose they are, and resets the global generators and the anchor, so a
    figure never depends on the submissions confirmed before it."""
    groups = [(anchor, list(items)) for anchor, items in groups]

    def target(rep: Reporter) -> None:
        from checker.checks import REGISTRY
        from checker.checks.confirm import confirm

        child_setup()
        for i, (anchor, items) in enumerate(groups):
            rep.start(f"{CONFIRM_STEP}{i}", timeout=LOAD_TIMEOUT)
            seed_globals()
            lab.anchor = anchor
            for cid, measured in items:
                rep.start(cid, timeout=REGISTRY[cid].timeout)
                started = time.perf_counter()
                rep.send({"event": "measured", "check": cid, "measured": confirm(cid, measured, lab),
                          "seconds": time.perf_counter() - started})

    return target


REFERENCE_FILENAME = "reference/loop.py"
DRAW_STEP = "draw:"
"""A reference process opens the answers of its ``i``-th draw with a step named ``draw:i``."""


def reference_target(runs: Sequence[tuple[Any, Sequence[str]]], lab, source: str) -> Callable[[Reporter], None]:
    """The trusted reference process: the differential checks' answers, computed on the reference loop.

    ``runs``: ``(draw, check ids)`` pairs, answered one draw after the other in this one process (many
    submissions each with its own draw cost one fork and one load, not one each); before the answers of
    its ``i``-th draw the process opens a step ``draw:i`` (``DRAW_STEP``), so the parent knows whose they
    are, and that the draws before are complete. The global generators are reset at each draw, so an
    answer never depends on the draws answered before it.

    ``source``: the reference's source, read in the parent when the job is planned and handed to this
    child alone; the child is forked from the zygote, like a learner's, and loads no learner file.
    """
    runs = [(draw, list(ids)) for draw, ids in runs]

    def target(rep: Reporter) -> None:
        from checker.checks import REGISTRY

        child_setup()
        rep.start("load", timeout=LOAD_TIMEOUT)
        module = load_loop(source, REFERENCE_FILENAME, lab.track, module_file(REFERENCE_FILENAME, lab.track))
        for i, (draw, check_ids) in enumerate(runs):
            rep.start(f"{DRAW_STEP}{i}", timeout=LOAD_TIMEOUT)
            lab.draw = draw
            seed_globals()
            for cid in check_ids:
                rep.start(cid, timeout=REGISTRY[cid].timeout)
                started = time.perf_counter()
                try:
                    measured = REGISTRY[cid].measure(module, lab)
                except Exception as exc:
                    rep.send({"event": "raised", "check": cid, "type": type(exc).__name__,
                              "error": learner_traceback(exc, REFERENCE_FILENAME)})
                else:
                    rep.send({"event": "measured", "check": cid, "measured": measured,
                              "seconds": time.perf_counter() - started})

    return target


def draw_index(step: object, prefix: str = DRAW_STEP) -> int | None:
    """The draw a reference process's step ``draw:i`` opens (with ``prefix`` CONFIRM_STEP: the submission a
    confirming process's step ``confirm:i`` opens), else None."""
    if isinstance(step, str) and step.startswith(prefix) and step[len(prefix):].isdigit():
        return int(step[len(prefix):])
    return None


def _plain(value: Any) -> Any:
    """A history value as a JSON number; tensors become floats (the caller is told)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value if not (isinstance(value, float) and math.isnan(value)) else float("nan")
    item = getattr(value, "item", None)
    if callable(item):
        return float(item())
    return repr(value)


def run_target(source: str, filename: str, settings, lab) -> Callable[[Reporter], None]:
    """Train the lesson's setting with the file's own functions; report the history."""

    def target(rep: Reporter) -> None:
        child_setup()
        module = _load(source, filename, rep, lab.track)
        if module is None:
            return
        rep.start("run", timeout=settings.timeout)
        try:
            history, warnings = run_lesson(module, settings, lab)
        except BaseException as exc:
            rep.send({"event": "raised", "check": "run", "type": type(exc).__name__,
                      "error": describe_exception(exc, filename)})
            return
        rep.send({"event": "history", "history": history, "warnings": warnings})

    return target


def make_track_loader(loop, track, X, y, *, batch_size: int, seed: int, augment: bool = True):
    """The loop's own loader over ``(X, y)``: through its ``make_dataset`` where the track's protocol has one
    (the data-pipeline track; ``augment=False`` keeps the rows as they are), else ``make_loader(X, y, ...)``
    as protocol v1 says."""
    if track is not None and "make_dataset" in track.functions:
        return loop.make_loader(loop.make_dataset(X, y, augment=augment), batch_size=batch_size, seed=seed)
    return loop.make_loader(X, y, batch_size=batch_size, seed=seed)


def run_lesson(loop, settings, lab) -> tuple[list[dict], list[str]]:
    """The lesson's run (a ``checker.runs.training.RunSettings``): data, loader, model, optimizer and schedule from the
    loop's own functions."""
    import torch
    from torch import nn

    seed, device, epochs = settings.seed, settings.device, settings.epochs
    loop.seed_everything(seed=seed)
    X_train, y_train, X_val, y_val = loop.make_data(seed=0)
    loader = make_track_loader(loop, lab.track, X_train, y_train, batch_size=settings.batch_size, seed=seed)
    model = loop.make_model(seed=seed).to(device)
    optimizer = loop.make_optimizer(model, name=settings.optimizer, lr=settings.lr)
    scheduler = None
    if settings.scheduler == "step":
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    elif settings.scheduler == "cosine":
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history = loop.fit(
        model, optimizer, loader, nn.CrossEntropyLoss(), epochs,
        scheduler=scheduler, val=(X_val, y_val), clip_norm=settings.clip, device=device,
    )
    return clean_history(history)


def clean_history(history) -> tuple[list[dict], list[str]]:
    """What the file's ``fit`` returned, as rows of plain numbers, and warnings about what was not one; a
    TypeError when it is not a list of dicts."""
    warnings: list[str] = []
    if not isinstance(history, list):
        raise TypeError(f"fit returned a {type(history).__name__}; the protocol asks for a list of dicts")
    rows = []
    for i, row in enumerate(history, start=1):
        if not isinstance(row, dict):
            raise TypeError(f"fit's history item {i} is a {type(row).__name__}, not a dict")
        clean = {}
        for key, value in row.items():
            if not isinstance(value, int | float) and not isinstance(value, bool):
                warnings.append(f"epoch {i}: {key} is a {type(value).__name__}, not a plain number")
            clean[str(key)] = _plain(value)
        rows.append(clean)
    return rows, sorted(set(warnings))[:5]
