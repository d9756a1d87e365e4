"""Containment for the sandbox: the kernel-side layers around each child, and the audit hook inside it.

Threat model: a student who has read kata's source submits a file that tries to forge a pass, touch a
classmate, or outlive the grader. The layers, outermost first (docs/autograding.md says what each stops):

- the parent (kata) is non-dumpable (a same-uid process cannot ptrace it or read its memory) and a
  child subreaper: whatever a job starts is re-parented to kata and killed after the job, whatever its
  session (``kill_descendants``);
- each child (``harden_child``) keeps only its own descriptors; is non-dumpable, with no-new-privs and
  rlimits (processes, file size, open files, CPU); works in a private temporary folder it owns; where
  kata runs as root, enters a new network namespace and drops to an unprivileged uid of its own
  (keeping only the right to read and search, where the interpreter lives in a folder others cannot
  read); and installs a seccomp filter refusing exec, ptrace, other processes' memory, setsid,
  namespaces and sockets other than AF_UNIX;
- right before the learner's file loads, a PEP 578 audit hook (``install_audit_hook``, irremovable)
  refuses, and reports as tampering, what no training loop needs.

Every layer degrades silently where the platform refuses it (another OS, an old kernel, no root);
``harden_child`` returns which layers are active.
"""

from __future__ import annotations

import errno
import itertools
import os
import resource
import signal
import struct
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from checker.base.paths import MUTANTS_DIR, SOLUTIONS_DIR

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_KEEPCAPS = 8
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWNET = 0x40000000
CAP_DAC_READ_SEARCH = 2

UID_BASE = 1_900_000_000
"""Children run as UID_BASE + n (n cycles over UID_SLOTS): no two running children share a uid."""
UID_SLOTS = 50_000

NPROC = 256
"""Tasks (processes and threads) a child's uid may hold: room for DataLoader workers, not a fork bomb."""
FILE_SIZE = 64 * 1024**2
OPEN_FILES = 1024
CPU_SECONDS = 900

_libc = None


def _lib():
    global _libc
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _prctl(option: int, arg: int = 0) -> bool:
    import ctypes

    try:
        lib = _lib()
        return lib.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):
        return False


# --------------------------------------------------------------------------------------------- parent


_parent_done = False


def harden_parent() -> dict[str, bool]:
    """Once per process: non-dumpable, and a child subreaper (orphans of a job come back to kata)."""
    global _parent_done
    if _parent_done or not sys.platform.startswith("linux"):
        return {}
    _parent_done = True
    return {"subreaper": _prctl(PR_SET_CHILD_SUBREAPER, 1), "non_dumpable": _prctl(PR_SET_DUMPABLE, 0)}


def _proc_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (ppid, session id, state) for every process visible in /proc."""
    table = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(fd, 512)
        except OSError:
            continue
        finally:
            os.close(fd)
        fields = stat.rsplit(b")", 1)[-1].split()
        try:
            table[int(entry)] = (int(fields[1]), int(fields[3]), fields[0].decode())
        except (IndexError, ValueError):
            continue
    return table


def own_children(table: dict[int, tuple[int, int, str]] | None = None) -> set[int]:
    me = os.getpid()
    table = _proc_table() if table is None else table
    return {pid for pid, (ppid, _, _) in table.items() if ppid == me}


def kill_descendants(roots: Iterable[int], *, sessions: Iterable[int] = (), keep: Iterable[int] = (),
                     adopted: bool = False, rounds: int = 50) -> int:
    """SIGKILL every live descendant of ``roots`` (and every process in ``sessions``), then reap the ones
    that are kata's own children; repeat until none is left. ``keep``: pids never touched (another
    running job's child, kata's own unrelated children). ``adopted``: also every child of kata's not in
    ``keep`` (orphans re-parented to kata, the subreaper). Returns how many were killed."""
    import time

    me, keep, roots, sessions = os.getpid(), set(keep), set(roots), set(sessions)
    original = set(roots)
    killed: set[int] = set()
    for attempt in range(rounds):
        table = _proc_table()
        if adopted:  # kata's own children that are neither kept nor a root: orphans handed to kata
            roots |= {pid for pid, (ppid, _, _) in table.items() if ppid == me and pid not in keep}
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        found, stack = set(), [r for r in roots if r in table]
        found.update(stack)
        while stack:
            for kid in children.get(stack.pop(), ()):
                if kid not in found:
                    found.add(kid)
                    stack.append(kid)
        found.update(pid for pid, (_, sid, _) in table.items() if sid in sessions)
        found -= keep
        found.discard(me)
        live = {pid for pid in found if table.get(pid, (0, 0, "Z"))[2] not in ("Z", "X")}
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        # reap what is ours (adopted orphans included): a zombie child of kata holds nothing, but it is
        # still a process; the roots themselves are reaped by their owner.
        for pid in found:
            if table.get(pid, (0,))[0] == me and pid not in original:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        if not live:
            break
        time.sleep(0.002 * (attempt + 1))
    return len(killed)


# --------------------------------------------------------------------------------------------- child


_uid_counter = itertools.count()


def job_identity() -> tuple[int, int] | None:
    """(uid, gid) the next child drops to, or None where kata is not root (it cannot drop)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    code_readable_by_others()  # computed here, once, not in every child
    uid = UID_BASE + (os.getpid() * 7 + next(_uid_counter)) % UID_SLOTS
    return uid, uid


