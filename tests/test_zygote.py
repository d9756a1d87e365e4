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
from checker.engine.grading import Submission, grade
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


def _fresh_zygote():
    """A zygote started now: it still warms, so early jobs fork from its twin. Returns it."""
    z = zygote()
    z.stop()
    z.start()
    return z


def _measured(outcome) -> dict:
    found = [e.measured for e in outcome.events if isinstance(e, Measured)]
    assert found, outcome.output
    return found[0]


def test_early_jobs_fork_from_the_twin_while_the_zygote_still_imports(lab):
    """While the zygote imports torch._dynamo, an early job's child is forked by its twin (a process other than
    the zygote, without torch._dynamo); a job that is not early waits for the zygote itself. Once the zygote is
    ready its twin is dismissed and every job forks from the zygote."""
    z = _fresh_zygote()
    jobs = [Job(Task("tests.zygote_probe:lineage"), Limits(step_timeout=120, harden=False), early=early)
            for early in (False, True)]
    late, early = (_measured(o) for o in run_jobs(jobs, workers=2))
    assert late["forker"] == z.pid and late["dynamo"]
    assert early["forker"] != z.pid and not early["dynamo"]
    [after] = run_jobs([Job(Task("tests.zygote_probe:lineage"), Limits(step_timeout=120, harden=False),
                            early=True)], workers=1)
    assert _measured(after)["forker"] == z.pid and z.twin is None


def test_the_zygote_warms_late_on_a_core_of_its_own_and_early_children_keep_off_it(lab, tmp_path, monkeypatch):
    """While the zygote imports torch._dynamo (what every late job waits for) it runs on the first core alone, and
    the twin's children on the others, so early work never slows that import; once warm, the zygote and every
    child it forks may use every core again."""
    import json
    import os

    from checker.sandbox import zygote as zygote_module

    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("needs two cores")
    note = tmp_path / "cores.json"
    monkeypatch.setattr(zygote_module, "_LATE", [*zygote_module._LATE,
                                                 f"tests.zygote_probe:note_cores {json.dumps([str(note)])}"])
    z = _fresh_zygote()
    jobs = [Job(Task("tests.zygote_probe:lineage"), Limits(step_timeout=120, harden=False), early=early)
            for early in (False, True)]
    late, early = (_measured(o) for o in run_jobs(jobs, workers=2))
    assert early["forker"] != z.pid and late["forker"] == z.pid
    assert json.loads(note.read_text()) == cores[:1]
    assert early["cores"] == cores[1:] and late["cores"] == cores
    assert sorted(os.sched_getaffinity(z.pid)) == cores


def test_an_early_child_holds_no_reference_and_no_classmate(lab):
    """The twin is forked from the zygote before any job: its children inherit no secret either."""
    classmate_token = "classmate-" + secrets.token_hex(12)
    classmate = REFERENCE.replace("def seed_everything", f"TOKEN = {classmate_token!r}\n\n\ndef seed_everything", 1)
    _fresh_zygote()
    reports = grade([Submission(classmate, "alice.py")], lab, check_ids=["reference.make_loader", "data.lesson"],
                    early=True)
    assert reports[0].passed
    reference_line = next(line for line in REFERENCE.splitlines() if len(line) > 40 and line.lstrip().startswith("#"))
    own = "own-" + secrets.token_hex(12)
    pairs = [halves(own), halves(classmate_token), halves(reference_line)]
    _fresh_zygote()
    [outcome] = run_jobs([Job(Task("tests.zygote_probe:scan", (pairs, f"x = {own!r}")),
                              Limits(step_timeout=120, harden=False), early=True)], workers=1)
    assert _measured(outcome)["found"] == [True, False, False]


def test_an_early_child_that_builds_an_optimizer_still_works_and_changes_no_watched_class(lab):
    """An early job that builds an optimizer after all (a file that does so at import, say) imports
    torch._dynamo itself: slower, never wrong. What that import and the first build change in torch (the
    optimizer's step wrapper, torch.manual_seed wrapped by torch._dynamo) is torch's own doing, which the tamper
    guard knows from a patch."""
    _fresh_zygote()
    [outcome] = run_jobs([Job(Task("tests.zygote_probe:build_optimizer"), Limits(step_timeout=120, harden=False),
                              early=True)], workers=1)
    assert _measured(outcome) == {"before": False}
    source = REFERENCE.replace("def seed_everything", "_PROBE = torch.optim.SGD([torch.zeros(1, requires_grad=True)], "
                               "lr=0.1)\n\n\ndef seed_everything", 1)
    _fresh_zygote()
    [report] = grade([Submission(source, "loop.py")], lab, check_ids=["data.lesson", "model.init", "loader.order"],
                     early=True)
    assert report.error is None and report.passed, (report.error, [c.message for c in report.checks])


