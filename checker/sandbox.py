"""Run untrusted loop code in forked children, never in the calling process.

The parent imports torch once and forks one child per job, so a job pays no import.
Each child:
- starts a new session, so the whole process group it may create is killed at the end;
- gets a hard address-space limit (what the parent had mapped plus a budget);
- has its stdout/stderr captured through a pipe, capped at ``Limits.output_bytes``;
- reports over a private pipe as JSON lines; ``{"event": "start", "step": ...}`` opens a step
  with its own time limit, and ``{"event": "done"}`` says the job ended normally.

The parent multiplexes any number of children (``run_jobs``), keeps ``workers`` of them busy,
kills a child whose current step outlives its limit, and records how each one ended.
Verdicts are never computed here, nor in the child: the caller judges what the child measured.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# Keep the fork cheap and safe: tiny models run fastest on one thread, and a fork
# after an OpenMP pool has started can deadlock.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# CUDA must not be initialised in the parent: a forked child could not use it. The default
# torch.cuda.is_available() calls cuInit ("poisons fork"); the NVML-based check does not.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")


@dataclass(frozen=True)
class Limits:
    step_timeout: float = 60.0
    """Seconds a step may run (a step announces itself with a ``start`` event; it may ask for less)."""
    memory_bytes: int = 3 * 1024**3
    """Address space a child may add to what it inherited."""
    output_bytes: int = 16 * 1024
    """How much of the child's own printing is kept; the rest is counted and dropped."""


class Reporter:
    """The child's side of the event pipe."""

    def __init__(self, fd: int):
        self._fd = fd
        self._write = os.write  # bound now, so a loop that replaces os.write cannot intercept it

    def send(self, event: dict) -> None:
        data = (json.dumps(event, default=repr) + "\n").encode()
        view = memoryview(data)
        while view:
            written = self._write(self._fd, view)
            view = view[written:]

    def start(self, step: str, timeout: float | None = None) -> None:
        self.send({"event": "start", "step": step, "timeout": timeout})


@dataclass
class Job:
    """One child's work: ``target(reporter)`` runs in the child."""

    target: Callable[[Reporter], None]
    limits: Limits = field(default_factory=Limits)
    tag: object = None


@dataclass
class Outcome:
    job: Job
    events: list[dict]
    finished: bool
    """The child reported ``done``: the job ran to its end."""
    exit_status: int | None
    """Exit code, or minus the signal number that ended the child."""
    timed_out_step: str | None
    current_step: str | None
    """The last step the child started (where it was when it ended)."""
    output: str
    output_dropped: int
    memory_exceeded: bool = False
    seconds: float = 0.0

    @property
    def crashed(self) -> bool:
        return not self.finished and self.timed_out_step is None


def _virtual_size() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _child_main(job: Job, event_fd: int, output_fd: int) -> None:
    """Runs in the forked child; never returns."""
    status = 0
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        # print() goes through sys.stdout, which the parent may have replaced (click's CliRunner, a
        # notebook, an IDE): point both streams at the captured descriptors, or the child's output
        # would pile up in its own memory, uncapped and unseen.
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)
        if faulthandler.is_enabled():  # its crash dump, too, belongs in the captured output
            faulthandler.enable(file=sys.stderr)
        if job.limits.memory_bytes:
            cap = _virtual_size() + job.limits.memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        reporter = Reporter(event_fd)
        try:
            job.target(reporter)
        except BaseException as exc:  # the job's own code failed: say so, then end
            reporter.send(
                {"event": "internal_error", "error": "".join(traceback.format_exception(exc))[-4000:]}
            )
            status = 70
        else:
            reporter.send({"event": "done"})
    except BaseException:
        status = 71
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(status)


