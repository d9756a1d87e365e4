"""The zygote: a fresh interpreter, holding nothing of any job, that forks every graded child.

A child forked from kata itself would inherit kata's memory: the reference's source, this run's draws and
the reference's answers, and in ``kata grade`` every classmate's file. Native code in a child can read its
own memory whatever Python allows, so learner children are forked from the zygote instead. The zygote is
started with fork and exec (no memory of kata's), imports torch, scikit-learn and kata's checks once, and
from then on only ever receives descriptors, never a job's content::

    kata --SCM_RIGHTS [spec memfd, event pipe, output pipe, status pipe]--> zygote
    zygote --fork--> shepherd --(new PID namespace) fork--> init (pid 1) --fork--> child

**The early twin.** Importing torch's compiler stack (``torch._dynamo``, which the first optimizer needs) is the
zygote's last and a long part of its start. Just before it, the zygote forks a twin of itself, holding everything
warmed so far and nothing else: jobs marked ``Job.early`` (work that builds no optimizer) are forked from the twin
while the zygote still imports, on the core the import leaves idle. Preloads registered with ``late=True`` are
what the zygote warms after the twin is forked; the twin serves exactly as the zygote does, and a job is never
worse off for it: without a twin it is forked from the zygote::

    zygote: [early preloads] --fork--> twin (serves early jobs at once, on every core but the first)
            [late preloads, on the first core alone] -> ready (serves every job, on every core)

The parent writes the job (``ChildSpec``: a picklable ``Task``, its limits, the job's key) into a memfd
that only the child reads, so when the zygote forks the next child its memory holds nothing of the last
one. The status pipe says ``P <pid> <namespace>`` once forked (the pid kata kills the job by: the child,
or its namespace's init) and ``S <wait status>`` when the child ends. When a namespace's init ends, the
kernel kills every process left in it: nothing the child started outlives the job.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

from checker.sandbox.hardening import PR_SET_PDEATHSIG, _prctl, _unshare, _user_namespace

READY = b"R"
TWIN_READY = b"T"
"""What the twin says on its own socket once it serves, followed by its pid (kata watches it by a pidfd)."""
SPAWN = b"F"
WARM = b"W"
"""``W`` + a JSON object ``{"early": [...], "late": [...]}``: the preloads registered after the zygote was started; it
warms the early ones, forks its twin, warms the late ones, then says ``R``."""
START_SECONDS = 300.0
"""How long the zygote may take to import torch and scikit-learn before kata gives up on it."""
CLONE_NEWPID = 0x20000000

_ENVIRONMENT = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTORCH_NVML_BASED_CUDA_CHECK",
                "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH", "PYTHONHASHSEED", "KATA_LANG",
                "TMPDIR")
"""What the zygote (and so every child) keeps of kata's environment: nothing a launcher may keep secret.
LD_LIBRARY_PATH is where a GPU machine often keeps the driver's libcuda: without it a child finds no GPU."""

_PRELOAD: list[str] = []
"""What a new zygote imports (``module``) or calls (``module:function``) once, in this order, before it forks
any child: the layers above register theirs with ``preload`` (the sandbox knows no check and no track)."""
_LATE: list[str] = []
"""What it warms after forking its twin (``preload(..., late=True)``): what only jobs not marked early need."""


def preload(*specs: str, late: bool = False) -> None:
    """Have every zygote started from now on import ``module`` (or call ``module:function``) before it forks.

    ``module:function ARGS`` (after one space, a JSON list) calls the function with those arguments: what the
    zygote cannot find itself (it runs in ``/``, with almost none of kata's environment). ``late``: warmed after
    the early twin is forked, so jobs marked ``Job.early`` never wait for it (and their children lack it)."""
    into = _LATE if late else _PRELOAD
    for spec in specs:
        if spec not in _PRELOAD and spec not in _LATE:
            into.append(spec)


class ZygoteError(RuntimeError):
    """The zygote could not start or stopped answering; the message says why."""