def make_private_dir(identity: tuple[int, int] | None) -> str:
    """A fresh temporary folder for one child, owned by the uid it will run as (mode 0700)."""
    import tempfile

    path = tempfile.mkdtemp(prefix="kata-job-")
    if identity is not None:
        try:
            os.chown(path, *identity)
        except OSError:
            pass
    return path


def remove_private_dir(path: str | None) -> None:
    if path:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def _close_descriptors(keep: Iterable[int]) -> None:
    keep = sorted({0, 1, 2, *keep})
    low = 0
    for fd in keep:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    try:
        top = max(os.sysconf("SC_OPEN_MAX"), 1024)
    except (ValueError, OSError):
        top = 65536
    os.closerange(low, top)


def _lower(which: int, value: int) -> None:
    try:
        soft, hard = resource.getrlimit(which)
        new_hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
        resource.setrlimit(which, (min(new_hard, value), new_hard))
    except (ValueError, OSError):
        pass


def _unshare_net() -> bool:
    try:
        return _lib().unshare(CLONE_NEWNET) == 0
    except (OSError, AttributeError):
        return False


def _readable_by_others(paths: Iterable[str]) -> bool:
    """Whether an unprivileged uid could reach (search every folder above, read) each path."""
    import stat

    for path in paths:
        p = Path(path).resolve()
        for part in [p, *p.parents]:
            try:
                mode = part.stat().st_mode
            except OSError:
                return False
            need = stat.S_IXOTH if part != p or stat.S_ISDIR(mode) else stat.S_IROTH
            if not mode & need:
                return False
    return True


def _capset(effective: int, permitted: int) -> bool:
    import ctypes

    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = struct.pack("IIIIII", effective, permitted, 0, 0, 0, 0)
    try:
        return _lib().capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) == 0
    except (OSError, AttributeError):
        return False


def _code_roots() -> list[str]:
    import sysconfig

    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(str(Path(__file__).resolve().parents[1]))
    roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(roots)


_CODE_READABLE: bool | None = None


def code_readable_by_others() -> bool:
    """Computed once, in the parent: can an unprivileged uid import the interpreter's and kata's code?"""
    global _CODE_READABLE
    if _CODE_READABLE is None:
        _CODE_READABLE = _readable_by_others(_code_roots())
    return _CODE_READABLE