class _Running:
    def __init__(self, job: Job):
        self.job = job
        self.events: list[dict] = []
        self.finished = False
        self.step: str | None = None
        self.deadline = time.monotonic() + job.limits.step_timeout
        self.timed_out_step: str | None = None
        self.output = bytearray()
        self.dropped = 0
        self.buffer = b""
        self.open_fds: set[int] = set()
        """The parent's read ends still open (a closed one's number may be reused by a later child)."""
        self.started = time.monotonic()
        event_r, event_w = os.pipe()
        out_r, out_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            os.close(event_r)
            os.close(out_r)
            _child_main(job, event_w, out_w)
        os.close(event_w)
        os.close(out_w)
        self.pid = pid
        self.event_fd = event_r
        self.output_fd = out_r
        self.open_fds = {event_r, out_r}

    def close(self, selector: selectors.BaseSelector, fd: int | None = None) -> None:
        """Stop watching and close ``fd`` (default: every read end still open); only this child's own."""
        for own in [fd] if fd is not None else list(self.open_fds):
            if own in self.open_fds:
                self.open_fds.discard(own)
                selector.unregister(own)
                os.close(own)

    def on_events(self, data: bytes) -> None:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("event")
            if kind == "start":
                self.step = str(event.get("step"))
                timeout = event.get("timeout") or self.job.limits.step_timeout
                self.deadline = time.monotonic() + min(float(timeout), self.job.limits.step_timeout)
            elif kind == "done":
                self.finished = True
            self.events.append(event)

    def on_output(self, data: bytes) -> None:
        room = self.job.limits.output_bytes - len(self.output)
        self.output += data[:room]
        self.dropped += max(len(data) - room, 0)

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self) -> Outcome:
        self.kill()  # whatever the child started goes with it
        _, status = os.waitpid(self.pid, 0)
        self.kill()
        code = os.waitstatus_to_exitcode(status)
        # A child that reported "done" but then died on a signal we did not send still finished its job.
        memory = b"can't allocate memory" in bytes(self.output) or any(
            "MemoryError" in str(e.get("error", "")) or "allocate memory" in str(e.get("error", ""))
            for e in self.events
        )
        return Outcome(
            job=self.job,
            events=self.events,
            finished=self.finished,
            exit_status=code,
            timed_out_step=self.timed_out_step,
            current_step=self.step,
            output=bytes(self.output).decode("utf-8", "replace"),
            output_dropped=self.dropped,
            memory_exceeded=memory,
            seconds=time.monotonic() - self.started,
        )


def run_jobs(
    jobs: Iterable[Job],
    *,
    workers: int = 2,
    on_event: Callable[[Job, dict], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run every job in its own forked child, ``workers`` at a time; outcomes in the jobs' order."""
    pending = list(jobs)
    order = {id(job): i for i, job in enumerate(pending)}
    pending.reverse()
    outcomes: list[Outcome | None] = [None] * len(order)
    running: dict[int, _Running] = {}
    selector = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and len(running) < max(workers, 1):
                child = _Running(pending.pop())
                running[child.pid] = child
                selector.register(child.event_fd, selectors.EVENT_READ, (child, "events"))
                selector.register(child.output_fd, selectors.EVENT_READ, (child, "output"))
            now = time.monotonic()
            timeout = max(min(c.deadline for c in running.values()) - now, 0.0)
            for key, _ in selector.select(timeout=min(timeout, 0.5)):
                child, stream = key.data
                try:
                    data = os.read(key.fd, 65536)
                except OSError:
                    data = b""
                if data:
                    before = len(child.events)
                    (child.on_events if stream == "events" else child.on_output)(data)
                    if on_event and stream == "events":
                        for event in child.events[before:]:
                            on_event(child.job, event)
                    continue
                child.close(selector, key.fd)
            now = time.monotonic()
            for pid, child in list(running.items()):
                if child.open_fds and now > child.deadline and not child.finished:
                    child.timed_out_step = child.step or "start"
                    child.kill()
                if not child.open_fds or child.timed_out_step:
                    child.close(selector)
                    del running[pid]
                    outcome = child.reap()
                    outcomes[order[id(child.job)]] = outcome
                    if on_outcome:
                        on_outcome(outcome)
    finally:
        for child in running.values():
            child.kill()
            child.close(selector)
            try:
                os.waitpid(child.pid, 0)
            except ChildProcessError:
                pass
        selector.close()
    return [o for o in outcomes if o is not None]


def run_job(job: Job, *, on_event: Callable[[Job, dict], None] | None = None) -> Outcome:
    return run_jobs([job], workers=1, on_event=on_event)[0]