@dataclass(frozen=True)
class Task:
    """What a child runs, as data: ``module:function`` called with ``args`` returns ``target(reporter)``.

    Picklable, so it can travel to a child the parent did not fork; the function is looked up in the
    child, among kata's own modules.
    """

    function: str
    args: tuple = ()

    def __call__(self, reporter: Any) -> None:
        import importlib

        module, _, name = self.function.partition(":")
        target = getattr(importlib.import_module(module), name)(*self.args)
        target(reporter)


@dataclass(frozen=True)
class ChildSpec:
    """Everything one child is told, and nothing else (the job's tag stays in the parent)."""

    job: Any
    key: bytes
    private_dir: str | None
    identity: tuple[int, int] | None
    main: str
    """``module:function`` the child calls with the job, its pipes and the rest of the spec."""


# ------------------------------------------------------------------------------------------ parent side


class Zygote:
    """The parent's handle on its zygote: started once, on demand, and reused by every run."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.ready = False
        self.twin: socket.socket | None = None
        """The parent's end of the early twin's socket; None once the twin is known to be gone (or never was)."""
        self.twin_ready = False
        self.twin_pidfd: int | None = None
        """A pidfd of the twin once it serves: readable when it is gone."""
        self.errors: Any = None
        self.lock = threading.Lock()
        self.given: list[str] = []
        self.given_late: list[str] = []
        """The preloads this zygote was given: on its command line, then in its one ``W`` message."""
        self.told = False
        """Whether the ``W`` message is sent (the zygote says ``R`` only after it)."""

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the zygote if none runs; returns at once (the imports go on beside the caller's work).

        A zygote already running (started early, before the layers above registered their preloads) is sent
        the preloads registered since, so it warms them while the caller goes on."""
        with self.lock:
            if self.alive():
                self._tell_rest()
                return
            self._close()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            twin_ours, twin_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            boot = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
                    "from checker.sandbox.zygote import serve; "
                    "serve(int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]), json.loads(sys.argv[5]))")
            path = [p for p in sys.path if p]
            env = {k: v for k, v in os.environ.items() if k in _ENVIRONMENT}
            env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
                env.setdefault(var, "1")
            import tempfile

            self.errors = tempfile.TemporaryFile()  # never fills up, unlike a pipe nobody reads
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", boot, json.dumps(path), str(theirs.fileno()), json.dumps(_PRELOAD),
                 str(twin_theirs.fileno()), json.dumps(_LATE)],
                pass_fds=[theirs.fileno(), twin_theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=self.errors, cwd="/", start_new_session=True,
            )
            theirs.close()
            twin_theirs.close()
            self.sock, self.ready = ours, False
            self.twin, self.twin_ready = twin_ours, False
            self.given, self.given_late, self.told = list(_PRELOAD), list(_LATE), False

    def _tell_rest(self) -> None:
        """Send the ``W`` message once: what was registered with ``preload`` after the zygote started."""
        if self.told or self.sock is None:
            return
        rest = [spec for spec in _PRELOAD if spec not in self.given]
        late = [spec for spec in _LATE if spec not in self.given_late]
        try:
            self.sock.send(WARM + json.dumps({"early": rest, "late": late}).encode())
        except OSError:
            return  # a dead zygote: waiting for it says so
        self.given += rest
        self.given_late += late
        self.told = True

    def _close(self) -> None:
        self._drop_twin()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None
        if self.errors is not None:
            self.errors.close()
            self.errors = None
        self.ready = False

    def stop(self) -> None:
        with self.lock:
            self._close()

    def _drop_twin(self) -> None:
        if self.twin is not None:
            self.twin.close()
            self.twin = None
        if self.twin_pidfd is not None:
            os.close(self.twin_pidfd)
            self.twin_pidfd = None
        self.twin_ready = False

    def _wait_ready(self, timeout: float = START_SECONDS) -> bool:
        """Wait up to ``timeout`` seconds for the zygote's ``R``; whether it came. A zygote that died or said
        anything else is a ZygoteError; so is one that said nothing within ``START_SECONDS``."""
        import select

        assert self.sock is not None and self.process is not None
        self._tell_rest()
        if not select.select([self.sock], [], [], timeout)[0]:
            if timeout >= START_SECONDS:
                raise ZygoteError(f"the grading process did not start within {START_SECONDS:g} s")
            return False
        try:
            message = self.sock.recv(16)
        except OSError:
            message = b""
        if message != READY:
            raise ZygoteError(f"the grading process could not start:\n{self._stderr()}")
        self.ready = True
        self._drop_twin()  # the zygote serves every job now: the twin sees its socket close and ends
        return True

    def ready_now(self) -> bool:
        """Whether the zygote serves every job now (never waits; a zygote not started yet is started)."""
        self.start()
        with self.lock:
            try:
                return self.ready or self._wait_ready(timeout=0)
            except ZygoteError:
                return True  # spawning says why, as one clear error

    def _twin_serving(self) -> bool:
        """Wait for the twin's ``T`` (it comes before the zygote's ``R``); whether the twin serves. A twin that
        is gone, or a zygote already ready first, is dropped: early jobs then fork from the zygote itself."""
        import select

        if self.twin is None:
            return False
        if self.twin_ready:
            return True
        self._tell_rest()  # the twin is forked only once the zygote has the W message
        waiting = [self.twin, self.sock] if self.sock is not None else [self.twin]
        readable = select.select(waiting, [], [], START_SECONDS)[0]
        if self.twin in readable:
            try:
                message = self.twin.recv(32)
            except OSError:
                message = b""
            if message[:1] == TWIN_READY and message[1:].isdigit():
                try:
                    self.twin_pidfd = os.pidfd_open(int(message[1:]))
                except OSError:  # gone already (or no pidfds): the zygote forks every job
                    self._drop_twin()
                    return False
                self.twin_ready = True
                return True
        self._drop_twin()
        return False

    def _stderr(self) -> str:
        if self.process is None or self.errors is None:
            return ""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.errors.seek(0)
        return self.errors.read().decode("utf-8", "replace")[-4000:].strip()

    def spawn(self, spec: bytes, fds: list[int], new_pid_namespace: bool, early: bool = False) -> int | None:
        """Have the zygote fork a child reading ``spec``; ``fds``: its event, output and status write ends.
        ``early``: the job needs nothing warmed late, so its child is forked from the twin while it serves.
        Returns, when the twin was asked, a pidfd of the twin (the caller's to close): readable if the twin ends
        before it reports the child, so the caller can ask again (``twin_gone``); else None."""
        for attempt in range(2):
            self.start()
            with self.lock:
                if early and not self.ready and self._twin_serving():
                    assert self.twin is not None and self.twin_pidfd is not None
                    try:
                        self._send(self.twin, spec, fds, new_pid_namespace)
                        return os.dup(self.twin_pidfd)
                    except OSError:
                        self._drop_twin()  # the zygote itself forks it
                try:
                    if not self.ready:
                        self._wait_ready()
                    assert self.sock is not None
                    self._send(self.sock, spec, fds, new_pid_namespace)
                    return None
                except (OSError, ZygoteError) as exc:
                    self._close()
                    if attempt or isinstance(exc, ZygoteError):
                        raise ZygoteError(str(exc)) from None

    def twin_gone(self) -> None:
        """The twin ended (a caller saw its pidfd): from now on the zygote forks every job."""
        with self.lock:
            self._drop_twin()

    @staticmethod
    def _send(sock: socket.socket, spec: bytes, fds: list[int], new_pid_namespace: bool) -> None:
        """The job's spec in a fresh memfd, sent with ``fds`` over ``sock`` (the zygote's or the twin's)."""
        memfd = os.memfd_create("kata-job", os.MFD_CLOEXEC)
        try:
            view = memoryview(spec)
            while view:
                view = view[os.write(memfd, view):]
            os.lseek(memfd, 0, os.SEEK_SET)
            socket.send_fds(sock, [SPAWN + (b"1" if new_pid_namespace else b"0")], [memfd, *fds])
        finally:
            os.close(memfd)