def test_an_early_job_outlives_the_twin_dismissed_while_it_runs(lab, tmp_path):
    """The zygote becomes ready (and dismisses its twin) while an early job forked by the twin still runs: the job
    goes on to its end and reports. (The twin used to end at once, and its shepherds with it, by
    PR_SET_PDEATHSIG: the job was killed. On a GPU, where a child's CUDA start outlasts the zygote's warm-up,
    that cost a check of every data-pipeline run.)"""
    import threading
    import time

    z = _fresh_zygote()
    started, go = tmp_path / "started", tmp_path / "go"
    outcomes = []
    runner = threading.Thread(target=lambda: outcomes.extend(run_jobs(
        [Job(Task("tests.zygote_probe:hold", (str(started), str(go))), Limits(step_timeout=120, harden=False),
             early=True)], workers=1)))
    runner.start()
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists()
        while not z.ready_now():  # ready: the twin is dismissed now, with the job still running
            time.sleep(0.02)
        assert z.twin is None
    finally:
        go.write_text("1")
        runner.join(120)
    [outcome] = outcomes
    measured = _measured(outcome)
    assert measured["go"] and measured["forker"] != z.pid  # forked by the twin, and it reported


@pytest.mark.parametrize("wait", [True, False], ids=["gone", "dying"])
def test_early_jobs_still_run_when_the_twin_is_gone(lab, wait):
    """A twin that died (or was never forked) costs nothing but time: the zygote forks the early job itself. So
    does one killed as the job is sent: kata sees the twin end (a pidfd) before it reports a child, and asks the
    zygote instead, on fresh pipes."""
    import os
    import signal
    import time

    from checker.sandbox.hardening import _proc_table

    z = _fresh_zygote()
    assert z._twin_serving()
    twin = next(pid for pid, (ppid, _, _) in _proc_table().items() if ppid == z.pid)
    os.kill(twin, signal.SIGKILL)
    # gone: it has exited (a zombie until the zygote reaps it), its descriptors closed
    while wait and _proc_table().get(twin, (0, 0, "Z"))[2] != "Z":
        time.sleep(0.01)
    [outcome] = run_jobs([Job(Task("tests.zygote_probe:lineage"), Limits(step_timeout=120, harden=False),
                              early=True)], workers=1)
    assert _measured(outcome)["forker"] == z.pid


EARLY_PROBE = """
import json, sys
from checker.setting.lab import warm_up
from checker.sandbox.zygote import _LATE, _PRELOAD, _warm
_warm(_PRELOAD)  # what the zygote warms before it forks its twin
assert "torch._dynamo" not in sys.modules, "the early warm-up imports torch._dynamo"
from checker.checks import REGISTRY, ordered_ids
from checker.engine.worker import child_setup
from checker.loopfile.loading import load_loop
from checker.setting.draws import Draw
from checker.setting.lab import Lab
from checker.setting.tracks import track_named
track = track_named(sys.argv[1])
lab = Lab("cpu", track)
lab.load_trusted()
lab.draw = Draw.fresh(track)
child_setup()
loop = load_loop(track.reference.read_text(encoding="utf-8"), "reference/loop.py", track, None)
took = {}
for cid in ordered_ids(None, device="cpu", track=track):
    if REGISTRY[cid].early:
        REGISTRY[cid].measure(loop, lab)
        took[cid] = "torch._dynamo" in sys.modules
print(json.dumps(took))
"""


@pytest.mark.parametrize("track", ["moons", "three-classes", "data-pipeline"])
def test_early_checks_need_no_torch_dynamo(track):
    """What ``Check.early`` promises, on each track's reference: measured in a process warmed as the zygote's twin
    is (torch and scikit-learn, no torch._dynamo), no early check imports torch._dynamo (it builds no optimizer)."""
    import json
    import subprocess
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", EARLY_PROBE, track], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    took = json.loads(out.stdout.strip().splitlines()[-1])
    first = next((cid for cid, imported in took.items() if imported), None)  # the later ones only inherit it
    assert took and first is None, f"{first} imported torch._dynamo on {track}'s reference"


