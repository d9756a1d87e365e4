"""Children inherit nothing secret: they fork from the zygote, never from kata.

The probe (tests/zygote_probe.py) reads the child's whole memory through /proc/self/mem, the way native
code in a submission could, and looks for the reference's source and a classmate's file, both of which
this test process holds. A child forked from this process finds them (the control); a child forked from
the zygote finds neither, while it does find what it was given.
"""

from __future__ import annotations

import secrets
import sys

import pytest

from checker.base.paths import SOLUTIONS_DIR
from checker.grade.grading import Submission, grade
from checker.sandbox.events import Measured
from checker.sandbox.jobs import Job, Limits, run_jobs
from checker.sandbox.zygote import Task, zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/mem")

REFERENCE = (SOLUTIONS_DIR / "loop.py").read_text(encoding="utf-8")


def halves(text: str) -> tuple[bytes, bytes]:
    data = text.encode()
    return data[: len(data) // 2], data[len(data) // 2:]


def probe(job_target) -> list[bool]:
    [outcome] = run_jobs([Job(job_target, Limits(step_timeout=120, harden=False))], workers=1)
    found = [e.measured["found"] for e in outcome.events if isinstance(e, Measured)]
    assert found, outcome.output
    return found[0]


def test_a_zygote_child_holds_no_reference_and_no_classmate(lab):
    from tests.zygote_probe import scan

    classmate_token = "classmate-" + secrets.token_hex(12)
    own_token = "own-" + secrets.token_hex(12)
    classmate = REFERENCE.replace("def seed_everything", f"TOKEN = {classmate_token!r}\n\n\ndef seed_everything", 1)
    # a real grading first: the parent reads the reference and the classmate, a reference process answers
    reports = grade([Submission(classmate, "alice.py")], lab,
                    check_ids=["reference.make_loader", "reference.evaluate", "steps.per_batch"])
    assert reports[0].passed
    reference_line = next(line for line in REFERENCE.splitlines() if len(line) > 40 and line.lstrip().startswith("#"))
    pairs = [halves(own_token), halves(classmate_token), halves(reference_line)]
    own = f"x = {own_token!r}"

    from_zygote = probe(Task("tests.zygote_probe:scan", (pairs, own)))
    assert from_zygote[0], "the probe could not find what the child itself was given: it cannot see"
    assert from_zygote[1:] == [False, False], "a zygote child found a classmate's file or the reference's source"

    # the control: a child forked from this very process finds both, which is what the zygote prevents
    from_here = probe(scan(pairs, own))
    assert from_here == [True, True, True]


def test_the_zygote_is_one_per_process_and_survives_runs(lab):
    before = zygote().pid
    grade([Submission(REFERENCE, "loop.py")], lab, check_ids=["data.lesson"])
    assert zygote().pid == before and zygote().alive()


def test_a_killed_zygote_is_replaced(lab):
    import os
    import signal

    zygote().start()
    first = zygote().pid
    os.kill(first, signal.SIGKILL)
    zygote().process.wait()
    [report] = grade([Submission(REFERENCE, "loop.py")], lab, check_ids=["data.lesson"])
    assert report.passed and zygote().pid != first


def test_a_zygote_that_cannot_start_is_one_clear_line_and_exit_2(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import checker.sandbox.zygote as module
    from checker.cli import main

    broken = module.Zygote()
    monkeypatch.setattr(module, "_zygote", broken)
    monkeypatch.setattr(module, "_zygote_owner", __import__("os").getpid())
    monkeypatch.setattr(module.sys, "executable", "/bin/false")  # the interpreter cannot run
    solutions = __import__("checker.base.paths").base.paths.SOLUTIONS_DIR
    result = CliRunner().invoke(main, ["check", str(solutions / "loop.py"), "--only", "data.lesson"])
    broken.stop()
    assert result.exit_code == 2, result.output
    assert "could not start" in result.output and "Traceback" not in result.output