def _drop_privileges(identity: tuple[int, int]) -> str:
    """setgroups([]), setgid, setuid; where the code lives in a folder others cannot read, keep only
    CAP_DAC_READ_SEARCH (read and search any file, write nothing more). Returns which drop happened."""
    uid, gid = identity
    keep_read = not code_readable_by_others()
    if keep_read:
        _prctl(PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if keep_read:
        bit = 1 << CAP_DAC_READ_SEARCH
        if not _capset(bit, bit):
            return "uid (no capability kept: the interpreter may be unreadable)"
        _prctl(PR_SET_KEEPCAPS, 0)
        return "uid+read"
    return "uid"


# seccomp ------------------------------------------------------------------------------------------

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SYSCALLS = {
    # name: (x86_64, aarch64)
    "execve": (59, 221), "execveat": (322, 281), "ptrace": (101, 117),
    "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "pidfd_getfd": (438, 438),
    "setsid": (112, 157), "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40),
    "kcmp": (312, 272), "bpf": (321, 280), "userfaultfd": (323, 282), "perf_event_open": (298, 241),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
}
_SOCKET = (41, 198)
_CLONE = (56, 220)
_CLONE3 = (435, 435)
_CLONE_NAMESPACES = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


def seccomp_program(machine: str) -> bytes | None:
    """The filter: EPERM for exec, ptrace, cross-process memory, setsid, namespaces, io_uring, keys,
    sockets other than AF_UNIX; ENOSYS for clone3 (so threads and fork fall back to clone, whose flags
    can be read); EPERM for any other architecture's syscalls (x32, i386 on x86_64)."""
    if machine not in _AUDIT_ARCH:
        return None
    col = 0 if machine == "x86_64" else 1
    ld_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    prog = [
        _bpf(ld_abs, 0, 0, 4),  # arch
        _bpf(jeq, 1, 0, _AUDIT_ARCH[machine]),
        _bpf(ret, 0, 0, eperm),
        _bpf(ld_abs, 0, 0, 0),  # syscall number
    ]
    if machine == "x86_64":
        prog += [_bpf(jge, 0, 1, 0x40000000), _bpf(ret, 0, 0, eperm)]  # the x32 ABI
    for numbers in _SYSCALLS.values():
        prog += [_bpf(jeq, 0, 1, numbers[col]), _bpf(ret, 0, 0, eperm)]
    prog += [_bpf(jeq, 0, 1, _CLONE3[col]), _bpf(ret, 0, 0, enosys)]
    # socket(family, ...): AF_UNIX only
    prog += [
        _bpf(jeq, 0, 4, _SOCKET[col]),
        _bpf(ld_abs, 0, 0, 16),  # args[0], low half
        _bpf(jeq, 0, 1, 1),  # AF_UNIX
        _bpf(ret, 0, 0, _RET_ALLOW),
        _bpf(ret, 0, 0, eperm),
    ]
    # clone(flags, ...): no new namespace
    prog += [
        _bpf(jeq, 0, 4, _CLONE[col]),
        _bpf(ld_abs, 0, 0, 16),
        _bpf(jset, 0, 1, _CLONE_NAMESPACES),
        _bpf(ret, 0, 0, eperm),
        _bpf(ret, 0, 0, _RET_ALLOW),
    ]
    prog.append(_bpf(ret, 0, 0, _RET_ALLOW))
    return b"".join(prog)


def _install_seccomp() -> bool:
    import ctypes
    import platform

    program = seccomp_program(platform.machine())
    if program is None:
        return False
    count = len(program) // 8
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HxxxxxxP", count, ctypes.addressof(buf))
    try:
        lib = _lib()
        ok = lib.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.c_char_p(fprog),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):
        return False
    return ok


def harden_child(keep_fds: Iterable[int], *, private_dir: str | None = None,
                 identity: tuple[int, int] | None = None, network: bool = False) -> dict[str, object]:
    """Run in the forked child, before the job's target: every layer the platform allows.

    ``keep_fds``: descriptors besides 0, 1, 2 to keep (the event pipe). ``private_dir``: the child's own
    temporary folder (TMPDIR, HOME, the working folder). ``identity``: (uid, gid) to drop to (kata is
    root). ``network``: keep the network (no new namespace). Returns the layers that took effect.
    """
    active: dict[str, object] = {}
    if not sys.platform.startswith("linux"):
        return active
    _close_descriptors(keep_fds)
    active["descriptors"] = True
    if identity is not None:  # counted per uid: only meaningful for a uid of the child's own
        _lower(resource.RLIMIT_NPROC, NPROC)
    _lower(resource.RLIMIT_FSIZE, FILE_SIZE)
    _lower(resource.RLIMIT_NOFILE, OPEN_FILES)
    _lower(resource.RLIMIT_CPU, CPU_SECONDS)
    _lower(resource.RLIMIT_CORE, 0)
    active["rlimits"] = True
    if private_dir:
        import tempfile

        for var in ("TMPDIR", "TEMP", "TMP", "HOME"):
            os.environ[var] = private_dir
        os.environ.setdefault("USER", "kata-sandbox")
        os.environ.setdefault("LOGNAME", "kata-sandbox")
        tempfile.tempdir = private_dir
        try:
            os.chdir(private_dir)
        except OSError:
            pass
        active["private_dir"] = private_dir
    if identity is not None and os.geteuid() == 0:
        if not network:
            active["network_namespace"] = _unshare_net()
        try:
            active["user"] = _drop_privileges(identity)
        except OSError:
            active["user"] = False
    active["non_dumpable"] = _prctl(PR_SET_DUMPABLE, 0)
    active["no_new_privs"] = _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # kata gone: the child goes too
    active["seccomp"] = _install_seccomp()
    return active


