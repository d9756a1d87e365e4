"""Grade loop files: run the checks' measures in sandboxed children, judge the figures here.

Three concerns, kept apart:
- **planning** (``_plan``): which child runs which checks. One submission's checks may be split
  across workers (``kata check`` uses both cores); many submissions run side by side (``kata
  mutants verify``, ``kata grade``); trusted *reference processes* run the differential checks on
  the reference loop, forked before any learner file is loaded, each answering one or several draws
  of arguments in turn (with a grading secret every submission has its own draw);
- **turning events into results** (``_Grader.on_event``): figures become verdicts in this process,
  where the learner's code cannot reach; a differential check waits for the reference's answer;
- **the rerun policy** (``_Grader.on_outcome``): a check that hangs or kills its child is recorded
  as such, and the checks after it run again in a fresh child, each with its full limit. A timeout
  is put down to the protocol function that hung, from the functions each check declares it calls
  (``calls``) and those that already returned in this submission; the checks that call a function
  known to hang are skipped, naming it, and every other check still runs, so a hang costs only the
  credit that depends on the function that hung. ``MAX_TIMEOUTS`` timeouts that no function explains
  stop the rest (a safety net).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from checker.base.i18n import Message
from checker.checks import REGISTRY, ordered_ids
from checker.checks.base import judging
from checker.checks.confirm import CONFIRM, TOO_LARGE, UNCONFIRMED
from checker.engine.integrity import review_reasons
from checker.engine.worker import CONFIRM_STEP, draw_index, in_both, job_seconds, reference_seconds
from checker.engine.worker import LOAD_TIMEOUT as LOAD_SECONDS
from checker.sandbox.events import Event, FileError, Isolation, Measured, Raised, Start, Tampered
from checker.sandbox.jobs import Job, Limits, Outcome, run_jobs
from checker.sandbox.zygote import Task, zygote
from checker.setting.draws import Draw
from checker.setting.tracks import Track, hidden_paths, shared_files, submission_folders


class Status(str, Enum):
    """How one check ended. A ``str``, so it compares, prints and serialises as its value."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    """Not run: it calls a protocol function that hung in an earlier check, or earlier checks ran out of time."""

    def __str__(self) -> str:
        return self.value


PASS, FAIL, ERROR, TIMEOUT, SKIPPED = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.SKIPPED

MAX_TIMEOUTS = 2
"""After this many timeouts that no protocol function explains, a submission's remaining checks are not run."""
REFERENCE_BATCH = 32
"""Most draws one reference process answers (more submissions: more processes, run side by side)."""