_zygote: Zygote | None = None


def zygote() -> Zygote:
    """This process's zygote (one per process, made on first use)."""
    global _zygote
    if _zygote is None or _zygote_owner != os.getpid():
        _set(Zygote())
    assert _zygote is not None
    return _zygote


_zygote_owner = -1


def _set(z: Zygote) -> None:
    global _zygote, _zygote_owner
    _zygote, _zygote_owner = z, os.getpid()


def prestart() -> None:
    """Start this process's zygote now, so its imports overlap with the caller's own work."""
    zygote().start()


def start_early(*specs: str) -> None:
    """Start this process's zygote before the layers above are even imported (``checker.entry``): it begins with
    ``specs`` (the heavy imports), and is sent the preloads registered meanwhile when they are known
    (``prestart``, or its first job)."""
    preload(*specs)
    zygote().start()


# ------------------------------------------------------------------------------------------ zygote side


def _resolve(spec: str) -> Any:
    """``module`` imported, or ``module:function`` looked up, among kata's own modules."""
    import importlib

    module, _, name = spec.partition(":")
    found = importlib.import_module(module)
    return getattr(found, name) if name else found


def _warm(specs: list[str]) -> None:
    """What every child would otherwise pay for, as the layers above registered it (``preload``): the heavy
    imports, torch's lazy set-up, kata's modules, the built-in tracks' data."""
    for given in specs:
        spec, _, args = given.partition(" ")
        found = _resolve(spec)
        if ":" in spec:
            found(*json.loads(args)) if args else found()


