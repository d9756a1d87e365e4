"""What makes grading cheaper must not change a verdict: the mechanisms behind benchmarks/bench_grade.py's figure.

- a report's JSON shares its figures instead of deep-copying them (``CheckResult.to_json``);
- grading many files while the zygote warms answers every draw's early reference checks in one early process, on
  the core the zygote's import leaves idle (``grading._reference_parts``), with the verdicts grading without it
  gives.
"""

from __future__ import annotations

import sys
from dataclasses import asdict

import pytest

from checker.base.paths import SOLUTIONS_DIR
from checker.checks import REGISTRY
from checker.engine.grading import CheckResult, Report, Status, Submission, grade

REFERENCE = (SOLUTIONS_DIR / "loop.py").read_text(encoding="utf-8")


def test_a_report_as_json_is_what_asdict_gave_and_shares_the_figures():
    measured = {"witness": {"steps": [[0.5, 0.25], [1e-3]]}, "loss": [2.0, float("nan")], "ok": True}
    res = CheckResult("clip.norm", "clip", "Clip", Status.FAIL, "no", measured, 0.5)
    assert res.to_json() == asdict(res) and res.to_json()["measured"] is measured
    report = Report(file="a.py", checks=[res])
    data = report.to_json()
    assert data["checks"] == [asdict(res)] and data["checks"][0]["status"] == "fail"


def _plan(lab, n_files: int, early: bool):
    from checker.engine.grading import _batches, _Grader, _ReferenceRun, _State
    from checker.sandbox.jobs import Limits
    from checker.setting.draws import Draw

    ids = ["data.lesson", "steps.per_batch", "reference.make_data", "reference.fit", "reference.evaluate"]
    runs = [_ReferenceRun(Draw.from_seed(i, lab.track), [c for c in ids if REGISTRY[c].reference])
            for i in range(n_files)]
    states = [_State(Submission(REFERENCE, f"f{i}.py"), ids, "en", run) for i, run in enumerate(runs)]
    jobs = _Grader(lab, Limits(), "en", None, None, states).plan(states, _batches(runs, 2), 1, early=early)
    return runs, jobs


def test_many_files_answer_every_draws_early_reference_checks_in_one_early_process(lab):
    runs, jobs = _plan(lab, 5, early=True)
    references = [job for job in jobs if job.tag[0] == "reference"]
    early = [job for job in references if job.early]
    assert len(early) == 1, "one early reference process, whatever the number of draws"
    [batch] = [job.tag[1] for job in early]
    assert batch.runs == runs and all(batch.ids(run) == ["reference.make_data", "reference.evaluate"] for run in runs)
    late = [job.tag[1] for job in references if not job.early]
    assert len(late) == 2 and [run for part in late for run in part.runs] == runs
    assert all(part.ids(run) == ["reference.fit"] for part in late for run in part.runs)
    assert all(run.open == 2 for run in runs)
    files = [job for job in jobs if job.tag[0] != "reference"]
    # each file keeps its early checks in its one child: a child more per file would cost a fork and a load
    assert len(files) == 5 and not any(job.early for job in files)
    assert all(job.tag[1] == ["data.lesson", "steps.per_batch", "reference.make_data", "reference.fit",
                              "reference.evaluate"] for job in files), [job.tag[1] for job in files]