# --------------------------------------------------------------------------------------------- audit hook

_FRAME_READS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "f_code", "__code__",
                          "gi_code", "cr_code", "ag_code", "f_locals", "f_globals", "f_builtins"})
_ORIGIN_EVENTS = frozenset({
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
    "ctypes.addressof", "ctypes.call_function", "ctypes.string_at", "ctypes.wstring_at",
    "ctypes.create_string_buffer", "ctypes.create_unicode_buffer", "ctypes.get_errno", "ctypes.set_errno",
    "ctypes.PyObj_FromPtr",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "sys.settrace", "sys.setprofile", "sys._current_frames", "sys._current_exceptions", "sys.addaudithook",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "pty.spawn", "os.startfile", "_posixsubprocess.fork_exec",
    "os.kill", "os.killpg", "signal.pthread_kill",
    "marshal.loads", "marshal.load",
})
_PATH_EVENTS = frozenset({
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.listdir", "os.scandir", "shutil.rmtree", "shutil.move", "shutil.copyfile",
    "shutil.copytree", "shutil.chown", "os.chdir", "os.mkfifo", "os.mknod",
})
_WRITE_PATH_EVENTS = _PATH_EVENTS - {"os.listdir", "os.scandir", "os.chdir"}
_CODE_EVENTS = frozenset({"exec", "compile", "code.__new__", "function.__new__"})
_WATCHED_EVENTS = (_ORIGIN_EVENTS | _PATH_EVENTS | _CODE_EVENTS
                   | {"open", "socket.__new__", "sys._getframe", "object.__getattr__", "object.__setattr__",
                      "object.__delattr__", "import"})
_SAFE_TRACEBACK = frozenset({
    "print_exc", "format_exc", "print_exception", "format_exception", "format_exception_only", "print_tb",
    "format_tb", "extract_tb", "extract_stack", "print_stack", "format_stack", "print_last", "__init__",
    "from_exception",
})
_SAFE_STDLIB = ("/warnings.py", "/collections/__init__.py", "/typing.py", "/enum.py", "/dataclasses.py",
                "/contextlib.py", "/functools.py", "/abc.py", "/copy.py", "/copyreg.py", "/pickle.py",
                "/threading.py", "/weakref.py", "/unittest/mock.py")
_PROC_PRIVATE = ("fd", "fdinfo", "mem", "environ", "map_files", "maps", "smaps", "pagemap", "cwd", "root",
                 "exe", "syscall", "stack", "auxv", "task", "cmdline")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Refused(PermissionError):
    """Raised by the audit hook: the file tried something no training loop needs."""


def _secret_dirs(hidden: Iterable[str | Path] = ()) -> list[str]:
    here = Path(__file__).resolve().parents[1]
    dirs = [here / "_data", SOLUTIONS_DIR, MUTANTS_DIR, *hidden]
    return [str(Path(d).resolve()) + os.sep for d in dirs]


