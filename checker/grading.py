"""Grade loop files: run the checks' measures in sandboxed children, judge the figures here.

One submission's checks may be split across workers (``kata check`` uses both cores); many
submissions run side by side (``kata mutants verify``, ``kata grade``). A check that hangs or
kills its child is recorded as such, and the checks after it run again in a fresh child.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from checker.checks import REGISTRY, ordered_ids
from checker.i18n import Message
from checker.sandbox import Job, Limits, Outcome, run_jobs
from checker.worker import LOAD_TIMEOUT as LOAD_SECONDS
from checker.worker import check_target

PASS, FAIL, ERROR, TIMEOUT = "pass", "fail", "error", "timeout"

MAX_TIMEOUTS = 2
"""After this many timeouts in one submission, its remaining checks are not run."""
RERUN_FRACTION, RERUN_MIN_SECONDS = 0.1, 3.0
"""After a first timeout, the remaining checks run with this share of the limit (at least the minimum)."""

RAISED = Message(
    en="the check stopped because your loop raised an error:\n{error}",
    es="la comprobación se detuvo porque tu bucle lanzó un error:\n{error}",
)
TIMED_OUT = Message(
    en="did not finish within {seconds:g} s: something in your loop runs far longer than it should (an endless loop?)",
    es="no terminó en {seconds:g} s: algo en tu bucle tarda mucho más de lo debido (¿un bucle infinito?)",
)
DIED = Message(
    en="the process running your loop ended during this check ({how}); nothing was measured",
    es="el proceso que ejecutaba tu bucle terminó durante esta comprobación ({how}); no se midió nada",
)
NOT_RUN = Message(
    en="not run: earlier checks on this file already ran out of time, so the rest were skipped",
    es="no se ejecutó: comprobaciones anteriores de este archivo ya agotaron su tiempo, así que se omitió el resto",
)
BAD_FIGURES = Message(
    en="the figures measured for this check are malformed ({error})",
    es="las cifras medidas para esta comprobación están mal formadas ({error})",
)
TAMPERED = Message(
    en="{file} changes torch or the checker while it runs ({what}); a loop that patches them cannot be graded",
    es="{file} modifica torch o el comprobador mientras se ejecuta ({what}); "
    "un bucle que los parchea no se puede evaluar",
)
LOAD_TIMEOUT = Message(
    en="{file} did not finish importing within {seconds:g} s (an endless loop at module level?)",
    es="{file} no terminó de importarse en {seconds:g} s (¿un bucle infinito a nivel de módulo?)",
)
LOAD_DIED = Message(
    en="{file} ended the process while being imported ({how})",
    es="{file} terminó el proceso mientras se importaba ({how})",
)


@dataclass
class CheckResult:
    id: str
    family: str
    title: str
    status: str
    message: str
    measured: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PASS


@dataclass
class Report:
    file: str
    checks: list[CheckResult] = field(default_factory=list)
    error_kind: str | None = None
    error: str | None = None
    """Why the file cannot be graded at all (exit 2), or None."""
    output: str = ""
    output_dropped: int = 0

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 2 if self.error is not None else (0 if self.passed else 1)

    @property
    def score(self) -> float:
        return sum(c.passed for c in self.checks) / len(self.checks) if self.checks else 0.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"file": self.file, "passed": self.passed, "checks": [asdict(c) for c in self.checks]}
        if self.error is not None:
            data["error"] = {"kind": self.error_kind, "message": self.error}
        if self.output_dropped:
            data["output_dropped_bytes"] = self.output_dropped
        return data


@dataclass
class Submission:
    source: str
    filename: str
    check_ids: Sequence[str] | None = None
    """This submission's own selection of checks; None: the ``check_ids`` given to ``grade``."""


