"""Partial credit survives a hang: a timeout is put down to the protocol function that hung, only the checks
that call it are skipped (naming it), and every other check still runs with its full limit."""

from __future__ import annotations

import time

from checker.checks import REGISTRY, ordered_ids
from checker.engine.grading import MAX_TIMEOUTS, PASS, SKIPPED, TIMEOUT, Submission, grade_one
from checker.sandbox.jobs import Limits
from tests.conftest import REFERENCE

STEP = 4.0
"""Seconds a check may run here: far above what the checks that must pass take, short for a hang."""


def _hanging(function_header_end: str) -> str:
    """The reference with an endless loop right after ``function_header_end`` (one place in one function)."""
    source = REFERENCE.read_text()
    assert source.count(function_header_end) == 1, function_header_end
    return source.replace(function_header_end, function_header_end + "    while True:\n        pass\n")


def _calls(cid: str, *functions: str) -> bool:
    return any(f in REGISTRY[cid].calls for f in functions)


def test_a_hang_in_train_epoch_costs_only_the_checks_that_reach_it(lab):
    source = _hanging("def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, "
                      'device="cpu"):\n')
    started = time.monotonic()
    report = grade_one(source, "hang.py", lab, limits=Limits(step_timeout=STEP))
    seconds = time.monotonic() - started
    statuses = {c.id: c.status for c in report.checks}
    assert list(statuses) == ordered_ids(None, device="cpu")  # every check has a verdict
    # the checks that never call train_epoch or fit (fit calls train_epoch) get real verdicts: all pass
    free = [cid for cid in statuses if not _calls(cid, "train_epoch", "fit")]
    assert {"data.lesson", "loader.coverage", "loader.order", "model.init", "optimizer.setup", "modes.eval",
            "reference.make_data", "reference.make_loader", "reference.make_model", "reference.evaluate"} <= set(free)
    assert {cid: statuses[cid] for cid in free} == {cid: PASS for cid in free}
    # the others time out once per function (per worker at most) and are skipped after, naming the function
    reached = [c for c in report.checks if c.id not in free]
    assert {c.status for c in reached} == {TIMEOUT, SKIPPED}
    timeouts = [c for c in reached if c.status == TIMEOUT]
    assert len(timeouts) <= 4  # train_epoch, then fit (its calls name fit only), in each of the two workers
    skipped = [c for c in reached if c.status == SKIPPED]
    for c in skipped:
        function = next(f for f in ("train_epoch", "fit") if f in c.message)
        assert f"calls {function}, which did not return within {STEP:g} s" in c.message, c.message
        assert _calls(c.id, function)
    assert any("calls train_epoch" in c.message for c in skipped)
    assert seconds < len(timeouts) * STEP + 60


def test_a_hang_in_fit_spares_train_epoch_and_is_found_through_two_checks(lab):
    ids = ["steps.per_batch", "steps.fresh_grads", "loss.falls", "loss.epoch_mean", "schedule.step",
           "modes.train", "reference.train_epoch", "reference.fit"]
    source = _hanging("def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, "
                      'clip_norm=None, device="cpu"):\n')
    report = grade_one(source, "hang.py", lab, limits=Limits(step_timeout=STEP), check_ids=ids, split=1)
    by_id = {c.id: c for c in report.checks}
    statuses = {cid: c.status for cid, c in by_id.items()}
    assert statuses == {
        "steps.per_batch": PASS, "steps.fresh_grads": PASS,
        # calls fit and make_optimizer, and neither returned yet: it cannot say which hung
        "loss.falls": TIMEOUT,
        "loss.epoch_mean": PASS,
        # calls fit alone: fit hangs (and that explains loss.falls' timeout too)
        "schedule.step": TIMEOUT,
        "modes.train": SKIPPED, "reference.train_epoch": PASS, "reference.fit": SKIPPED,
    }
    for cid in ("modes.train", "reference.fit"):
        assert "calls fit, which did not return" in by_id[cid].message and "schedule.step" in by_id[cid].message


def test_the_skip_message_is_in_spanish_too(lab):
    source = _hanging("def fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None, val=None, "
                      'clip_norm=None, device="cpu"):\n')
    report = grade_one(source, "hang.py", lab, limits=Limits(step_timeout=STEP), split=1, lang="es",
                       check_ids=["schedule.step", "modes.train"])
    skipped = report.checks[1]
    assert skipped.status == SKIPPED
    assert "llama a fit, que no terminó en" in skipped.message and "schedule.step" in skipped.message


# --- the policy, on made-up outcomes --------------------------------------------------------------------------


def _grader(lab, ids: list[str]):
    from checker.engine.grading import _Grader, _State

    st = _State(Submission("x = 1\n", "made_up.py"), ids, "en", None)
    grader = _Grader(lab, Limits(step_timeout=STEP), "en", None, None, [st])
    return grader, st


def _timed_out(cid: str, group: list[str]):
    from checker.sandbox.jobs import Job, Outcome

    return Outcome(job=Job(lambda rep: None, Limits(step_timeout=STEP), tag=None), events=[], finished=False,
                   exit_status=-9, timed_out_step=cid, current_step=cid, output="", output_dropped=0)


def test_a_function_is_named_from_a_check_that_calls_it_alone(lab):
    grader, st = _grader(lab, ["steps.per_batch", "steps.fresh_grads", "data.lesson", "loss.falls"])
    rest = ["steps.per_batch", "steps.fresh_grads", "data.lesson", "loss.falls"]
    grader._after_failure(st, _timed_out("steps.per_batch", rest), rest)
    assert st.hung == {"train_epoch": ("steps.per_batch", STEP)} and st.timeouts == 0
    assert st.results["steps.fresh_grads"].status == SKIPPED
    # data.lesson never calls train_epoch; loss.falls calls fit, which has not been seen to hang: both run,
    # with the full limit
    [rerun] = grader.reruns
    assert rerun.tag[1] == ["data.lesson", "loss.falls"] and rerun.limits.step_timeout == STEP


def test_timeouts_no_function_explains_stop_the_rest_after_max_timeouts(lab):
    ids = ["loss.falls", "converge.adam", "data.lesson", "loader.order"]
    grader, st = _grader(lab, ids)
    st.returned.update({"fit", "make_optimizer"})  # both returned elsewhere: the hang depends on the arguments
    grader._after_failure(st, _timed_out("loss.falls", ids), ids)
    assert st.hung == {} and st.timeouts == 1
    assert [job.tag[1] for job in grader.reruns] == [ids[1:]]
    grader.reruns.clear()
    assert MAX_TIMEOUTS == 2
    grader._after_failure(st, _timed_out("converge.adam", ids[1:]), ids[1:])
    assert st.timeouts == 2 and grader.reruns == []
    assert [st.results[c].status for c in ids[2:]] == [SKIPPED, SKIPPED]
    assert "earlier checks on this file already ran out of time" in st.results["data.lesson"].message


def test_a_later_timeout_explains_an_earlier_one(lab):
    from checker.engine.grading import _explain_hangs

    _, st = _grader(lab, [])
    st.unexplained.append(("loss.falls", STEP))  # fit or make_optimizer
    _explain_hangs(st)
    assert st.timeouts == 1 and st.hung == {}
    st.returned.add("make_optimizer")  # make_optimizer returned since: fit is the one
    _explain_hangs(st)
    assert st.hung == {"fit": ("loss.falls", STEP)} and st.timeouts == 0
    st.unexplained.append(("converge.adam", STEP))  # calls fit: explained by the hang known
    _explain_hangs(st)
    assert st.timeouts == 0 and st.hung == {"fit": ("loss.falls", STEP)}