def test_one_file_still_splits_its_own_early_checks(lab):
    runs, jobs = _plan(lab, 1, early=True)
    assert sorted((job.tag[0] == "reference", job.early) for job in jobs) == [
        (False, False), (False, True), (True, False), (True, True)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote's twin")
def test_early_reference_answers_for_many_files_give_the_verdicts_of_a_grading_without_them(lab):
    from checker.sandbox.zygote import zygote

    broken = REFERENCE.replace("n_samples=", "n_samples=1 + ", 1)  # another data set: make_data differs
    subs = [Submission(REFERENCE, "a.py"), Submission(broken, "b.py"), Submission(REFERENCE + "\n# c\n", "c.py")]
    ids = ["reference.make_data", "reference.evaluate", "reference.make_optimizer", "data.lesson"]
    verdicts = []
    for early in (True, False):
        zygote().stop()
        zygote().start()  # warming: early jobs fork from its twin
        reports = grade(subs, lab, check_ids=ids, secret=b"class secret", early=early)
        verdicts.append([[(c.id, c.status, c.message) for c in r.checks] for r in reports])
    assert verdicts[0] == verdicts[1]
    by_id = [{cid: status for cid, status, _ in checks} for checks in verdicts[0]]
    assert by_id[0]["reference.make_data"] == by_id[2]["reference.make_data"] == "pass"
    assert by_id[1]["reference.make_data"] == "fail" and all(len(b) == len(ids) for b in by_id)


CONFIRMED = ["steps.fresh_grads", "clip.norm"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote")
def test_many_files_figures_are_confirmed_by_at_most_workers_processes_with_the_verdicts_each_gets_alone(
        lab, monkeypatch):
    """Confirming is shared out: three files' figures go to two trusted processes (``workers``), each answering its
    files in turn; every file gets the verdicts it gets graded alone (a confirming process per file, as before)."""
    from checker.catalogue.mutants import mutant_source
    from checker.engine import grading

    subs = [Submission(REFERENCE, "a.py"), Submission(mutant_source("zero-grad-missing"), "b.py"),
            Submission(mutant_source("clip-after-step"), "c.py")]
    confirming: list[int] = []
    real = grading.run_jobs

    def spy(jobs, **kwargs):
        confirming.extend(len(job.tag[1].entries) for job in jobs if job.tag[0] == "confirm")
        return real(jobs, **kwargs)

    monkeypatch.setattr(grading, "run_jobs", spy)
    together = grade(subs, lab, check_ids=CONFIRMED, secret=b"k", workers=2)
    assert sorted(confirming) == [1, 2], "three files' figures, two trusted processes"
    confirming.clear()
    alone = [grade([sub], lab, check_ids=CONFIRMED, secret=b"k", workers=2)[0] for sub in subs]
    assert confirming == [1, 1, 1]

    def verdicts(report):
        return [(c.id, c.status, c.message) for c in report.checks], report.integrity

    assert [verdicts(r) for r in together] == [verdicts(r) for r in alone]
    assert [c.status for c in together[0].checks] == ["pass", "pass"]
    assert {c.id: c.status for c in together[1].checks}["steps.fresh_grads"] == "fail"
    assert {c.id: c.status for c in together[2].checks}["clip.norm"] == "fail"


def test_a_confirming_process_that_stops_costs_no_classmate_its_confirmation(lab):
    """A confirming process that dies after answering one file: the files it left unanswered are confirmed again,
    each in a process of its own (what stopped it may be another file's witness); a file's own process that dies
    leaves its checks not confirmed, an error, never a pass."""
    from checker.checks.confirm import UNCONFIRMED
    from checker.engine.grading import _Grader, _State
    from checker.sandbox.events import Measured, Start
    from checker.sandbox.jobs import Limits, Outcome

    cid = "clip.norm"
    states = [_State(Submission("", f"{name}.py"), [cid], "en", None) for name in ("a", "b")]
    grader = _Grader(lab, Limits(), "en", None, None, states)
    for st in states:
        st.confirming[cid] = ({"witness": {}}, 0.1)
        grader._confirm_next(st)
    [job] = grader.next_round(workers=1)
    assert [st for st, _ in job.tag[1].entries] == states and all(st.running == 1 for st in states)
    for event in (Start("confirm:0", None), Start(cid, None), Measured(cid, {UNCONFIRMED: "no witness"}),
                  Start("confirm:1", None), Start(cid, None)):
        grader.on_event(job, event)
    died = Outcome(job, [], False, -9, None, cid, "", 0)
    grader.on_outcome(died)
    a, b = states
    assert a.results[cid].status == "fail" and a.running == 0 and a.finished
    assert cid not in b.results and b.running == 1 and not b.finished
    [again] = grader.next_round(workers=2)
    assert [st for st, _ in again.tag[1].entries] == [b]
    grader.on_outcome(Outcome(again, [], False, -9, None, cid, "", 0))
    assert b.results[cid].status == "error" and "SIGKILL" in b.results[cid].message and b.finished
    assert grader.next_round(workers=2) == []


def test_results_json_text_is_the_indented_json_with_each_checks_figures_on_one_line():
    import json
    import math

    from checker.base.term import dumps
    from checker.gradebook.book import results_text

    measured = {"witness": {"w": [0.5, math.nan, math.inf]}, "said": 'kata-measured-0" "x', "rows": list(range(50))}
    results = [{"submission": "a.py", "checks": [{"id": "clip.norm", "message": '"kata-measured-1"',
                                                   "measured": measured}, {"id": "data.lesson", "measured": {}}]},
               {"submission": "b.py", "error": {"kind": "load", "message": "x"}, "checks": []}]
    text = results_text(results)
    assert json.loads(text) == json.loads(dumps(results, indent=2)) and text.endswith("}\n]\n")
    assert json.loads(text)[0]["checks"][0]["measured"]["witness"]["w"] == [0.5, None, None]
    assert '"rows": [0, 1, 2' in text and '\n    "checks": [\n' in text  # figures on one line, the rest indented
    assert results[0]["checks"][0]["measured"] is measured  # nothing given is changed