def serve(fd: int, specs: list[str] = (), twin_fd: int = -1, late: list[str] = ()) -> None:
    """The zygote's main loop; never returns. ``twin_fd``: the early twin's socket (-1: no twin); ``late``:
    what is warmed after the twin is forked."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    try:
        _warm(list(specs))
        # then what kata registered after starting this zygote (one W message, sent by kata itself)
        message = sock.recv(1 << 20)
        if not message:  # kata is gone
            os._exit(0)
        if message[:1] != WARM:
            raise ZygoteError(f"expected the W message first, got {message[:16]!r}")
        rest = json.loads(message[1:])
        _warm(rest["early"])
        cores = _cores()
        if twin_fd >= 0:
            _fork_twin(sock, twin_fd, cores)
        _warm([*late, *rest["late"]])
        _pin(cores)  # every job forked from now on may use every core again
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(1)
    _serve(sock, READY)


def _cores() -> set[int]:
    """The cores this process may run on (empty where that cannot be read: nothing is then pinned)."""
    try:
        return set(os.sched_getaffinity(0))
    except OSError:
        return set()


def _pin(cores: set[int]) -> None:
    """Run this process (and what it forks from now on) on ``cores`` only, where it may; else leave it as it is."""
    if cores:
        try:
            os.sched_setaffinity(0, cores)
        except OSError:
            pass


def _fork_twin(sock: socket.socket, twin_fd: int, cores: set[int] = frozenset()) -> None:
    """Fork the early twin: it serves on ``twin_fd`` at once, holding what is warmed so far; this process goes on
    warming. A twin that cannot be forked is simply absent (kata sees its socket close).

    With more than one core in ``cores``, the zygote keeps the first to itself while it warms late (that import is
    what every job not marked early waits for) and the twin, with every child it forks, takes the others: the
    early children never slow the import down. Left to the scheduler, two early children and their DataLoader
    workers on two cores took a share of the zygote's core too, and it was ready 0.1 to 0.2 s later. The zygote
    takes every core back once warm (``serve``); an early child keeps the twin's cores to its end."""
    try:
        pid = os.fork()
    except OSError:
        os.close(twin_fd)
        return
    if len(cores) > 1:
        _pin({min(cores)} if pid else cores - {min(cores)})
    if pid == 0:
        code = 0
        try:
            sock.close()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # gone with the zygote
            _serve(socket.socket(fileno=twin_fd), TWIN_READY + str(os.getpid()).encode(), linger=True)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(twin_fd)


