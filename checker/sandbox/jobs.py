"""Run untrusted loop code in forked children, never in the calling process.

The parent imports torch once and forks one child per job, so a job pays no import.
Each child:
- starts a new session, so the whole process group it may create is killed at the end;
- gets a hard address-space limit (what the parent had mapped plus a budget);
- has its stdout/stderr captured through a pipe, capped at ``Limits.output_bytes``;
- reports over a private pipe as JSON lines; ``{"event": "start", "step": ...}`` opens a step
  with its own time limit, and ``{"event": "done"}`` says the job ended normally.

The parent multiplexes any number of children (``run_jobs``), keeps ``workers`` of them busy,
kills a child whose current step outlives its limit, and records how each one ended. Two bounds
no event can move: a job's total time (``Job.seconds``, fixed when its child starts: a step's end
never passes it) and the bytes of events it may send (``MAX_JOB_BYTES``: past them the job is
tampering and is killed).
Verdicts are never computed here, nor in the child: the caller judges what the child measured.
"""

from __future__ import annotations

import faulthandler
import hmac
import json
import os
import pickle
import resource
import select
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from checker.base.proc import proc_status
from checker.sandbox import hardening
from checker.sandbox.events import (
    MAX_EVENTS,
    MAX_JOB_BYTES,
    MAX_LINE,
    Done,
    Event,
    LineBuffer,
    Malformed,
    Start,
    Tampered,
    parse,
)
from checker.sandbox.zygote import ChildSpec, Task, ZygoteError, preload, zygote

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
    """Address space a child may add to what it inherited (its data segment where ``gpu`` is set)."""
    gpu: bool = False
    """The child may use a GPU. CUDA reserves address space far beyond any memory cap when it starts (with an
    address-space cap it fails with "out of memory"), so such a child's cap is on its data (RLIMIT_DATA: heap
    and private writable mappings) instead: looser (shared mappings are not counted), the GPU's own memory
    never counted by either."""
    output_bytes: int = 16 * 1024
    """How much of the child's own printing is kept; the rest is counted and dropped."""
    harden: bool = True
    """Contain the child (checker.sandbox.hardening): own descriptors only, rlimits, a private folder, an
    unprivileged uid and no network where kata runs as root, seccomp."""
    hide: tuple[str, ...] = ()
    """Folders and files the child must not see (``checker.setting.tracks.hidden_paths``: kata's data, the class
    folder); the parent computes them, the sandbox knows no track."""
    shared_files: tuple[str, ...] = ()
    """Files copied, read-only (mode 0444), into a hardened child's private folder under their base names (a
    course's data file: ``checker.setting.tracks.shared_files``), so the child reads the copy while the original
    stays hidden; the parent computes them, the sandbox knows no track."""


try:  # C implementations, bound now: a loop that patches json, hashlib or os cannot reach them
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - every CPython has _blake2
    from hashlib import blake2b as _blake2b
from json import encoder as _json_encoder  # noqa: E402 - beside the other primitives bound at import

_ENCODER = _json_encoder.c_make_encoder
_ESCAPE = _json_encoder.c_encode_basestring_ascii or _json_encoder.py_encode_basestring_ascii
_FLOAT_REPR = float.__repr__
_WRITE = os.write
_JOIN = "".join
MAC_BYTES = 16


def _encoder():
    if _ENCODER is not None:
        markers: dict = {}
        make = _ENCODER(markers, repr, _ESCAPE, None, ":", ",", False, False, True)
        return lambda obj: _JOIN(make(obj, 0))
    return json.JSONEncoder(default=repr, separators=(",", ":")).encode


def mac(key: bytes, payload: bytes) -> bytes:
    return _blake2b(payload, key=key, digest_size=MAC_BYTES).hexdigest().encode()