def install_audit_hook(learner_filename: str, report: Callable[[list[str]], None],
                       private_dir: str | None = None,
                       hidden: Iterable[str | Path] = ()) -> Callable[[str, tuple], None]:
    """Install (for good: PEP 578 hooks cannot be removed) the hook that refuses what no loop needs.

    Each refusal raises ``Refused`` where the learner's code asked, and calls ``report([what])`` at once
    (the file may catch the exception; the report still says it tried). The rule is about *origin*:
    torch and kata fire these events all the time, so most refusals apply only when the nearest frame
    outside the standard library is not a library's (site-packages) or kata's own; frame reads and
    exec/compile are judged by the frame that asked. Writing outside the private folder, reading kata's
    reference and data, and opening other processes' /proc entries are refused from any origin but kata.
    ``hidden``: more folders no learner file may read (the caller's tracks' references and mutants: the
    sandbox knows no track). Returns the hook (for measurement).
    """
    import sysconfig
    import threading

    stdlib = tuple(sorted({os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}))
    site = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib")}
    site.update(os.path.realpath(p) + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    site_dirs = tuple(sorted(site))
    kata_dir = str(Path(__file__).resolve().parents[1]) + os.sep
    secrets = tuple(_secret_dirs(hidden))
    private = (os.path.realpath(private_dir) + os.sep) if private_dir else None
    allowed_writes = tuple(p for p in (private, "/dev/shm/", "/dev/null") if p)
    me = os.getpid()
    kinds: dict[str, str] = {}
    busy: set[int] = set()
    reported: set[str] = set()
    get_ident = threading.get_ident
    getframe = sys._getframe
    realpath = os.path.realpath
    # Snapshots taken now, before the file loads: the import machinery a library may use.
    path0 = set(sys.path)
    meta0 = tuple(sys.meta_path)
    hooks0 = tuple(sys.path_hooks)

    def kind(filename: str) -> str:
        k = kinds.get(filename)
        if k is None:
            if filename.startswith("<frozen "):
                k = "stdlib"
            elif filename.startswith("<") or filename == learner_filename:
                k = "learner"
            else:
                real = realpath(filename) + ""
                if real.startswith(kata_dir):
                    k = "kata"
                elif real.startswith(site_dirs):
                    k = "site"
                elif real.startswith(stdlib):
                    k = "stdlib"
                else:
                    k = "learner"
            kinds[filename] = k
        return k

    def origin(depth: int = 3):
        """(kind of the frame that fired the event, kind of the nearest frame outside the stdlib, the
        outermost stdlib frame below it: the library entry point that frame called)."""
        frame = getframe(depth)  # 0 origin, 1 rule, 2 hook, 3 the frame that fired the event
        first = entry = None
        while frame is not None:
            name = frame.f_code.co_filename
            k = kind(name)
            if first is None:
                first = k
            if k != "stdlib":
                return first, k, entry
            if name.startswith("<frozen importlib") and entry is not None and entry is not frame:
                # a library module's own top-level code, run by the import system
                if not entry.f_code.co_filename.startswith("<frozen importlib"):
                    return first, "site", entry
            entry = frame
            frame = frame.f_back
        return first or "stdlib", "none", entry

    def origin_outer():
        return origin(5)  # 0 origin, 1 origin_outer, 2 proc_refused, 3 rule, 4 hook, 5 the event's frame

    def safe_entry(entry) -> bool:
        """A standard-library function that uses frames for the caller without handing them over."""
        if entry is None:
            return False
        code = entry.f_code
        name, func = code.co_filename, code.co_name
        if name.startswith("<frozen importlib"):
            return True
        if name.endswith("/logging/__init__.py"):
            return func != "<lambda>"
        if name.endswith("/traceback.py"):
            return func in _SAFE_TRACEBACK
        return name.endswith(_SAFE_STDLIB)

    def proc_private(path: str) -> str | None:
        """'other': another process's /proc entry (beyond stat); 'self': this process's private ones."""
        parts = path.split("/")
        if len(parts) < 4 or parts[1] != "proc":
            return None
        who, what = parts[2], parts[3]
        if who.isdigit() and int(who) != os.getpid():
            return "other" if what not in ("stat", "status") else None
        if who in ("self", "thread-self") or who.isdigit():
            return "self" if what in _PROC_PRIVATE else None
        return None

    def proc_refused(path: str) -> bool:
        which = proc_private(path)
        if which is None:
            return False
        _, near, _ = origin_outer()
        return near != "kata" and (which == "other" or near != "site")

    def as_path(value) -> str | None:
        if isinstance(value, bytes):
            value = os.fsdecode(value)
        if not isinstance(value, str):
            return None
        return os.path.normpath(value if value.startswith("/") else os.path.join(os.getcwd(), value))

    def writable(path: str) -> bool:
        return path.startswith(allowed_writes) or path + os.sep == private

    def rule(event: str, args: tuple) -> str | None:
        if event == "object.__getattr__":
            if args[1] not in _FRAME_READS:
                return None
            first, near, entry = origin()
            if first == "learner" or (first == "stdlib" and near == "learner" and not safe_entry(entry)):
                return f"reads {args[1]}"
            return None
        if event == "sys._getframe":
            first, near, entry = origin()
            if first == "learner":
                return "sys._getframe"
            if first == "stdlib" and near == "learner" and not safe_entry(entry):
                return f"inspects the call stack ({entry.f_code.co_name})"
            return None
        if event in _CODE_EVENTS:
            first, near, _ = origin()
            if first == "learner":
                return {"exec": "exec()", "compile": "compile()"}.get(event, event)
            if event == "compile" and near == "learner" and len(args) > 1:
                name = args[1]
                name = os.fsdecode(name) if isinstance(name, bytes) else name if isinstance(name, str) else ""
                if kind(name) != "learner" and not _same_as_disk(name, args[0]):
                    return f"compiles code under {name}"
            return None
        if event == "open":
            path = as_path(args[0])
            if path is None:
                return None
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
            if proc_refused(path):
                return f"opens {path}"
            if path.startswith(secrets):
                _, near, _ = origin()
                return None if near == "kata" else f"reads kata's own files ({path})"
            if (not writing and path.endswith((".py", ".ipynb", ".pyc")) and kind(path) == "learner"
                    and not path.startswith(private or "\0")):
                _, near, _ = origin()
                if near == "learner":  # a classmate's file, or any other loop: not this file's to read
                    return f"reads another source file ({path})"
            if writing and not writable(path):
                if "/__pycache__/" in path:
                    raise Refused("bytecode cache")  # importlib swallows it; nothing to report
                return f"writes {path}"
            return None
        if event in _PATH_EVENTS:
            paths = [as_path(a) for a in args[:2] if isinstance(a, str | bytes)]
            for path in paths:
                if path is None:
                    continue
                if proc_refused(path):
                    return f"lists {path}"
                if event in _WRITE_PATH_EVENTS and not writable(path):
                    return f"{event.split('.', 1)[1]} {path}"
            return None
        if event == "socket.__new__":
            family = args[1] if len(args) > 1 else None
            import socket

            if family not in (socket.AF_UNIX, -1, None):
                return f"opens a network socket (family {family})"
            return None
        if event == "import":
            name = args[0] if args else ""
            if isinstance(name, str) and (name in ("solutions", "checker")
                                          or name.startswith(("solutions.", "checker."))):
                _, near, _ = origin()
                return None if near == "kata" else f"imports {name}"
            added = [p for p in sys.path if p not in path0]
            if (any(not p or p.startswith(("/tmp", "/dev/shm", "/var/tmp")) or (private and p.startswith(private[:-1]))
                    for p in added if isinstance(p, str))
                    or tuple(sys.meta_path) != meta0 or tuple(sys.path_hooks) != hooks0):
                _, near, _ = origin()
                if near == "learner":
                    return "imports from a folder it can write"
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            first, near, _ = origin()
            if near != "learner":
                return None
            target = args[0]
            if isinstance(target, type):
                if args[1] == "__slotnames__":  # copyreg caches this on a class when copying an object
                    return None
                if args[1] != "__bases__" and (first == "stdlib" or str(getattr(target, "__module__", "")).startswith(
                        "_kata_loop_")):
                    return None  # a class the file itself defines, or namedtuple/dataclass naming a new class
                return f"sets {getattr(target, '__qualname__', '?')}.{args[1]}"
            if args[1] == "__class__":
                return f"changes the class of a {type(target).__name__}"
            return None
        # _ORIGIN_EVENTS
        first, near, _ = origin()
        if near in ("site", "kata"):
            return None
        if event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            target = args[0] if args else None
            if event == "signal.pthread_kill" or target in (me, os.getpid(), 0) or _descends_from(target, os.getpid()):
                return None
            return f"signals process {target}"
        if event.startswith("marshal.") and first == "stdlib" and near == "learner":
            # importlib loading a module's bytecode: only from the folders the interpreter's code lives in
            frame = getframe(2)
            path = frame.f_locals.get("bytecode_path") if frame.f_code.co_name == "_compile_bytecode" else None
            if isinstance(path, str) and kind(path) in ("stdlib", "site", "kata"):
                return None
            return "loads marshalled code"
        return event

    def hook(event: str, args: tuple) -> None:
        if event not in _WATCHED_EVENTS:
            return
        ident = get_ident()
        if ident in busy:
            return
        busy.add(ident)
        try:
            what = rule(event, args)
        finally:
            busy.discard(ident)
        if what:
            if what not in reported:
                reported.add(what)
                try:
                    report([f"refused: {what}"])
                except Exception:  # noqa: BLE001 - the refusal stands even if the report cannot go
                    pass
            raise Refused(f"kata refuses this while grading: {what}")

    sys.addaudithook(hook)
    return hook


def _same_as_disk(filename: str, source) -> bool:
    """compile() under a library's file name is fine only when it compiles that very file (importlib)."""
    try:
        data = Path(filename).read_bytes()
    except OSError:
        return False
    if isinstance(source, str):
        return data.decode("utf-8", "replace") == source
    if isinstance(source, bytes | bytearray | memoryview):
        return data == bytes(source)
    return False


def _descends_from(pid, ancestor: int) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    for _ in range(64):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if ppid == ancestor:
            return True
        if ppid <= 1:
            return False
        pid = ppid
    return False