def _how(outcome: Outcome) -> str:
    status = outcome.exit_status
    if outcome.memory_exceeded:
        return "out of memory"
    if status is not None and status < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def split_checks(ids: Sequence[str], parts: int) -> list[list[str]]:
    """Share checks between ``parts`` workers so each gets about the same total cost."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(parts, len(ids))))]
    loads = [0.0] * len(groups)
    for cid in sorted(ids, key=lambda c: -REGISTRY[c].cost):
        i = loads.index(min(loads))
        groups[i].append(cid)
        loads[i] += REGISTRY[cid].cost
    return [g for g in groups if g]


class _State:
    def __init__(self, sub: Submission, ids: list[str], lang: str):
        self.sub, self.ids, self.lang = sub, ids, lang
        self.results: dict[str, CheckResult] = {}
        self.timeouts = 0
        self.report = Report(file=sub.filename)

    def result(self, cid: str, status: str, message: str, measured=None, seconds: float = 0.0) -> CheckResult:
        chk = REGISTRY[cid]
        res = CheckResult(cid, chk.family, chk.title.render(self.lang), status, message, measured or {}, seconds)
        self.results[cid] = res
        return res


def grade(
    submissions: Sequence[Submission],
    lab,
    *,
    check_ids: Sequence[str] | None = None,
    workers: int = 2,
    split: int = 1,
    lang: str = "en",
    limits: Limits | None = None,
    on_check: Callable[[Submission, CheckResult], None] | None = None,
    on_report: Callable[[Report], None] | None = None,
) -> list[Report]:
    """Grade every submission; each report lists the checks in catalogue order."""
    device = getattr(lab, "device", "cpu")
    ids = ordered_ids(check_ids, device=device)
    limits = limits or Limits()
    states = [_State(s, ids if s.check_ids is None else ordered_ids(s.check_ids, device=device), lang)
              for s in submissions]
    groups = {id(st): split_checks(st.ids, split) for st in states}
    jobs = [
        Job(check_target(st.sub.source, st.sub.filename, group, lab), limits, tag=(st, group))
        for st in states
        for group in groups[id(st)]
    ]
    pending_groups = {key: len(parts) for key, parts in groups.items()}

    def on_event(job: Job, event: dict) -> None:
        st, _ = job.tag
        kind = event.get("event")
        cid = event.get("check")
        res = None
        if kind == "measured" and cid in REGISTRY and st.report.error is None:
            try:
                verdict = REGISTRY[cid].judge(event.get("measured") or {})
                res = st.result(cid, PASS if verdict.passed else FAIL, verdict.render(lang),
                                event.get("measured"), event.get("seconds", 0.0))
            except Exception as exc:  # malformed figures: never a pass
                res = st.result(cid, ERROR, BAD_FIGURES.render(lang, error=f"{type(exc).__name__}: {exc}"))
        elif kind == "raised" and cid in REGISTRY and st.report.error is None:
            res = st.result(cid, ERROR, RAISED.render(lang, error=event.get("error", "")),
                            {"exception": event.get("type")}, event.get("seconds", 0.0))
        elif kind == "file_error":
            st.report.error_kind, st.report.error = event.get("kind"), event.get("message")
        elif kind == "tampered":
            what = ", ".join(event.get("what", [])[:4])
            st.report.error_kind = "tampered"
            st.report.error = TAMPERED.render(lang, file=st.sub.filename, what=what)
        if res is not None and on_check:
            on_check(st.sub, res)

    reruns: list[Job] = []

    def on_outcome(outcome: Outcome) -> None:
        st, group = outcome.job.tag
        st.report.output += outcome.output
        st.report.output_dropped += outcome.output_dropped
        missing = [c for c in group if c not in st.results]
        if st.report.error is None and missing:
            step = outcome.timed_out_step or outcome.current_step
            if step in ("load", "start", None):
                # the file never finished importing: nothing here can be graded
                st.report.error_kind = "load"
                if outcome.timed_out_step:
                    seconds = min(LOAD_SECONDS, limits.step_timeout)
                    st.report.error = LOAD_TIMEOUT.render(lang, file=st.sub.filename, seconds=seconds)
                else:
                    st.report.error = LOAD_DIED.render(lang, file=st.sub.filename, how=_how(outcome))
            else:
                culprit = step if step in missing else missing[0]
                if outcome.timed_out_step:
                    timeout = min(REGISTRY[culprit].timeout, outcome.job.limits.step_timeout)
                    res = st.result(culprit, TIMEOUT, TIMED_OUT.render(lang, seconds=timeout))
                else:
                    res = st.result(culprit, ERROR, DIED.render(lang, how=_how(outcome)))
                if on_check:
                    on_check(st.sub, res)
                if outcome.timed_out_step:
                    st.timeouts += 1
                rest = [c for c in missing if c != culprit]
                if rest and st.timeouts >= MAX_TIMEOUTS:
                    # A loop that hangs once usually hangs in every check: stop paying for it.
                    for cid in rest:
                        res = st.result(cid, TIMEOUT, NOT_RUN.render(lang))
                        if on_check:
                            on_check(st.sub, res)
                elif rest:
                    # After a timeout the remaining checks get a shorter limit.
                    rerun_limits = limits if not st.timeouts else replace(
                        limits, step_timeout=max(limits.step_timeout * RERUN_FRACTION, RERUN_MIN_SECONDS)
                    )
                    job = Job(check_target(st.sub.source, st.sub.filename, rest, lab), rerun_limits, tag=(st, rest))
                    reruns.append(job)
                    pending_groups[id(st)] += 1
        pending_groups[id(st)] -= 1
        if pending_groups[id(st)] == 0:
            _finish(st)
            if on_report:
                on_report(st.report)

    def _finish(st: _State) -> None:
        if st.report.error is None:
            st.report.checks = [st.results[c] for c in st.ids if c in st.results]

    queue = jobs
    while queue:
        run_jobs(queue, workers=workers, on_event=on_event, on_outcome=on_outcome)
        queue, reruns[:] = list(reruns), []
    return [st.report for st in states]


def grade_one(source: str, filename: str, lab, **kwargs: Any) -> Report:
    kwargs.setdefault("split", kwargs.get("workers", 2))
    return grade([Submission(source, filename)], lab, **kwargs)[0]
