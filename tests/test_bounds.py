"""Bounds no event can move (issue 31): a job's total time is fixed when its child starts, and the bytes of events
it may send are capped.

A child may hold its job's signing key (it runs where the learner's code runs), so every event here is validly
signed: a signed ``start`` sent again and again must not keep a step alive, and a flood of valid events must cost
the parent a bounded memory and end the job as tampering.
"""

from __future__ import annotations

import time

from checker.sandbox.events import MAX_JOB_BYTES, Measured, Start, Tampered
from checker.sandbox.jobs import DONE_GRACE, Clock, Job, Limits, run_job

# ------------------------------------------------------------------------------------------ the clock


def test_a_repeated_start_moves_no_deadline():
    """The issue's load step: limited to 20 s, a signed `start` every 8 s once kept it alive 112 s."""
    clock = Clock(0.0, total=200.0, step_limit=20.0)
    clock.start("load", 20.0, now=0.0)
    for now in range(8, 120, 8):
        clock.start("load", 20.0, now=float(now))
        assert clock.deadline == 20.0


def test_no_step_ends_past_the_jobs_fixed_total():
    clock = Clock(0.0, total=30.0, step_limit=20.0)
    for i, now in enumerate(range(0, 100, 5)):  # a new step name each time: each asks for 20 s more
        clock.start(f"step{i}", 20.0, now=float(now))
        assert clock.deadline <= clock.end == 30.0
    assert clock.deadline == 30.0


def test_a_step_asks_for_less_never_for_more_than_its_limit():
    clock = Clock(0.0, total=100.0, step_limit=20.0)
    clock.start("a", 5.0, now=1.0)
    assert clock.deadline == 6.0
    clock.start("b", 500.0, now=2.0)
    assert clock.deadline == 22.0
    clock.start("c", None, now=3.0)
    assert clock.deadline == 23.0


def test_after_done_no_start_counts():
    clock = Clock(0.0, total=100.0, step_limit=20.0)
    clock.start("a", 20.0, now=1.0)
    clock.done(now=2.0)
    assert clock.deadline == 2.0 + DONE_GRACE
    clock.start("b", 20.0, now=3.0)
    clock.done(now=3.0)
    assert clock.deadline == 2.0 + DONE_GRACE


def test_a_job_without_a_planned_total_gets_two_steps():
    job = Job(lambda rep: None, Limits(step_timeout=7.0))
    assert job.total == 14.0
    assert Job(lambda rep: None, Limits(step_timeout=7.0), seconds=3.0).total == 3.0


def test_a_check_jobs_total_is_its_load_and_its_checks_limits():
    from checker.checks import REGISTRY
    from checker.engine.worker import LOAD_TIMEOUT, job_seconds, reference_seconds

    ids = ["steps.per_batch", "converge.adam"]
    assert job_seconds(ids, 60.0) == LOAD_TIMEOUT + sum(REGISTRY[c].timeout for c in ids)
    assert job_seconds(ids, 5.0) == 5.0 * 3  # the request's --timeout caps the load and every check
    assert reference_seconds([(None, ids), (None, ids[:1])], 60.0) == \
        LOAD_TIMEOUT + job_seconds(ids, 60.0) + job_seconds(ids[:1], 60.0)


# ------------------------------------------------------------------------------------------ in the parent


def _restarts(rep):
    rep.start("load", timeout=1)
    while True:  # a signed start again and again, under the same name and under new ones
        time.sleep(0.1)
        rep.start("load", timeout=1)
        rep.start(f"x{time.monotonic()}", timeout=1)


def test_a_child_that_keeps_starting_steps_ends_at_its_fixed_total():
    outcome = run_job(Job(_restarts, Limits(step_timeout=1), seconds=2))
    assert outcome.timed_out_step is not None and not outcome.finished
    assert sum(isinstance(e, Start) for e in outcome.events) >= 2  # it did send them, and they were taken


BLOCK = "z" * 60_000


def _valid_flood(rep):
    rep.start("flood", timeout=60)
    filler = [BLOCK] * 16  # about 1 MiB a line: each one valid, signed, within every per-line cap
    for i in range(200):  # 200 MiB in all
        rep.send({"event": "measured", "check": f"c{i}", "measured": {"filler": filler}})


def test_a_flood_of_valid_events_is_tampering_and_the_parent_holds_a_bounded_amount():
    outcome = run_job(Job(_valid_flood, Limits(step_timeout=60)))
    tampered = [e for e in outcome.events if isinstance(e, Tampered)]
    assert tampered and "MiB of events" in tampered[0].what[0]
    assert not outcome.finished  # killed: it never got to the end of its flood
    kept = [e for e in outcome.events if isinstance(e, Measured)]
    held = sum(len(BLOCK) * len(e.measured["filler"]) for e in kept)
    assert 0 < held <= MAX_JOB_BYTES
    assert len(kept) < 200
