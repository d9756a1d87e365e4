"""The parent trusts no field: every event line is parsed against a strict schema (checker/sandbox/events.py).

A child may be hostile and may hold the job's signing key (it runs in the same process as the code that
sends), so a signed line proves only where it came from, never that it is well formed. These tests send
what a hostile child could, and check that the parent neither raises nor takes it.
"""

from __future__ import annotations

import json
import math

import pytest

from checker.sandbox.events import (
    MAX_DEPTH,
    MAX_LINE,
    Done,
    History,
    Isolation,
    Kind,
    LineBuffer,
    Malformed,
    Measured,
    Raised,
    Start,
    Tampered,
    parse,
)
from checker.sandbox.jobs import Job, Limits, run_job


def line(**event) -> bytes:
    return json.dumps(event).encode()


# ------------------------------------------------------------------------------------------ the schema


def test_each_kind_parses_into_its_record():
    assert parse(line(event="start", step="load", timeout=20)) == Start("load", 20.0)
    assert parse(line(event="start", step="x", timeout=None)) == Start("x", None)
    assert parse(line(event="done")) == Done()
    assert parse(line(event="measured", check="a.b", measured={"x": [1, 2.5, None, "s"]}, seconds=0.5)) == \
        Measured("a.b", {"x": [1, 2.5, None, "s"]}, 0.5)
    assert parse(line(event="raised", check="a.b", type="ValueError", error="boom")) == \
        Raised("a.b", "ValueError", "boom", 0.0)
    assert parse(line(event="tampered", what=["gc.get_objects"])) == Tampered(("gc.get_objects",))
    assert parse(line(event="history", history=[{"epoch": 1}], warnings=[])) == History([{"epoch": 1}], ())
    assert parse(line(event="isolation", level="reduced", why=["no mount namespace"])).level == "reduced"
    assert {k.value for k in Kind} == {"start", "done", "loaded", "measured", "raised", "file_error", "tampered",
                                       "internal_error", "history", "figures", "isolation"}


def test_a_nan_loss_is_a_measurement():
    event = parse(b'{"event": "measured", "check": "loss.falls", "measured": {"losses": [NaN, Infinity]}}')
    assert math.isnan(event.measured["losses"][0]) and event.measured["losses"][1] == math.inf


@pytest.mark.parametrize("payload, why", [
    (b'{"event": "start", "step": "x", "timeout": "boom"}', "timeout"),
    (b'{"event": "start", "step": "x", "timeout": NaN}', "timeout"),
    (b'{"event": "start", "step": "x", "timeout": -Infinity}', "timeout"),
    (b'{"event": "start", "step": "x", "timeout": -1}', "timeout"),
    (b'{"event": "start", "step": "x", "timeout": true}', "timeout"),
    (b'{"event": "start", "step": 7}', "step"),
    (b'{"event": "start", "step": ""}', "step"),
    (b'{"event": "start"}', "wrong keys"),
    (b'{"event": "done", "extra": 1}', "wrong keys"),
    (b'{"event": "measured", "check": "x", "measured": [1]}', "object"),
    (b'{"event": "measured", "check": "x", "measured": {}, "seconds": "0"}', "seconds"),
    (b'{"event": "raised", "check": "x", "type": "E", "error": 5}', "error"),
    (b'{"event": "tampered", "what": "a string"}', "what"),
    (b'{"event": "isolation", "level": "total", "why": []}', "isolation level"),
    (b'{"event": "verdict", "passed": true}', "unknown event kind"),
    (b'{"event": ["start"]}', "unknown event kind"),
    (b'["start"]', "JSON object"),
    (b'{"event": "start", "step": "x"', "not JSON"),
    (b'{"event": "start", "step": "x", "timeout": 1' + b'0' * 5000 + b'}', "not JSON"),
])
def test_malformed_events_are_refused_with_a_reason(payload, why):
    with pytest.raises(Malformed, match=why):
        parse(payload)


def test_sizes_are_bounded():
    deep: object = 1
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(Malformed, match="nests deeper"):
        parse(line(event="measured", check="x", measured={"deep": deep}))
    with pytest.raises(Malformed, match="more than"):
        parse(line(event="measured", check="x", measured={"many": [0] * 200_000}))
    with pytest.raises(Malformed, match="text"):
        parse(line(event="raised", check="x", type="E", error="e" * 100_000))
    with pytest.raises(Malformed, match="event line of"):
        parse(b" " * (MAX_LINE + 1))