class Reporter:
    """The child's side of the event pipe: JSON lines, each signed with the job's key.

    ``Reporter(fd, key)`` returns a plain namespace whose ``send`` and ``start`` are closures: its type is
    built in (immutable), its key lives only in those closures, and the encoder, MAC and write it uses
    were bound before any loop file loaded. So a loop that patches this class, json, hashlib or os, or
    writes into the pipe by descriptor number, cannot make the parent accept an event the job did not
    send (an unsigned line is reported as tampering). ``arm(check)`` adds a guard run before each event
    goes: a change it finds is sent instead, as ``tampered``.
    """

    def __new__(cls, fd: int, key: bytes = b""):
        import types

        encode = _encoder()
        guard: list = []
        send_key = bytes(key)

        def send(event: dict) -> None:
            if guard and event.get("event") not in ("tampered", "start"):
                changed = guard[0]()
                if changed:
                    event = {"event": "tampered", "what": list(changed)}
            payload = encode(event).encode()
            data = mac(send_key, payload) + b" " + payload + b"\n" if send_key else payload + b"\n"
            view = memoryview(data)
            while view:
                written = _WRITE(fd, view)
                view = view[written:]

        def start(step: str, timeout: float | None = None) -> None:
            send({"event": "start", "step": step, "timeout": timeout})

        step_guard: list = []
        said: list = []

        def arm(check, at_step=None) -> None:
            """``check`` runs before each event; ``at_step`` (cheaper) at every optimizer step."""
            guard[:] = [check]
            step_guard[:] = [at_step] if at_step else []

        def on_step(*_args) -> None:
            # a patch made and undone between two events is seen here (torch's global step pre-hook,
            # registered before any guard took its snapshot)
            if step_guard and not said:
                changed = step_guard[0]()
                if changed:
                    said.append(True)
                    send({"event": "tampered", "what": list(changed)})

        return types.SimpleNamespace(send=send, start=start, arm=arm, on_step=on_step, _fd=fd)


@dataclass
class Job:
    """One child's work: ``target(reporter)`` runs in the child."""

    target: Callable[[Reporter], None]
    limits: Limits = field(default_factory=Limits)
    tag: object = None
    early: bool = False
    """The job needs nothing the zygote warms late (``preload(..., late=True)``): while the zygote still warms,
    its child is forked from the zygote's early twin (``checker.sandbox.zygote``), and ``run_jobs`` starts it
    before any job that must wait for the zygote."""
    seconds: float | None = None
    """The job's total time, fixed when its child starts (the sum of its steps' limits, as the caller plans them);
    None: twice ``limits.step_timeout`` (a load and one step). No event moves it."""

    @property
    def total(self) -> float:
        return self.seconds if self.seconds is not None else 2 * self.limits.step_timeout


@dataclass
class Outcome:
    job: Job
    events: list[Event]
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


def _virtual_size() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _data_size() -> int:
    """What RLIMIT_DATA counts of this process now (VmData, given in kB), in bytes."""
    try:
        return int(proc_status().get("VmData", "0 kB").split()[0]) * 1024
    except (ValueError, IndexError):
        return 0