def _serve(sock: socket.socket, ready: bytes, linger: bool = False) -> None:
    """Say ``ready``, then fork a shepherd for every spawn request; never returns. ``linger`` (the twin): once
    dismissed (its socket closed), wait for the shepherds it forked before ending, since each one, and so its
    child, is killed when this process ends (PR_SET_PDEATHSIG): a job still running when the zygote became
    ready would otherwise be lost (seen on a GPU, where a child's CUDA start alone outlasts the zygote's
    warm-up). The zygote itself ends at once: kata is gone.

    Everything warmed so far is frozen out of the cyclic garbage collector first (``gc.freeze``): a child's
    collections then never walk the hundreds of thousands of objects torch and scikit-learn left here, which
    took a child about 0.17 s at its first full collection (and copied every page they lie on)."""
    import gc

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # shepherds are reaped by the kernel
    gc.freeze()
    sock.send(ready)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 16, 8)
        except OSError:
            message, fds = b"", []
        if not message:  # kata is gone (or, for the twin, done with it)
            if linger:
                _wait_for_shepherds()
            os._exit(0)
        if message[:1] != SPAWN or len(fds) != 4:
            for f in fds:
                os.close(f)
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                sock.close()
                _shepherd(fds, message[1:2] == b"1")
            except BaseException:
                code = 1
            os._exit(code)
        for f in fds:
            os.close(f)


def _wait_for_shepherds() -> None:
    """Block until every child of this process has ended (SIGCHLD is ignored here, so the kernel reaps them and
    wait() returns only once none is left)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _shepherd(fds: list[int], new_pid_namespace: bool) -> None:
    """Fork the child and report on it. In a new PID namespace the process forked first is the namespace's
    init (pid 1): it forks the child (pid 2, an ordinary process: it can signal itself), reports the child's
    end, and when it goes, the kernel kills whatever is left in the namespace."""
    spec_fd, event_w, out_w, status_w = fds
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    namespace = new_pid_namespace and _pid_namespace()
    pid = os.fork()
    if pid == 0:
        if not namespace:
            os.close(status_w)
            _child(spec_fd, event_w, out_w)
        _init(spec_fd, event_w, out_w, status_w)
    os.close(spec_fd)
    os.close(event_w)
    os.close(out_w)
    os.write(status_w, f"P {pid} {int(namespace)}\n".encode())
    status = _wait(pid)
    if not namespace or status != 0:  # the namespace's init reports its child itself, unless it was killed
        os.write(status_w, f"S {status}\n".encode())


def _pid_namespace() -> bool:
    """Enter a new PID namespace (its first child is its init): as root directly; as a plain user inside a user
    namespace of its own (mapping the uid to itself), where the kernel allows one, whose capabilities let the child
    mount its own /proc and a mount namespace (``hardening.harden_child``), and in which RLIMIT_NPROC counts the
    job's tasks alone."""
    if os.geteuid() == 0:
        return _unshare(CLONE_NEWPID)
    return _user_namespace(CLONE_NEWPID)


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def _init(spec_fd: int, event_w: int, out_w: int, status_w: int) -> None:
    """pid 1 of the child's namespace; never returns."""
    code = 0
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        pid = os.fork()
        if pid == 0:
            os.close(status_w)
            _child(spec_fd, event_w, out_w)
        os.close(spec_fd)
        os.close(event_w)
        os.close(out_w)
        while True:  # orphans in the namespace come to init: reap them too, until the child itself ends
            try:
                ended, status = os.waitpid(-1, 0)
            except InterruptedError:
                continue
            if ended == pid:
                break
        os.write(status_w, f"S {status}\n".encode())
    except BaseException:
        code = 1
    os._exit(code)


def _child(spec_fd: int, event_w: int, out_w: int) -> None:
    """Runs in the child; never returns."""
    try:
        chunks = []
        while chunk := os.read(spec_fd, 1 << 20):
            chunks.append(chunk)
        os.close(spec_fd)
        spec: ChildSpec = pickle.loads(b"".join(chunks))
        del chunks
    except BaseException:
        os._exit(72)
    _resolve(spec.main)(spec.job, event_w, out_w, spec.key, spec.private_dir, spec.identity)