def test_lines_are_split_in_linear_time_and_an_overlong_one_is_dropped_whole():
    buffer = LineBuffer(limit=1000)
    chunk = b"x" * 400
    got = []
    for _ in range(50):  # 20 kB without a newline: dropped, never kept
        got += buffer.feed(chunk)
        assert len(buffer._data) <= 1000
    got += buffer.feed(b"tail\nfirst\nsec")
    got += buffer.feed(b"ond\n")
    assert got == [b"first", b"second"] and buffer.overlong == 1


# ------------------------------------------------------------------------------------------ in the parent


def _hostile(rep):
    rep.start("ok", timeout=30)
    rep.send({"event": "start", "step": "boom", "timeout": "boom"})
    rep.send({"event": "start", "step": "nan", "timeout": float("nan")})
    rep.send({"event": "measured", "check": "after", "measured": {}})


def test_a_malformed_signed_event_is_tampering_and_never_raises_in_the_parent():
    outcome = run_job(Job(_hostile, Limits(step_timeout=30)))
    kinds = [e.kind for e in outcome.events]
    assert kinds.count(Kind.TAMPERED) == 1  # the first says why
    tampered = next(e for e in outcome.events if isinstance(e, Tampered))
    assert "malformed event" in tampered.what[0] and "timeout" in tampered.what[0]
    assert outcome.finished and outcome.current_step == "ok"  # the bad steps never reached the deadline logic


def _flood(rep):
    import os

    rep.start("flood", timeout=30)
    junk = b"y" * (1 << 20)
    for _ in range(12):  # 12 MiB in one line, past MAX_LINE
        os.write(rep._fd, junk)
    os.write(rep._fd, b"\n")
    rep.send({"event": "measured", "check": "after", "measured": {"ok": True}})


def test_an_endless_line_costs_bounded_memory_and_is_tampering():
    outcome = run_job(Job(_flood, Limits(step_timeout=60)))
    assert any(isinstance(e, Tampered) for e in outcome.events)
    assert any(isinstance(e, Measured) and e.check == "after" for e in outcome.events)


def test_a_fault_while_taking_an_event_marks_that_file_and_the_others_are_graded(lab, monkeypatch):
    from checker.base.paths import SOLUTIONS_DIR
    from checker.engine.grading import Submission, _Grader, grade

    reference = (SOLUTIONS_DIR / "loop.py").read_text(encoding="utf-8")
    real = _Grader._on_event

    def faulty(self, job, event):
        if job.tag[0] != "reference" and job.tag[0].sub.filename == "bad.py":
            raise KeyError("a bug of kata's")
        return real(self, job, event)

    monkeypatch.setattr(_Grader, "_on_event", faulty)
    good, bad = grade([Submission(reference, "good.py"), Submission(reference, "bad.py")], lab,
                      check_ids=["data.lesson", "steps.per_batch"])
    assert good.passed and good.error is None
    assert not bad.passed and bad.error_kind == "internal" and "KeyError" in bad.error


def test_isolation_is_reported_per_submission(lab):
    from checker.engine.grading import Submission, _State

    st = _State(Submission("", "x.py"), [], "en", None)
    st.isolation(Isolation("full"))
    st.isolation(Isolation("reduced", ("no mount namespace",)))
    st.isolation(Isolation("full"))
    data = st.report.to_json()
    assert data["isolation"] == "reduced" and data["isolation_why"] == ["no mount namespace"]


def test_every_format_says_how_the_children_were_isolated(runner):
    """`kata check --json` and Gradescope carry the children's isolation; a reduced one is said in words."""
    from checker.base.paths import SOLUTIONS_DIR
    from checker.cli import main
    from checker.engine.formats import gradescope_results
    from checker.engine.grading import CheckResult, Report

    result = runner.invoke(main, ["check", str(SOLUTIONS_DIR / "loop.py"), "--json", "--only", "data.lesson"])
    data = json.loads(result.output)
    assert data["isolation"] in ("full", "reduced") and result.exit_code == 0
    if data["isolation"] == "reduced":
        assert data["isolation_why"]
    report = Report("x.py", [CheckResult("data.lesson", "data", "t", "pass", "ok")], isolation="reduced",
                    isolation_why=["the filesystem is not closed: no mount namespace"])
    gs = gradescope_results(report, "es")
    assert gs["extra_data"]["isolation"] == "reduced"
    assert "aislamiento reducido" in gs["output"] and "no mount namespace" in gs["output"]
    assert "isolation" in report.to_json() and gs["score"] == 1.0