def _child_main(job: Job, event_fd: int, output_fd: int, key: bytes, private_dir: str | None,
                identity: tuple[int, int] | None) -> None:
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
            which, used = (resource.RLIMIT_DATA, _data_size()) if job.limits.gpu else \
                (resource.RLIMIT_AS, _virtual_size())
            cap = used + job.limits.memory_bytes
            resource.setrlimit(which, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if job.limits.harden:
            from checker.sandbox import hardening

            active = hardening.harden_child([event_fd], private_dir=private_dir, identity=identity,
                                            hide=job.limits.hide, memory_bytes=job.limits.memory_bytes,
                                            share=job.limits.shared_files)
        reporter = Reporter(event_fd, key)
        if job.limits.harden:  # the parent says how well this child was closed in (--json, results.json, ...)
            level, why = hardening.isolation_level(active)
            reporter.send({"event": "isolation", "level": level, "why": [str(w) for w in why][:32]})
        if job.limits.harden and "torch" in sys.modules:
            from torch.optim.optimizer import register_optimizer_step_pre_hook

            register_optimizer_step_pre_hook(hardening.seal(reporter.on_step))  # no __closure__ to read
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


_CHILD_MAIN = f"{__name__}:_child_main"
"""What the zygote's child calls with its job (``ChildSpec.main``): the zygote knows nothing above it."""
# first: the fork-safe variables before torch loads; then the code folders, found while they can be read
preload(__name__, "checker.sandbox.hardening:warm")


SPAWN_SECONDS = 30.0
"""How long the zygote may take to fork a child (it is usually a few milliseconds)."""
TWIN_GRACE = 1.0
"""After the zygote's twin failed to report a child: how long kata waits to see whether the twin itself ended (then
the zygote is asked instead)."""
DONE_GRACE = 2.0
"""Seconds a child that reported ``done`` has to exit before it is killed."""
DRAIN_SECONDS = 2.0
"""After a child and its descendants are killed, how long the parent keeps reading what they wrote."""


class _TwinGone(Exception):
    """The zygote's twin ended before it reported the child it was asked for."""


class Clock:
    """When a child must be gone. ``end``: the job's fixed end, set once when the child starts; ``deadline``: the
    current step's end, never past ``end``. No event moves ``end``: a ``start`` asks for at most ``step_limit``
    from now, one that repeats the step already running changes nothing, and after ``done`` no ``start`` counts."""

    def __init__(self, now: float, total: float, step_limit: float):
        self.end = now + total
        self.step_limit = step_limit
        self.deadline = min(now + step_limit, self.end)
        self.step: str | None = None
        self.finished = False

    def start(self, step: str, timeout: float | None, now: float) -> None:
        if self.finished or step == self.step:
            return
        self.step = step
        self.deadline = min(now + min(timeout or self.step_limit, self.step_limit), self.end)

    def done(self, now: float) -> None:
        if not self.finished:
            self.finished = True
            self.deadline = now + DONE_GRACE


class _Running:
    def __init__(self, job: Job):
        self.job = job
        self.events: list[Event] = []
        self.finished = False
        self.step: str | None = None
        self.clock = Clock(time.monotonic(), job.total, job.limits.step_timeout)
        self.event_bytes = 0
        self.flooded = False
        """The child sent more than ``MAX_JOB_BYTES`` of events: it is killed, and nothing more of it is read."""
        self.timed_out_step: str | None = None
        self.output = bytearray()
        self.dropped = 0
        self.lines = LineBuffer()
        self.rejected = 0
        """Lines the parent did not accept: unsigned (something else wrote them) or malformed."""
        self.open_fds: set[int] = set()
        """The parent's read ends still open (a closed one's number may be reused by a later child)."""
        self.status: int | None = None
        """The child's wait status, once known."""
        self.exited = False
        self.started = time.monotonic()
        self.key = os.urandom(16)
        self.identity = hardening.job_identity() if job.limits.harden else None
        self.private_dir = hardening.make_private_dir(self.identity) if job.limits.harden else None
        if self.private_dir is not None:
            share_files(self.private_dir, job.limits.shared_files)
        self.pidfd: int | None = None
        self.status_fd: int | None = None
        """Zygote children: where the shepherd reports the child's pid, then its wait status."""
        self.status_buffer = b""
        self.namespace = False
        """The child runs in a PID namespace of its own; ``pid`` is then the namespace's init, and killing it
        kills everything in the namespace."""
        event_r, event_w = os.pipe()
        out_r, out_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        if isinstance(job.target, Task):
            try:
                self._spawn(job, event_r, event_w, out_r, out_w, early=job.early)
            except _TwinGone:  # the twin ended before it forked the child: the zygote forks it, on fresh pipes
                event_r, event_w = os.pipe()
                out_r, out_w = os.pipe()
                self._spawn(job, event_r, event_w, out_r, out_w, early=False)
        else:  # a trusted callable (kata's own tests): forked from this process
            pid = os.fork()
            if pid == 0:
                os.close(event_r)
                os.close(out_r)
                _child_main(job, event_w, out_w, self.key, self.private_dir, self.identity)
            os.close(event_w)
            os.close(out_w)
            self.pid = pid
        # from the child's start, not the zygote's
        self.clock = Clock(time.monotonic(), job.total, job.limits.step_timeout)
        self.event_fd = event_r
        self.output_fd = out_r
        self.open_fds = {event_r, out_r}
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pass

    def _spawn(self, job: Job, event_r: int, event_w: int, out_r: int, out_w: int, early: bool) -> None:
        """Have the zygote (or, for an early job, its twin) fork the child: it learns the job from a spec only it
        reads. ``_TwinGone`` (every descriptor here closed) when the twin ended before it reported the child."""
        status_r, status_w = os.pipe()
        spec = pickle.dumps(ChildSpec(replace(job, tag=None), self.key, self.private_dir, self.identity, _CHILD_MAIN))
        try:
            twin = zygote().spawn(spec, [event_w, out_w, status_w], new_pid_namespace=job.limits.harden, early=early)
        except ZygoteError:
            for fd in (event_r, out_r, status_r):
                os.close(fd)
            raise
        finally:
            for fd in (event_w, out_w, status_w):
                os.close(fd)
        self.status_fd = status_r
        try:
            ready = select.select([status_r] if twin is None else [status_r, twin], [], [], SPAWN_SECONDS)[0]
            line = _read_line(status_r) if status_r in ready else b""
            parts = line.split()
            if twin is not None and (len(parts) != 3 or parts[0] != b"P") \
                    and select.select([twin], [], [], TWIN_GRACE)[0]:
                # the twin ended and reported no child: the request is lost with it (or its shepherd with it)
                for fd in (event_r, out_r, status_r):
                    os.close(fd)
                self.status_fd = None
                zygote().twin_gone()
                raise _TwinGone
        finally:
            if twin is not None:
                os.close(twin)
        if len(parts) != 3 or parts[0] != b"P":
            for fd in (event_r, out_r, status_r):
                os.close(fd)
            raise ZygoteError(f"the grading process did not start a child within {SPAWN_SECONDS:g} s")
        self.pid, self.namespace = int(parts[1]), parts[2] == b"1"
        os.set_blocking(status_r, False)

    @property
    def deadline(self) -> float:
        return self.clock.deadline

    @property
    def exit_fd(self) -> int | None:
        """The descriptor that becomes readable when the child ends."""
        return self.status_fd if self.status_fd is not None else self.pidfd

    def read_status(self) -> None:
        """Zygote children: take what the shepherd reported (``S <status>``, or nothing before it died)."""
        if self.status_fd is None or self.status is not None:
            return
        while True:
            try:
                data = os.read(self.status_fd, 64)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.exited = True
                if self.status is None:  # the shepherd itself was killed: so was the child
                    self.status = signal.SIGKILL
                return
            self.status_buffer += data
            if b"\n" in self.status_buffer:
                parts = self.status_buffer.split(b"\n", 1)[0].split()
                if len(parts) == 2 and parts[0] == b"S" and parts[1].isdigit():
                    self.status = int(parts[1])
                    self.exited = True
                    return

    def close(self, selector: selectors.BaseSelector, fd: int | None = None) -> None:
        """Stop watching and close ``fd`` (default: every read end still open); only this child's own."""
        for own in [fd] if fd is not None else list(self.open_fds):
            if own in self.open_fds:
                self.open_fds.discard(own)
                selector.unregister(own)
                os.close(own)

    def on_events(self, data: bytes) -> None:
        if self.flooded:
            return
        self.event_bytes += len(data)
        if self.event_bytes > MAX_JOB_BYTES:  # the job is tampering: it is killed, and what it sent is not kept
            self.flooded = True
            self.lines = LineBuffer()
            self.reject(f"more than {MAX_JOB_BYTES >> 20} MiB of events")
            return
        for line in self.lines.feed(data):
            self.on_line(line)
        if self.lines.overlong and not self.rejected:
            self.reject(f"an event line longer than {MAX_LINE} bytes")

    def reject(self, why: str) -> None:
        self.rejected += 1
        if self.rejected == 1:  # the first one says why; the job cannot be graded
            self.events.append(Tampered((why,)))

    def on_line(self, line: bytes) -> None:
        signature, _, payload = line.partition(b" ")
        if not hmac.compare_digest(signature, mac(self.key, payload)):
            self.reject("a forged event in the result pipe")
            return
        if len(self.events) >= MAX_EVENTS:
            self.reject(f"more than {MAX_EVENTS} events")
            return
        try:
            event = parse(payload)
        except Malformed as exc:
            self.reject(f"a malformed event ({exc})")
            return
        if isinstance(event, Start) and not self.finished:
            self.step = event.step
            self.clock.start(event.step, event.timeout, time.monotonic())
        elif isinstance(event, Done):
            self.finished = True
            self.clock.done(time.monotonic())
        self.events.append(event)

    def on_output(self, data: bytes) -> None:
        room = self.job.limits.output_bytes - len(self.output)
        self.output += data[:room]
        self.dropped += max(len(data) - room, 0)

    def poll(self) -> bool:
        """Whether the child has exited (its status is kept; a zombie stays until ``reap``)."""
        if self.status_fd is not None:
            self.read_status()
        elif not self.exited:
            try:
                info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
                self.exited = True
            if info is not None:
                self.exited = True
        return self.exited

    def stop_if_due(self, now: float) -> None:
        """Kill the child when it outlived its deadline (the step it was in is noted) or sent more than it may."""
        if (now > self.deadline or self.flooded) and not self.poll():
            if not self.finished and not self.flooded:
                self.timed_out_step = self.step or "start"
            self.kill()
            self.exited = True

    def kill(self) -> None:
        if self.status_fd is not None and self.status is not None:
            return  # already gone: its pid may belong to another process by now
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def kill_tree(self, keep: set[int]) -> None:
        """The child, everything it started (whatever its session), and orphans handed to kata."""
        self.kill()
        hardening.kill_descendants([self.pid], sessions=[self.pid], keep=keep, adopted=True)

    def wait(self) -> int:
        """The child's exit code (minus the signal that ended it), once it has ended."""
        if self.status_fd is None:
            _, status = os.waitpid(self.pid, 0)
        else:
            limit = time.monotonic() + SPAWN_SECONDS
            while self.status is None and time.monotonic() < limit:
                select.select([self.status_fd], [], [], 0.5)
                self.read_status()
            os.close(self.status_fd)
            self.status_fd = None
            status = self.status if self.status is not None else signal.SIGKILL
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        return os.waitstatus_to_exitcode(status)

    def reap(self) -> Outcome:
        code = self.wait()
        hardening.remove_private_dir(self.private_dir)
        # A child that reported "done" but then died on a signal we did not send still finished its job.
        memory = b"can't allocate memory" in bytes(self.output) or any(
            "MemoryError" in getattr(e, "error", "") or "allocate memory" in getattr(e, "error", "")
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


def share_files(private_dir: str, files: Iterable[str]) -> None:
    """Copy each file into ``private_dir`` under its base name, readable by anyone (the child may run as another
    uid) and writable by none; one that cannot be copied is left out (the child's own read then says so)."""
    import shutil

    for source in files:
        copy = os.path.join(private_dir, os.path.basename(source))
        try:
            shutil.copyfile(source, copy)
            os.chmod(copy, 0o444)
        except OSError:
            try:
                os.unlink(copy)
            except OSError:
                pass


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) < 256:
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data


class _Pool:
    """The children of one ``run_jobs`` call: started, served, finished and, at the end, cleaned up."""

    def __init__(self, jobs: Iterable[Job], workers: int, on_event: Callable[[Job, dict], None] | None,
                 on_outcome: Callable[[Outcome], None] | None) -> None:
        self.pending = list(jobs)
        self.order = {id(job): i for i, job in enumerate(self.pending)}
        # early jobs first (their child can fork from the zygote's twin while the zygote still warms), else in order
        self.pending.sort(key=lambda job: not job.early)
        self.pending.reverse()
        self.outcomes: list[Outcome | None] = [None] * len(self.order)
        self.running: dict[int, _Running] = {}
        self.workers = max(workers, 1)
        self.on_event, self.on_outcome = on_event, on_outcome
        self.selector = selectors.DefaultSelector()
        self.unrelated = hardening.own_children()  # kata's own children from before: never touched
        if any(isinstance(job.target, Task) for job in self.pending):
            zygote().start()
        if zygote().alive():  # kata's own child, never an orphan to kill
            self.unrelated.add(zygote().pid)

    def dispatch(self, child: _Running, stream: str, fd: int) -> None:
        """Read what is waiting on one of ``child``'s pipes and hand it to the child's parser."""
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            child.close(self.selector, fd)
            return
        before = len(child.events)
        (child.on_events if stream == "events" else child.on_output)(data)
        if self.on_event and stream == "events":
            for event in child.events[before:]:
                self.on_event(child.job, event)

    def finish(self, pid: int, child: _Running) -> None:
        """Kill ``child``'s tree, read what it wrote before the end, reap it and hand its outcome on."""
        keep = self.unrelated | {p for p in self.running if p != pid}
        child.kill_tree(keep)
        if child.exit_fd is not None:
            self.selector.unregister(child.exit_fd)
        # what the child (and its descendants, now gone) wrote before the end
        limit = time.monotonic() + DRAIN_SECONDS
        while child.open_fds and time.monotonic() < limit:
            for key, _ in self.selector.select(timeout=0.05):
                owner, stream = key.data
                if owner is child:
                    self.dispatch(child, stream, key.fd)
        child.close(self.selector)
        del self.running[pid]
        outcome = child.reap()
        self.outcomes[self.order[id(child.job)]] = outcome
        if self.on_outcome:
            self.on_outcome(outcome)

    def launch(self) -> None:
        """Start pending jobs while a worker is free (a job that needs the zygote waits until it is ready)."""
        while self.pending and len(self.running) < self.workers:
            job = self.pending[-1]
            if self.running and not job.early and isinstance(job.target, Task) and not zygote().ready_now():
                break  # it must wait for the zygote: look again shortly, serving the children meanwhile
            self.pending.pop()
            child = _Running(job)
            self.running[child.pid] = child
            self.selector.register(child.event_fd, selectors.EVENT_READ, (child, "events"))
            self.selector.register(child.output_fd, selectors.EVENT_READ, (child, "output"))
            if child.exit_fd is not None:
                self.selector.register(child.exit_fd, selectors.EVENT_READ, (child, "exit"))

    def wait_time(self) -> float:
        """How long to wait for the children: up to the nearest deadline, less where they must be polled."""
        timeout = max(min(c.deadline for c in self.running.values()) - time.monotonic(), 0.0)
        poll_every = 0.5 if all(c.exit_fd is not None for c in self.running.values()) else 0.05
        if self.pending and len(self.running) < self.workers:  # a job waits for the zygote to be ready
            poll_every = 0.02
        return min(timeout, poll_every)

    def serve(self) -> None:
        """Read what the children wrote, then finish each one that has exited or is due to be stopped."""
        for key, _ in self.selector.select(timeout=self.wait_time()):
            child, stream = key.data
            if child.pid not in self.running:
                continue
            if stream == "exit":
                child.poll()
                continue
            self.dispatch(child, stream, key.fd)
        now = time.monotonic()
        for pid, child in list(self.running.items()):
            child.stop_if_due(now)
            if child.poll() or (not child.open_fds and child.exited):
                self.finish(pid, child)

    def abandon(self) -> None:
        """Kill, close and reap every child still running (the run ended early), then close the selector."""
        for child in list(self.running.values()):
            child.kill_tree(self.unrelated)
            child.close(self.selector)
            try:
                child.wait()
            except ChildProcessError:
                pass
            hardening.remove_private_dir(child.private_dir)
        self.selector.close()


def run_jobs(
    jobs: Iterable[Job],
    *,
    workers: int = 2,
    on_event: Callable[[Job, dict], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run every job in its own forked child, ``workers`` at a time; outcomes in the jobs' order.

    A job ends when its child exits (or outlives its step's limit, or lingers after ``done``): then
    the child and every process it started, whatever their session, are killed, what they wrote is
    read, and only then is the outcome handed on.
    """
    hardening.harden_parent()
    pool = _Pool(jobs, workers, on_event, on_outcome)
    try:
        while pool.pending or pool.running:
            pool.launch()
            pool.serve()
    finally:
        pool.abandon()
    return [o for o in pool.outcomes if o is not None]


def run_job(job: Job, *, on_event: Callable[[Job, dict], None] | None = None) -> Outcome:
    return run_jobs([job], workers=1, on_event=on_event)[0]