def test_early_and_late_reference_answers_come_from_two_processes_and_both_count(lab):
    """With ``early``, a draw's early differential checks are answered by a reference process of their own (an early
    job) and the rest by another; the file's report waits for both and judges each check against its answer."""
    from checker.engine.grading import _Grader, _ReferenceBatch, _ReferenceRun, _State
    from checker.sandbox.jobs import Limits as JobLimits
    from checker.setting.draws import Draw

    ids = ["reference.make_data", "reference.fit"]
    run = _ReferenceRun(Draw.fresh(lab.track), list(ids))
    st = _State(Submission(REFERENCE, "loop.py"), ids, "en", run)
    jobs = _Grader(lab, JobLimits(), "en", None, None, [st]).plan([st], [_ReferenceBatch([run])], 2, early=True)
    references = [job for job in jobs if job.tag[0] == "reference"]
    assert [(job.early, job.tag[1].ids(run)) for job in references] == [(True, ["reference.make_data"]),
                                                                          (False, ["reference.fit"])]
    assert run.open == 2
    _fresh_zygote()
    [report] = grade([Submission(REFERENCE, "loop.py")], lab, check_ids=ids, early=True)
    assert report.passed and [c.id for c in report.checks] == ids, [c.message for c in report.checks]
    broken = REFERENCE.replace("n_samples=", "n_samples=1 + ", 1)  # another data set: make_data differs
    [report] = grade([Submission(broken, "loop.py")], lab, check_ids=ids, early=True)
    by_id = {c.id: c for c in report.checks}
    assert by_id["reference.make_data"].status == "fail", by_id["reference.make_data"].message


def test_kata_check_splits_early_checks_only_while_the_zygote_warms(lab, monkeypatch):
    """``grade_one`` (kata check, kata watch) runs the early checks apart only when the zygote is still warming:
    a warm zygote (a watch after its first run) gains nothing from it and would pay for two more children."""
    from checker.engine import grading

    seen = []
    real = grading.grade
    monkeypatch.setattr(grading, "grade", lambda *a, **k: seen.append(k["early"]) or real(*a, **k))
    _fresh_zygote()
    cold = grading.grade_one(REFERENCE, "loop.py", lab, check_ids=["data.lesson", "steps.per_batch"])
    warm = grading.grade_one(REFERENCE, "loop.py", lab, check_ids=["data.lesson", "steps.per_batch"])
    assert seen == [True, False] and cold.passed and warm.passed


def test_a_gpu_job_caps_its_data_not_its_address_space():
    """CUDA reserves address space far beyond any cap when it starts (under RLIMIT_AS it fails: "out of
    memory", seen on an H200): a job that may use a GPU is capped on its data instead, and the cap still holds
    (4 GiB refused); a CPU job keeps the address-space cap."""
    import resource

    inherited_as = resource.getrlimit(resource.RLIMIT_AS)[0]
    jobs = [Job(Task("tests.zygote_probe:limits"), Limits(step_timeout=60, harden=False, gpu=gpu))
            for gpu in (False, True)]
    cpu, gpu = (_measured(o) for o in run_jobs(jobs, workers=2))
    assert cpu["as"] != resource.RLIM_INFINITY and cpu["refused"]
    assert gpu["as"] == inherited_as and gpu["data"] != resource.RLIM_INFINITY and gpu["refused"]


def test_a_zygote_warmed_as_on_a_gpu_machine_runs_no_backward_and_grades_the_reference(lab, monkeypatch):
    """Where torch was built for CUDA, the zygote's warm-up runs no backward pass (autograd's first backward counts
    the CUDA devices, which initialises CUDA: every forked child then fails with "CUDA error: initialization
    error", seen on an H200). A zygote warmed that way, every backward refused, still grades the reference as
    passing: the children's own first backward sets up what the warm-up left, and the tamper guard accepts it."""
    from checker.sandbox import zygote as zygote_module

    monkeypatch.setattr(zygote_module, "_LATE", ["tests.zygote_probe:warm_as_on_gpu"])
    z = _fresh_zygote()
    try:
        [report] = grade([Submission(REFERENCE, "loop.py")], lab)
        assert report.error is None and report.passed, [(c.id, c.message) for c in report.checks
                                                        if str(c.status) != "pass"]
    finally:
        z.stop()  # the next test starts a zygote warmed as usual