RAISED = Message(
    en="the check stopped because your loop raised an error:\n{error}",
    es="la comprobación se detuvo porque tu bucle lanzó un error:\n{error}",
)
RAISED_ALSO = Message(
    en="\nThe same error also stopped: {ids}",
    es="\nEl mismo error detuvo también: {ids}",
)
RAISED_SAME = Message(
    en="stopped by the same error as {first} (shown there)",
    es="detenida por el mismo error que {first} (se muestra allí)",
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
HUNG = Message(
    en="not run: this check calls {function}, which did not return within {seconds:g} s in {where} (it hangs), "
    "so it would hang here too; fix {function} and the check runs again",
    es="no se ejecutó: esta comprobación llama a {function}, que no terminó en {seconds:g} s en {where} (se "
    "cuelga), así que aquí también se colgaría; arregla {function} y la comprobación volverá a ejecutarse",
)
BAD_FIGURES = Message(
    en="the figures measured for this check are malformed ({error})",
    es="las cifras medidas para esta comprobación están mal formadas ({error})",
)
UNCONFIRMED_FIGURES = Message(
    en="the figures your loop's process reported for this check could not be confirmed outside it ({why}), so the "
    "check does not pass",
    es="las cifras que el proceso de tu bucle informó para esta comprobación no se pudieron confirmar fuera de él "
    "({why}), así que la comprobación no pasa",
)
NOT_CONFIRMED = Message(
    en="the process that confirms this check's figures outside your loop's process gave no answer ({why}), so the "
    "check does not pass (a fault in kata, not in your loop: please report it)",
    es="el proceso que confirma las cifras de esta comprobación fuera del proceso de tu bucle no dio respuesta "
    "({why}), así que la comprobación no pasa (un fallo de kata, no de tu bucle: por favor, avísanos)",
)
TOO_LARGE_TO_CONFIRM = Message(
    en="not confirmed: the model is too large for the witness ({params} parameters), so the figures your loop's "
    "process reported could not be recomputed outside it; the check neither passes nor fails and is held for "
    "review (a limit of kata, not a fault of your loop)",
    es="sin confirmar: el modelo es demasiado grande para el testigo ({params} parámetros), así que las cifras que "
    "informó el proceso de tu bucle no se pudieron recalcular fuera de él; la comprobación ni pasa ni falla y queda "
    "retenida para revisión (un límite de kata, no un fallo de tu bucle)",
)
HELD_TOO_LARGE = Message(
    en="{check}: not confirmed, the model is too large for the witness ({params} parameters): a person should read "
    "the file before this check counts (no sign of forgery)",
    es="{check}: sin confirmar, el modelo es demasiado grande para el testigo ({params} parámetros): una persona "
    "debería leer el archivo antes de que esta comprobación cuente (ningún indicio de falsificación)",
)
FORGED_FIGURES = Message(
    en="{check}: the figures this file's own process reported pass, but the same run recomputed outside that process "
    "fails: it reported figures its run did not produce (forged events)",
    es="{check}: las cifras que informó el propio proceso de este archivo pasan, pero la misma ejecución recalculada "
    "fuera de ese proceso falla: informó cifras que su ejecución no produjo (eventos falsificados)",
)
NO_REFERENCE = Message(
    en="the reference process could not compute this check's answer ({why}); nothing can be compared, so the "
    "check does not pass (a fault in kata, not in your loop: please report it)",
    es="el proceso de referencia no pudo calcular la respuesta de esta comprobación ({why}); no hay nada con "
    "qué comparar, así que la comprobación no pasa (un fallo de kata, no de tu bucle: por favor, avísanos)",
)
TAMPERED = Message(
    en="{file} interfered with the grader while it ran ({what}): it changed torch or kata, or did something no "
    "training loop needs; such a file cannot be graded",
    es="{file} interfirió con el evaluador mientras se ejecutaba ({what}): modificó torch o kata, o hizo algo "
    "que ningún bucle de entrenamiento necesita; un archivo así no se puede evaluar",
)
LOAD_TIMEOUT = Message(
    en="{file} did not finish importing within {seconds:g} s (an endless loop at module level?)",
    es="{file} no terminó de importarse en {seconds:g} s (¿un bucle infinito a nivel de módulo?)",
)
INTERNAL = Message(
    en="kata could not take in what this file's checks reported ({error}); the file is not graded (a fault in "
    "kata: please report it)",
    es="kata no pudo procesar lo que informaron las comprobaciones de este archivo ({error}); el archivo no se "
    "evalúa (un fallo de kata: por favor, avísanos)",
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
    status: Status
    message: str
    measured: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def to_json(self) -> dict[str, Any]:
        """The result as ``dataclasses.asdict`` gives it, without its deep copy: ``measured`` (plain JSON values, up to
        a witness of tens of kilobytes a check) is shared, not copied, so a class's results.json costs one pass over
        the figures, not three (asdict copied every number of every witness first)."""
        return {"id": self.id, "family": self.family, "title": self.title, "status": self.status,
                "message": self.message, "measured": self.measured, "seconds": self.seconds}


@dataclass
class Report:
    file: str
    checks: list[CheckResult] = field(default_factory=list)
    error_kind: str | None = None
    error: str | None = None
    """Why the file cannot be graded at all (exit 2), or None."""
    output: str = ""
    output_dropped: int = 0
    integrity: list[str] = field(default_factory=list)
    """Why the source should be read by a person before any pass counts (static note; empty: nothing)."""
    isolation: str | None = None
    """"full" when every layer of the sandbox held in each child, "reduced" where the platform refused one
    (``isolation_why`` says which); None when no child reported (hardening off)."""
    isolation_why: list[str] = field(default_factory=list)
    reproducible: bool = False
    """The differential checks' arguments came from a grading secret (or were fixed), not fresh: the same
    file graded again with the same secret gets the same report."""

    @property
    def checks_passed(self) -> bool:
        """Every check passed (whatever the integrity note says)."""
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def held_for_review(self) -> bool:
        return bool(self.integrity)

    @property
    def passed(self) -> bool:
        """Every check passed and nothing holds the pass back for review."""
        return self.checks_passed and not self.held_for_review

    @property
    def exit_code(self) -> int:
        return 2 if self.error is not None else (0 if self.passed else 1)

    @property
    def score(self) -> float:
        if self.held_for_review:
            return 0.0
        return sum(c.passed for c in self.checks) / len(self.checks) if self.checks else 0.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"file": self.file, "passed": self.passed, "checks": [c.to_json() for c in self.checks]}
        if self.error is not None:
            data["error"] = {"kind": self.error_kind, "message": self.error}
        if self.output_dropped:
            data["output_dropped_bytes"] = self.output_dropped
        if self.integrity:
            data["held_for_review"] = True
            data["integrity"] = list(self.integrity)
        if self.isolation is not None:
            data["isolation"] = self.isolation
            if self.isolation_why:
                data["isolation_why"] = list(self.isolation_why)
        data["reproducible"] = self.reproducible
        return data


@dataclass
class Submission:
    source: str
    filename: str
    check_ids: Sequence[str] | None = None
    """This submission's own selection of checks; None: the ``check_ids`` given to ``grade``."""
    draw: Any = None
    """The differential checks' arguments for this submission; None: the run's own fresh draw."""


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


def split_checks(ids: Sequence[str], parts: int, costs: Mapping[str, float] | None = None) -> list[list[str]]:
    """Share checks between ``parts`` workers so each gets about the same total cost (``costs``: the track's own
    measured milliseconds, ``Track.costs``; a check not there costs what it declares, ``Check.cost``); each group
    runs in the order of ``ids`` (the catalogue's: the checks that call one protocol function come first, so a
    later hang can be put down to the function that hung)."""
    costs = costs or {}

    def cost(cid: str) -> float:
        return costs.get(cid, REGISTRY[cid].cost)

    groups: list[list[str]] = [[] for _ in range(max(1, min(parts, len(ids))))]
    loads = [0.0] * len(groups)
    for cid in sorted(ids, key=lambda c: -cost(c)):
        i = loads.index(min(loads))
        groups[i].append(cid)
        loads[i] += cost(cid)
    order = {cid: n for n, cid in enumerate(ids)}
    return [sorted(g, key=order.__getitem__) for g in groups if g]


# ---------------------------------------------------------------------------- state


class _ReferenceRun:
    """The trusted answers for one draw, filled by one reference process or two (its early checks in one)."""

    def __init__(self, draw: Any, ids: list[str]):
        self.draw, self.ids = draw, ids
        self.answers: dict[str, dict] = {}
        self.failures: dict[str, str] = {}
        self.done = False
        self.open = 0
        """Reference processes still answering this draw: it is done when the last one is."""


class _ReferenceBatch:
    """The draws one reference process answers, in turn; ``current``: the one it is answering now. ``early``:
    None, every check of each draw; True, only the early ones (``Check.early``); False, only the others."""

    def __init__(self, runs: list[_ReferenceRun], early: bool | None = None):
        self.runs = runs
        self.early = early
        self.current: _ReferenceRun | None = None
        self.closed: set[int] = set()
        """The runs (their ``id``: each is held in ``runs``) this process is done with."""

    def ids(self, run: _ReferenceRun) -> list[str]:
        return [c for c in run.ids if self.early is None or REGISTRY[c].early == self.early]

    def parts(self, early: bool) -> list[_ReferenceBatch]:
        """This batch as the processes that answer it: with ``early``, its early checks apart, where it has both."""
        kinds = {REGISTRY[c].early for run in self.runs for c in run.ids}
        return [_ReferenceBatch(self.runs, kind) for kind in (True, False)] if early and len(kinds) == 2 else [self]


def _reference_parts(batches: list[_ReferenceBatch], early: bool, many: bool) -> list[_ReferenceBatch]:
    """The reference processes that answer ``batches``. With ``early``: for one file, each batch's early checks in a
    process of their own (``_ReferenceBatch.parts``); for many files, the early checks of every draw in one process,
    forked while the zygote warms, and each batch's other checks as before. One early process, not one per batch:
    an early child keeps to the cores the zygote's import leaves (``checker.sandbox.zygote``), and two of them there
    would leave the zygote's core idle once it is warm."""
    if not (early and many):
        return [part for batch in batches for part in batch.parts(early)]
    runs = [run for batch in batches for run in batch.runs]
    if len({REGISTRY[c].early for run in runs for c in run.ids}) < 2:
        return list(batches)
    late = [_ReferenceBatch(batch.runs, False) for batch in batches]
    return [_ReferenceBatch(runs, True), *(part for part in late if any(part.ids(run) for run in part.runs))]


class _ConfirmBatch:
    """The submissions one confirming process answers, in turn: ``(state, check ids)``; ``current``: whose figures
    it sends now."""

    def __init__(self, entries: list[tuple[_State, list[str]]]):
        self.entries = entries
        self.current: _State | None = None

    def ids(self, st: _State) -> list[str]:
        return next((ids for s, ids in self.entries if s is st), [])


def _batches(runs: list[_ReferenceRun], workers: int) -> list[_ReferenceBatch]:
    """Consecutive runs shared between about ``workers`` processes, at most ``REFERENCE_BATCH`` draws each."""
    if not runs:
        return []
    count = max(min(max(workers, 1), len(runs)), -(-len(runs) // REFERENCE_BATCH))
    size = -(-len(runs) // count)
    return [_ReferenceBatch(runs[i:i + size]) for i in range(0, len(runs), size)]


class _State:
    """One submission while it is being graded."""

    def __init__(self, sub: Submission, ids: list[str], lang: str, reference: _ReferenceRun | None):
        self.sub, self.ids, self.lang, self.reference = sub, ids, lang, reference
        self.results: dict[str, CheckResult] = {}
        self.differential: dict[str, tuple[dict, float]] = {}
        """A differential check's figures, waiting for the reference's answer."""
        self.confirming: dict[str, tuple[dict, float]] = {}
        """A confirmed check's figures as the child reported them, waiting for a trusted process to recompute them
        (``checker.checks.confirm``)."""
        self.anchor: int | None = None
        """The parent's draw that anchors the initial weights of the checks it confirms."""
        self.sent: set[str] = set()
        """Confirmed checks whose figures went to a trusted process."""
        self.timeouts = 0
        """Timeouts no protocol function explains."""
        self.hung: dict[str, tuple[str, float]] = {}
        """Protocol function -> (the check it hung in, that check's limit): known to hang."""
        self.returned: set[str] = set()
        """Protocol functions that returned: every function of each check that measured."""
        self.unexplained: list[tuple[str, float]] = []
        """Checks that timed out where no single function could be named yet (and their limits)."""
        self.running = 0
        self.finished = False
        self.report = Report(file=sub.filename)

    def isolation(self, event: Isolation) -> None:
        """The weakest isolation any of this submission's children had is the submission's."""
        report = self.report
        if report.isolation != "reduced":
            report.isolation = event.level
        report.isolation_why = sorted(set(report.isolation_why) | set(event.why))

    def result(self, cid: str, status: Status, message: str, measured=None, seconds: float = 0.0) -> CheckResult:
        chk = REGISTRY[cid]
        res = CheckResult(cid, chk.family, chk.title.render(self.lang), status, message, measured or {}, seconds)
        self.results[cid] = res
        return res

    def settled(self, cid: str) -> bool:
        return cid in self.results or cid in self.differential or cid in self.confirming


# ---------------------------------------------------------------------------- the grader


class _Grader:
    def __init__(self, lab, limits: Limits, lang: str, on_check, on_report, states: list[_State] | None = None):
        self.lab, self.limits, self.lang = lab, limits, lang
        self.on_check, self.on_report = on_check, on_report
        self.states = states if states is not None else []
        """Every submission graded: those waiting on a reference's draw finish when its answers are in."""
        self.reruns: list[Job] = []
        self.confirms: list[tuple[_State, list[str]]] = []
        """Figures to confirm in the next round: each submission's checks, shared out by ``next_round``."""

    # -- planning

    def plan(self, states: list[_State], references: list[_ReferenceBatch], split: int,
             early: bool = False) -> list[Job]:
        """The jobs: the reference processes, then each submission's checks in ``split`` groups; with ``early``,
        a submission's early checks (``Check.early``) in a group of their own, forked while the zygote still
        warms (``Job.early``)."""
        # the reference processes first: they fork before any learner file is loaded, and they never load one
        source = self.lab.track.reference.read_text(encoding="utf-8") if references else ""
        jobs = []
        many = len(states) > 1
        for part in _reference_parts(references, early, many):
            for run in part.runs:
                run.open += 1
            runs = [(run.draw, part.ids(run)) for run in part.runs]
            jobs.append(Job(Task("checker.engine.worker:reference_target", (runs, self.lab, source)),
                            self.limits, tag=("reference", part), early=part.early is True,
                            seconds=reference_seconds(runs, self.limits.step_timeout)))
        for st in states:
            # one file (kata check): its early checks apart, on the core the zygote's import leaves idle; many files
            # (kata grade, mutants verify): the references' early checks fill that core, and each file keeps its
            # early checks in its own child (a child more per file would cost a fork and a load each)
            first = [c for c in st.ids if REGISTRY[c].early] if early and not many else []
            if first:
                jobs.append(self._job(st, first, self.limits, early=True))
            for group in split_checks([c for c in st.ids if c not in first], split, dict(self.lab.track.costs)):
                jobs.append(self._job(st, group, self.limits))
        return jobs

    def _job(self, st: _State, group: list[str], limits: Limits, early: bool = False) -> Job:
        draw = st.reference.draw if st.reference is not None else None
        st.running += 1
        args = (st.sub.source, st.sub.filename, group, self.lab, draw, st.anchor)
        return Job(Task("checker.engine.worker:check_target", args), limits, tag=(st, group), early=early,
                   seconds=job_seconds(group, limits.step_timeout))

    def _confirm_job(self, entries: list[tuple[_State, list[str]]]) -> Job:
        """A trusted process that recomputes, for each ``(st, ids)`` in turn, ``ids``' figures from the witnesses
        ``st``'s child reported (each entry counts in its ``st.running`` from ``_confirm_next`` on)."""
        groups = [(st.anchor, [(cid, st.confirming[cid][0]) for cid in ids]) for st, ids in entries]
        seconds = sum(job_seconds(ids, self.limits.step_timeout) for _, ids in entries)
        return Job(Task("checker.engine.worker:confirm_target", (groups, self.lab)), self.limits,
                   tag=("confirm", _ConfirmBatch(entries)), seconds=seconds)

    def next_round(self, workers: int) -> list[Job]:
        """The jobs of the next round: the reruns, and the figures to confirm shared between at most ``workers``
        trusted processes (one process answers many submissions in turn: a fork each, not one per submission)."""
        entries, self.confirms = self.confirms, []
        parts = max(1, min(workers, len(entries)))
        jobs = [self._confirm_job(entries[i::parts]) for i in range(parts) if entries[i::parts]]
        jobs, self.reruns = [*self.reruns, *jobs], []
        return jobs

    # -- events into results

    def on_event(self, job: Job, event: Event) -> None:
        """Take one parsed event; never raises (a fault here marks that job, never the whole run)."""
        try:
            self._on_event(job, event)
        except Exception as exc:  # noqa: BLE001 - a bug of kata's must not cost a class its grades
            st = job.tag[1].current if job.tag[0] == "confirm" else job.tag[0]
            if isinstance(st, _State):
                if st.report.error is None:
                    st.report.error_kind = "internal"
                    st.report.error = INTERNAL.render(self.lang, error=f"{type(exc).__name__}: {exc}")

    def _on_event(self, job: Job, event: Event) -> None:
        if job.tag[0] == "reference":
            self._on_reference_event(job.tag[1], event)
            return
        if job.tag[0] == "confirm":
            self._on_confirm_event(job.tag[1], event)
            return
        st: _State = job.tag[0]
        if isinstance(event, Isolation):
            st.isolation(event)
            return
        if isinstance(event, FileError) and st.report.error_kind != "tampered":
            st.report.error_kind = event.error_kind
            st.report.error = event.es if self.lang == "es" and event.es else event.message
        elif isinstance(event, Tampered) and st.report.error_kind != "tampered":  # the first says why; it sticks
            st.report.error_kind = "tampered"
            st.report.error = TAMPERED.render(self.lang, file=st.sub.filename, what=", ".join(event.what[:4]))
        if not isinstance(event, Measured | Raised):
            return
        cid = event.check
        if st.report.error is not None or cid not in REGISTRY or cid not in st.ids or st.settled(cid):
            return  # a repeated or unasked-for figure is never taken (a forged second answer changes nothing)
        if isinstance(event, Measured):
            self._take_measured(st, cid, event)
        else:
            self._emit(st, st.result(cid, ERROR, RAISED.render(self.lang, error=in_both(event.error)),
                                     {"exception": event.type, "error": event.error}, event.seconds))

    def _on_reference_event(self, batch: _ReferenceBatch, event: Event) -> None:
        if isinstance(event, Start):
            index = draw_index(event.step)
            if index is not None and index < len(batch.runs):
                # the draws before this one are complete: the submissions waiting on them can finish
                for run in batch.runs[:index]:
                    self._reference_done(run, "no answer", batch)
                batch.current = batch.runs[index]
            return
        run = batch.current
        if run is None or not isinstance(event, Measured | Raised) or event.check not in REGISTRY \
                or event.check not in batch.ids(run):
            return
        if isinstance(event, Measured):
            run.answers[event.check] = event.measured
        else:
            last = [line for line in event.error.strip().splitlines() if line.strip()][-1:]
            run.failures[event.check] = f"{event.type}: {last}"

    def _take_measured(self, st: _State, cid: str, event: Measured) -> None:
        st.returned.update(REGISTRY[cid].calls)
        if cid in CONFIRM:  # judged once a trusted process has recomputed its figures
            st.confirming[cid] = (event.measured, event.seconds)
        elif REGISTRY[cid].reference:  # judged once the reference's answer is in
            st.differential[cid] = (event.measured, event.seconds)
        else:
            self._emit(st, self._judged(st, cid, event.measured, event.seconds))

    def _on_confirm_event(self, batch: _ConfirmBatch, event: Event) -> None:
        """An event of a confirming process: a step ``confirm:i`` says whose figures follow."""
        if isinstance(event, Start):  # a check's own step says nothing of whose it is
            index = draw_index(event.step, CONFIRM_STEP)
            if index is not None:
                batch.current = batch.entries[index][0] if index < len(batch.entries) else None
            return
        if batch.current is not None and getattr(event, "check", None) in batch.ids(batch.current):
            self._on_confirmed(batch.current, event)

    def _on_confirmed(self, st: _State, event: Event) -> None:
        """A trusted process's figures for a confirmed check: the verdict is judged on them. Where the child's own
        figures pass and these fail, the child reported what its run did not produce: held for review."""
        if not isinstance(event, Measured) or event.check not in st.confirming or event.check in st.results:
            return
        cid, trusted = event.check, event.measured
        reported, seconds = st.confirming[cid]
        if UNCONFIRMED in trusted:
            self._unconfirmed(st, cid, trusted, reported, seconds)
            return
        res = self._judged(st, cid, trusted, seconds)
        if not res.passed:
            if self._passes(cid, reported):
                st.report.integrity.append(FORGED_FIGURES.render(self.lang, check=cid))
            else:  # both fail: the child's own figures say more (a cut autograd path); nobody forges a failure
                res = self._judged(st, cid, reported, seconds)
        self._emit(st, res)

    def _unconfirmed(self, st: _State, cid: str, trusted: dict, reported: dict, seconds: float) -> None:
        """A check whose figures no trusted process could recompute: it fails. Where the child said its witness too
        large to send, figures that fail stand (nobody forges a failure) and figures that pass are an error held for
        review, never a pass (a limit of kata, no sign of forgery)."""
        if TOO_LARGE not in trusted:
            why = str(trusted[UNCONFIRMED])
            self._emit(st, st.result(cid, FAIL, UNCONFIRMED_FIGURES.render(self.lang, why=why), trusted, seconds))
        elif not self._passes(cid, reported):
            self._emit(st, self._judged(st, cid, reported, seconds))
        else:
            params = trusted[TOO_LARGE]
            st.report.integrity.append(HELD_TOO_LARGE.render(self.lang, check=cid, params=params))
            self._emit(st, st.result(cid, ERROR, TOO_LARGE_TO_CONFIRM.render(self.lang, params=params), trusted,
                                     seconds))

    def _passes(self, cid: str, measured: dict) -> bool:
        try:
            with judging(self.lab.track):
                return bool(REGISTRY[cid].judge(measured).passed)
        except Exception:  # noqa: BLE001 - figures the judge cannot read pass nothing
            return False

    def _reference_done(self, run: _ReferenceRun, why: str, batch: _ReferenceBatch) -> None:
        """``batch``'s process is done with ``run`` (``why``: what its unanswered checks say); the run is done
        when every process answering it is."""
        if run.done or id(run) in batch.closed:
            return
        batch.closed.add(id(run))
        for cid in batch.ids(run):
            if cid not in run.answers:
                run.failures.setdefault(cid, why)
        run.open -= 1
        if run.open > 0:
            return
        run.done = True
        for st in self.states:
            if st.reference is run and st.running == 0 and not st.finished:
                self._finish(st)

    def _judged(self, st: _State, cid: str, measured: dict, seconds: float,
                reference: dict | None = None) -> CheckResult:
        chk = REGISTRY[cid]
        try:
            with judging(self.lab.track):
                verdict = chk.judge(measured, reference) if chk.reference else chk.judge(measured)
            return st.result(cid, PASS if verdict.passed else FAIL, verdict.render(self.lang), measured, seconds)
        except Exception as exc:  # malformed figures: never a pass
            return st.result(cid, ERROR, BAD_FIGURES.render(self.lang, error=f"{type(exc).__name__}: {exc}"),
                             measured, seconds)

    def _emit(self, st: _State, res: CheckResult) -> None:
        if self.on_check:
            self.on_check(st.sub, res)

    # -- the rerun policy

    def on_outcome(self, outcome: Outcome) -> None:
        if outcome.job.tag[0] in ("confirm", "reference"):
            (self._confirm_outcome if outcome.job.tag[0] == "confirm" else self._reference_outcome)(outcome)
            return
        st, group = outcome.job.tag
        st.running -= 1
        st.report.output += outcome.output
        st.report.output_dropped += outcome.output_dropped
        missing = [c for c in group if not st.settled(c)]
        if st.report.error is None and missing:
            self._after_failure(st, outcome, missing)
        self._confirm_next(st)
        self._finish_when_ready(st)

    def _reference_outcome(self, outcome: Outcome) -> None:
        batch: _ReferenceBatch = outcome.job.tag[1]
        why = _how(outcome) if outcome.timed_out_step is None else f"timed out in {outcome.timed_out_step}"
        for run in batch.runs:
            self._reference_done(run, why, batch)

    def _finish_when_ready(self, st: _State) -> None:
        """The report, once no child of ``st`` runs and the reference's answers it waits for are in."""
        if st.running == 0 and (st.reference is None or st.reference.done) and not st.finished:
            self._finish(st)

    def _confirm_next(self, st: _State) -> None:
        """The confirmed checks ``st``'s children measured so far go to a trusted process, in the next round (once
        every child of this one is gone)."""
        to_confirm = [c for c in st.confirming if c not in st.results and c not in st.sent]
        if st.report.error is None and to_confirm:
            st.sent.update(to_confirm)
            st.running += 1
            self.confirms.append((st, to_confirm))

    def _confirm_outcome(self, outcome: Outcome) -> None:
        """A confirming process ended. A submission it left unanswered is confirmed again in a process of its own
        when the process answered others too (what stopped it may be another file's witness: a classmate's never
        costs a file its confirmation); alone, its checks are not confirmed."""
        batch: _ConfirmBatch = outcome.job.tag[1]
        why = _how(outcome) if outcome.timed_out_step is None else f"timed out in {outcome.timed_out_step}"
        for st, ids in batch.entries:
            st.running -= 1
            unanswered = [c for c in ids if c not in st.results]
            if unanswered and len(batch.entries) > 1:
                st.running += 1
                self.reruns.append(self._confirm_job([(st, unanswered)]))
                continue
            self._not_confirmed(st, ids, why)
            self._finish_when_ready(st)

    def _not_confirmed(self, st: _State, ids, why: str) -> None:
        """Confirmed checks among ``ids`` that no trusted process answered: an error, never a pass."""
        for cid in ids:
            if cid not in st.results:
                self._emit(st, st.result(cid, ERROR, NOT_CONFIRMED.render(self.lang, why=why)))

    def _after_failure(self, st: _State, outcome: Outcome, missing: list[str]) -> None:
        step = outcome.timed_out_step or outcome.current_step
        if step in ("load", "start", None):
            # the file never finished importing: nothing here can be graded
            st.report.error_kind = "load"
            if outcome.timed_out_step:
                seconds = min(LOAD_SECONDS, self.limits.step_timeout)
                st.report.error = LOAD_TIMEOUT.render(self.lang, file=st.sub.filename, seconds=seconds)
            else:
                st.report.error = LOAD_DIED.render(self.lang, file=st.sub.filename, how=_how(outcome))
            return
        culprit = step if step in missing else missing[0]
        if outcome.timed_out_step:
            timeout = min(REGISTRY[culprit].timeout, outcome.job.limits.step_timeout)
            self._emit(st, st.result(culprit, TIMEOUT, TIMED_OUT.render(self.lang, seconds=timeout)))
            st.unexplained.append((culprit, timeout))
            _explain_hangs(st)
        else:
            self._emit(st, st.result(culprit, ERROR, DIED.render(self.lang, how=_how(outcome))))
        rest = [c for c in missing if c != culprit]
        for cid in list(rest):
            hung = next((f for f in REGISTRY[cid].calls if f in st.hung), None)
            if hung is not None:  # it would hang too: say which function, run the others
                where, seconds = st.hung[hung]
                self._emit(st, st.result(cid, SKIPPED, HUNG.render(self.lang, function=hung, seconds=seconds,
                                                                   where=where)))
                rest.remove(cid)
        if rest and st.timeouts >= MAX_TIMEOUTS:
            # timeouts no function explains: stop paying for them
            for cid in rest:
                self._emit(st, st.result(cid, SKIPPED, NOT_RUN.render(self.lang)))
        elif rest:
            self.reruns.append(self._job(st, rest, self.limits))

    # -- the report

    def _finish(self, st: _State) -> None:
        st.finished = True
        if st.report.error is None:
            ref = st.reference
            self._not_confirmed(st, list(st.confirming), "not run")
            for cid, (measured, seconds) in st.differential.items():
                if ref is not None and cid in ref.answers:
                    self._emit(st, self._judged(st, cid, measured, seconds, ref.answers[cid]))
                else:
                    why = ref.failures.get(cid, "no answer") if ref is not None else "no reference process"
                    self._emit(st, st.result(cid, ERROR, NO_REFERENCE.render(self.lang, why=why), measured, seconds))
            st.report.checks = [st.results[c] for c in st.ids if c in st.results]
            _one_crash_shown_once(st.report.checks, self.lang)
        if self.on_report:
            self.on_report(st.report)


def _explain_hangs(st: _State) -> None:
    """Put each timeout down to the protocol function that hung, where the checks' ``calls`` allow it.

    A check that calls one function hung in it; one that calls several hung in the only one of them that
    has not returned elsewhere in this submission; one that calls a function known to hang is explained by
    it. What stays unexplained counts towards ``MAX_TIMEOUTS``. Run again as more functions return, an
    early timeout may be explained later.
    """
    changed = True
    while changed:
        changed = False
        for cid, seconds in list(st.unexplained):
            calls = REGISTRY[cid].calls
            if any(f in st.hung for f in calls):
                st.unexplained.remove((cid, seconds))
                changed = True
                continue
            suspects = list(calls) if len(calls) == 1 else [f for f in calls if f not in st.returned]
            if len(suspects) == 1:
                st.hung[suspects[0]] = (cid, seconds)
                st.unexplained.remove((cid, seconds))
                changed = True
    st.timeouts = len(st.unexplained)


def _one_crash_shown_once(checks: list[CheckResult], lang: str) -> None:
    """When one error stopped several checks, show its traceback once, on the first, naming the others."""
    by_error: dict[str, list[CheckResult]] = {}
    for res in checks:
        error = res.measured.get("error") if res.status == ERROR else None
        if error:
            # the same exception reached through other callers (fit -> train_epoch) is the same crash
            last = [line for line in str(error).strip().splitlines() if line.strip()][-1:]
            by_error.setdefault(f"{res.measured.get('exception')}: {last}", []).append(res)
    for same in by_error.values():
        if len(same) > 1:
            first, rest = same[0], same[1:]
            first.message += RAISED_ALSO.render(lang, ids=", ".join(r.id for r in rest))
            for res in rest:
                res.message = RAISED_SAME.render(lang, first=first.id)


def _integrity(sub: Submission, lang: str) -> list[str]:
    return review_reasons(sub.source, sub.filename, lang=lang)


def grade(
    submissions: Sequence[Submission],
    lab,
    *,
    check_ids: Sequence[str] | None = None,
    workers: int = 2,
    split: int = 1,
    early: bool | None = None,
    lang: str = "en",
    limits: Limits | None = None,
    draw: Any = None,
    secret: bytes | None = None,
    on_check: Callable[[Submission, CheckResult], None] | None = None,
    on_report: Callable[[Report], None] | None = None,
) -> list[Report]:
    """Grade every submission; each report lists the checks in catalogue order.

    The differential checks' arguments: a submission's own ``draw``, else ``draw`` (tests), else with a
    grading ``secret`` one derived from the secret and the submission's code (``Draw.from_secret``: the
    same file and secret give the same report), else one drawn fresh here, once per run. Submissions with
    equal draws share their reference answers.

    ``early``: the early checks (``Check.early``) run in children forked while the zygote still warms
    (``Job.early``); None: so for many submissions while it warms (the references' early checks then), else not.
    """

    device = getattr(lab, "device", "cpu")
    ids = ordered_ids(check_ids, device=device, track=lab.track)
    limits = _grading_limits(limits, submissions, lab.track, device)
    if secret is not None and not secret:
        raise ValueError("a grading secret cannot be empty")
    shared = draw if draw is not None or secret is not None else Draw.fresh(lab.track)
    references: dict[str, _ReferenceRun] = {}
    states: list[_State] = []
    for sub in submissions:
        own = ids if sub.check_ids is None else ordered_ids(sub.check_ids, device=device, track=lab.track)
        ref = _reference_for(sub, own, references, shared, secret, lab.track)
        state = _State(sub, own, lang, ref)
        state.anchor = _anchor(sub, draw, secret)
        state.report.reproducible = sub.draw is not None or draw is not None or secret is not None
        states.append(state)
    for ref in references.values():
        ref.ids = ordered_ids(ref.ids, device=device, track=lab.track)
    grader = _Grader(lab, limits, lang, on_check, on_report, states)
    for st in states:
        st.report.integrity = _integrity(st.sub, lang)
    queue = grader.plan(states, _batches(list(references.values()), workers), split, _early(early, states))
    while queue:
        run_jobs(queue, workers=workers, on_event=grader.on_event, on_outcome=grader.on_outcome)
        queue = grader.next_round(workers)
    _finish_unfinished(grader, states)
    return [st.report for st in states]


def _early(early: bool | None, states: list[_State]) -> bool:
    """Whether early checks run apart: as asked, else for many submissions while the zygote still warms."""
    return early if early is not None else len(states) > 1 and not zygote().ready_now()


def _grading_limits(limits: Limits | None, submissions: Sequence[Submission], track: Track, device: str) -> Limits:
    """The limits a grading runs under: on a GPU the cap is on data; hardened, kata's and the files' folders hidden."""
    limits = limits or Limits()
    if device.startswith("cuda"):  # CUDA reserves address space beyond any cap: the cap is on data instead
        limits = replace(limits, gpu=True)
    if limits.harden:  # kata's data, every track's reference and mutants, each submission's folder: not there
        folders = submission_folders([sub.filename for sub in submissions])
        limits = replace(limits, hide=tuple(dict.fromkeys([*(limits.hide or hidden_paths()), *folders])),
                         shared_files=limits.shared_files or shared_files(track))
    return limits


def _reference_for(sub: Submission, own: list[str], references: dict[str, _ReferenceRun], shared: Any,
                   secret: bytes | None, track: Track) -> _ReferenceRun | None:
    """The reference run that answers ``sub``'s differential checks (shared by equal draws); None if it has none."""
    wanted = [c for c in own if REGISTRY[c].reference]
    if not wanted:
        return None
    this_draw = sub.draw if sub.draw is not None else shared
    if this_draw is None:
        this_draw = Draw.from_secret(secret, sub.source.encode("utf-8"), track)
    key = repr(this_draw)  # equal draws, one set of answers
    ref = references.get(key)
    if ref is None:
        ref = references[key] = _ReferenceRun(this_draw, [])
    ref.ids.extend(c for c in wanted if c not in ref.ids)
    return ref


def _finish_unfinished(grader: _Grader, states: list[_State]) -> None:
    """Finish every report still open once the jobs are done, so that none ever passes unsaid."""
    for st in states:
        if not st.finished:  # a reference process that never ran (no job at all): say so, never pass
            if st.reference is not None:
                st.reference.done = True
            grader._finish(st)


def _anchor(sub: Submission, draw: Any, secret: bytes | None) -> int:
    """The draw that anchors a submission's confirmed checks (``checker.checks.confirm``): from the grading secret
    and the file's code (a regrade repeats it), else from the draw given (tests), else fresh."""
    if secret is not None:
        seed = hashlib.blake2b(sub.source.encode("utf-8"), key=secret[:64], person=b"kata-anchor").digest()
    elif sub.draw is not None or draw is not None:
        given = sub.draw if sub.draw is not None else draw
        seed = hashlib.blake2b(repr(given).encode(), person=b"kata-anchor").digest()
    else:
        return secrets.randbits(62)
    return int.from_bytes(seed[:8], "big") >> 2


def grade_one(source: str, filename: str, lab, **kwargs: Any) -> Report:
    kwargs.setdefault("split", kwargs.get("workers", 2))
    # the early checks first, in a child forked while the zygote still warms (on the core its import leaves idle);
    # a zygote already warm (`kata watch` after its first run) gains nothing from it, and two more children cost
    kwargs.setdefault("early", not zygote().ready_now())
    # the reference process runs beside the file's own children (and the early child, should it outlast the warming)
    kwargs.setdefault("workers", kwargs["split"] + 1 + int(kwargs["early"]))
    return grade([Submission(source, filename)], lab, **kwargs)[0]
