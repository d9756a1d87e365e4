"""Containment for the sandbox: the kernel-side layers around each child, and the audit hook inside it.

Threat model: a student who has read kata's source submits a file that tries to forge a pass, touch a
classmate, or outlive the grader. The layers, outermost first (docs/autograding.md says what each stops):

- the parent (kata) is non-dumpable (a same-uid process cannot ptrace it or read its memory) and a
  child subreaper: whatever a job starts is re-parented to kata and killed after the job, whatever its
  session (``kill_descendants``);
- each child (``harden_child``) keeps only its own descriptors; is non-dumpable, with no-new-privs and
  rlimits (processes, file size, open files, CPU); works in a private temporary folder it owns, with an
  environment cleared to a whitelist; where kata runs as root (or a user namespace can be had), enters a
  mount namespace in which kata's data folders, the class folder, /root, /home and the shadow files are
  empty (the interpreter, its libraries and kata's package bound back read-only), /tmp and /dev/shm are
  fresh, and /proc shows only its own processes; enters a new network namespace; drops every
  capability for good (bounding set included) and, as root, to an unprivileged uid of its own; where no
  namespace can be had, a Landlock ruleset closes the filesystem instead; and installs a seccomp filter
  refusing exec, ptrace, other processes' memory, setsid, namespaces and sockets other than AF_UNIX;
- right before the learner's file loads, a PEP 578 audit hook (``install_audit_hook``, irremovable)
  refuses, and reports as tampering, what no training loop needs.

Every layer degrades where the platform refuses it (another OS, an old kernel, no root); ``harden_child``
returns which layers are active and ``isolation_level`` says "full" or "reduced", and why.
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
from checker.base.proc import proc_status

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


def _tree_of(table: dict[int, tuple[int, int, str]], roots: set[int], sessions: set[int]) -> set[int]:
    """The roots found in ``table``, all their descendants, and every process of the ``sessions``."""
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
    return found


def _sigkill(pids: set[int]) -> set[int]:
    """SIGKILL each of ``pids``; the ones the signal reached."""
    killed = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def _reap_own(table: dict[int, tuple[int, int, str]], pids: set[int]) -> None:
    """Reap, without waiting, those of ``pids`` that are kata's own children (adopted orphans included).

    A zombie child of kata holds nothing, but it is still a process; the roots themselves are reaped by
    their owner (the caller leaves them out)."""
    me = os.getpid()
    for pid in pids:
        if table.get(pid, (0,))[0] == me:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


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
    quiet = 0
    for attempt in range(rounds):
        table = _proc_table()
        if adopted:  # kata's own children that are neither kept nor a root: orphans handed to kata
            roots |= {pid for pid, (ppid, _, _) in table.items() if ppid == me and pid not in keep}
        found = _tree_of(table, roots, sessions) - keep
        found.discard(me)
        live = {pid for pid in found if table.get(pid, (0, 0, "Z"))[2] not in ("Z", "X")}
        killed |= _sigkill(live)
        _reap_own(table, found - original)
        if not live:
            # /proc is listed before each stat is read: a process forked after the listing whose parent
            # then exited is in neither. Only a second quiet look, listed afresh, ends the hunt.
            quiet += 1
            if quiet >= 2:
                break
            continue
        quiet = 0
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


def warm() -> None:
    """What children need computed before they are forked (they may not read it after their covers): the
    interpreter's and kata's code folders, whether others can read them, and the entries of / to close. Call
    once in the process that forks children (kata's parent, or a zygote); ``make_private_dir`` and
    ``job_identity`` call it too."""
    _code_roots()
    code_readable_by_others()
    closed_roots()


def make_private_dir(identity: tuple[int, int] | None) -> str:
    """A fresh temporary folder for one child, owned by the uid it will run as (mode 0700)."""
    import tempfile

    _code_roots()  # computed here, once, while the parent can read them
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


_CODE_ROOTS: list[str] = []


def _code_roots() -> list[str]:
    """The interpreter's and kata's code folders (computed once, in the parent: the child may not read them)."""
    if _CODE_ROOTS:
        return _CODE_ROOTS
    import sysconfig

    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.add(str(Path(__file__).resolve().parents[1]))
    roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    _CODE_ROOTS[:] = sorted(roots)
    return _CODE_ROOTS


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
                 identity: tuple[int, int] | None = None, network: bool = False,
                 hide: Iterable[str] = (), memory_bytes: int | None = None,
                 share: Iterable[str] = ()) -> dict[str, object]:
    """Run in the forked child, before the job's target: every layer the platform allows.

    ``keep_fds``: descriptors besides 0, 1, 2 to keep (the event pipe). ``private_dir``: the child's own
    temporary folder (TMPDIR, HOME, the working folder). ``identity``: (uid, gid) to drop to (kata is
    root). ``network``: keep the network (no new namespace). ``hide``: folders and files the child must not
    see even where they lie inside what it may (kata's data, the class folder:
    ``checker.setting.tracks.hidden_paths``); everything outside the system's folders is closed anyway
    (``closed_roots``) but what it needs (``_keep_paths``). ``memory_bytes``: the job's memory limit, which the
    scratch folders share (``scratch_size``). ``share``: files the child may read where they lie, even inside
    what it must not see (``Limits.shared_files``: a course's data file, whose copy is also in the private folder);
    bound back read-only in the mount namespace, granted under Landlock, never refused by the audit hook. Returns
    the layers that took effect (``isolation_level`` sums them up).
    """
    global _HIDDEN, _PRIVATE, _SHARED
    active: dict[str, object] = {}
    _PRIVATE = private_dir  # where the parent copied Limits.shared_files, on any platform
    if not sys.platform.startswith("linux"):
        return active
    _HIDDEN = tuple(os.path.realpath(h) for h in hide)
    _SHARED = _files_of(share)
    _close_descriptors(keep_fds)
    active["descriptors"] = True
    own_users = _own_user_namespace()
    _limits(identity is not None or own_users)
    active["rlimits"] = True
    _private_folder(private_dir, active)
    root = os.geteuid() == 0 and not own_users
    # a mount namespace: as root, or in a user namespace of the child's own where the kernel allows one
    namespace = _unshare(CLONE_NEWNS) if root or own_users else _user_namespace()
    if not namespace and not root:
        active["filesystem_why"] = "no user namespace"
    if not network:
        active["network_namespace"] = _unshare(CLONE_NEWNET)
    if namespace:
        active["mount_namespace"] = "root" if root else "user namespace"
        try:
            whole = _mount_namespace(_HIDDEN, private_dir, active, scratch_size(memory_bytes))
        except OSError as exc:
            whole, active["filesystem_why"] = False, f"mounts failed ({exc})"
        active["filesystem"] = "mount namespace" if whole else False
        active["processes"] = _own_proc()
    _drop(identity if root else None, namespace, active)
    active["non_dumpable"] = _prctl(PR_SET_DUMPABLE, 0)
    active["no_new_privs"] = _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # kata gone: the child goes too
    if not active.get("filesystem") or not active.get("processes"):
        _landlock_fallback(private_dir, active)
    active["seccomp"] = _install_seccomp()
    _ACTIVE.clear()
    _ACTIVE.update(active)
    return active


def _limits(own_uid: bool) -> None:
    """The rlimits. RLIMIT_NPROC counts every task of the uid (in the user namespace it is counted in, on Linux 5.14
    and later): lowered to ``NPROC`` only where the uid is the child's own (as root) or counted in a user
    namespace of the child's own; elsewhere to ``NPROC`` above what the uid already runs."""
    _lower(resource.RLIMIT_NPROC, NPROC if own_uid else _tasks_of(os.getuid()) + NPROC)
    _lower(resource.RLIMIT_FSIZE, FILE_SIZE)
    _lower(resource.RLIMIT_NOFILE, OPEN_FILES)
    _lower(resource.RLIMIT_CPU, CPU_SECONDS)
    _lower(resource.RLIMIT_CORE, 0)


def _tasks_of(uid: int) -> int:
    """How many tasks (threads included) processes of ``uid`` hold now, as far as /proc shows."""
    count = 0
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return 0
    for entry in entries:
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _private_folder(private_dir: str | None, active: dict[str, object]) -> None:
    """The environment cleared, and the private folder the temporary one, HOME and the working folder."""
    minimal_environment(private_dir)
    active["environment"] = True
    if private_dir:
        import tempfile

        tempfile.tempdir = private_dir
        try:
            os.chdir(private_dir)
        except OSError:
            pass
        active["private_dir"] = private_dir


def _drop(identity: tuple[int, int] | None, namespace: bool, active: dict[str, object]) -> None:
    """Every capability dropped and, as root, the uid too (``identity``)."""
    if identity is not None and not namespace and not code_readable_by_others():
        # no mount namespace to bind the interpreter back: keep reading it (reduced; the report says so)
        try:
            active["user"] = _drop_privileges(identity)
        except OSError:
            active["user"] = False
        active["capabilities"] = False
        return
    try:
        active["capabilities"] = _no_capabilities(identity)
        if identity is not None:
            active["user"] = "uid"
    except OSError:
        active["capabilities"] = False


def _landlock_fallback(private_dir: str | None, active: dict[str, object]) -> None:
    """No mount namespace, or no /proc of its own (a user namespace cannot mount one): Landlock."""
    abi = _landlock(_HIDDEN, private_dir) if active["no_new_privs"] else 0
    if abi:
        if not active.get("filesystem"):
            active["filesystem"] = f"landlock (ABI {abi})"
            active["visible"] = []
        if not active.get("processes"):
            active["processes"] = "landlock"


_ACTIVE: dict[str, object] = {}


def active_layers() -> dict[str, object]:
    """What ``harden_child`` reported in this process ({} before, or where it did not run): for the event
    that tells the parent the child's ``isolation_level``."""
    return dict(_ACTIVE)

# namespaces, mounts, capabilities, Landlock, environment -----------------------------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
COVERED = ("/root", "/home")
"""Hidden from every child besides what the caller names: other users' homes (kata's own home included)."""
SCRATCH = ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")
"""Folders anyone may write: a fresh tmpfs of the child's own over each, gone with it (the private folder is
bound back): what a file writes outside its private folder does not outlive the job."""
BLANKED_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/dev", "/proc", "/sys")
"""The system's folders, which a child sees (the shadow files blanked, /proc its own); every other entry of / is
closed to it (``closed_roots``) but for what it needs (``_keep_paths``)."""
_ESSENTIAL = ("/", *SYSTEM)
SCRATCH_BYTES = 256 * 1024**2
"""What the scratch folders hold together where the job gives no memory limit."""
ENV_KEEP = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                      "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "PYTORCH_NVML_BASED_CUDA_CHECK",
                      "CUDA_VISIBLE_DEVICES", "PYTHONHASHSEED", "KATA_LANG", "USER", "LOGNAME"})
"""The only variables a child keeps (plus LC_*); HOME and the temporary-folder ones point at its private folder."""

_HIDDEN: tuple[str, ...] = ()


def hidden() -> tuple[str, ...]:
    """The paths this child was asked to hide (``harden_child(hide=...)``): the audit hook refuses them too."""
    return _HIDDEN


_PRIVATE: str | None = None
_SHARED: tuple[str, ...] = ()
"""Files this child may read where they lie (``harden_child(share=...)``), hidden folders around them or not."""


def private_folder() -> str | None:
    """This child's private folder (``harden_child(private_dir=...)``), where ``Limits.shared_files`` were copied;
    None in a process that was not hardened with one."""
    return _PRIVATE


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> bool:
    import ctypes

    def enc(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    try:
        ok = _lib().mount(ctypes.c_char_p(enc(source)), ctypes.c_char_p(enc(target)), ctypes.c_char_p(enc(fstype)),
                          ctypes.c_ulong(flags), ctypes.c_char_p(enc(data))) == 0
    except (OSError, AttributeError):
        return False
    return ok


def _unshare(flags: int) -> bool:
    try:
        return _lib().unshare(flags) == 0
    except (OSError, AttributeError):
        return False


def _write(path: str, text: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, text.encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _user_namespace(flags: int = CLONE_NEWNS) -> bool:
    """Not root: a user namespace (mapping this uid and gid to themselves) with the namespaces ``flags`` name (a
    mount namespace; the zygote's shepherd asks for a PID namespace), where the kernel allows it. Inside it the
    process holds capabilities over its own namespaces only (a child drops them: ``harden_child``)."""
    uid, gid = os.geteuid(), os.getegid()
    if not _unshare(CLONE_NEWUSER | flags):
        return False
    # a non-dumpable process (kata's children inherit it) cannot open its own /proc/self/*_map: dumpable for
    # these three writes, non-dumpable again a few lines on (harden_child)
    _prctl(PR_SET_DUMPABLE, 1)
    _write("/proc/self/setgroups", "deny")
    return _write("/proc/self/uid_map", f"{uid} {uid} 1") and _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _user_ns() -> int:
    try:
        return os.stat("/proc/self/ns/user").st_ino
    except OSError:
        return 0


_USER_NS = _user_ns()
"""Where kata (or its zygote) imported this module: a child in another user namespace was given one of its own."""
CAP_SYS_ADMIN = 21


def _own_user_namespace() -> bool:
    """Whether this child runs in a user namespace of its own, with the capabilities it gives (the zygote's
    shepherd made one for a plain user's child, with its PID namespace): its mount namespace needs no other."""
    if os.geteuid() == 0 or _user_ns() in (0, _USER_NS):
        return False
    return bool(capabilities().get("CapEff", 0) >> CAP_SYS_ADMIN & 1)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _keep_paths(private_dir: str | None) -> list[str]:
    """What a child may read besides the system's folders (the allow-list): the interpreter, its libraries,
    kata's package, the folders ``LD_LIBRARY_PATH`` names (a GPU driver's), the private folder."""
    keep = set(_code_roots())
    libraries = [p for p in sys.path if isinstance(p, str) and p.rstrip("/").endswith(("-packages", "lib-dynload"))]
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *libraries, *_LIBRARY_PATH):
        if p and os.path.isabs(p) and os.path.isdir(p):
            keep.add(p)
    keep = {os.path.realpath(p) for p in keep}
    if private_dir:
        keep.add(os.path.realpath(private_dir))
    return sorted(keep)


_LIBRARY_PATH = tuple(p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p)
"""Read where this module is imported (kata, its zygote): the child's environment is cleared before it mounts."""
_CLOSED: list[str] = []


def closed_roots() -> list[str]:
    """Every entry of / that is not the system's (``SYSTEM``, the scratch folders): each is closed in a child's
    mount namespace (an empty tmpfs, or /dev/null over a file), with what ``_keep_paths`` names bound back. So
    whatever lies outside the system (a checkout of kata with its .git, tests and solutions, /work, /opt, /srv,
    /mnt, /var, /run) is out of sight unless the child needs it. Listed once, in the process that forks children."""
    if _CLOSED:
        return _CLOSED
    system = {os.path.realpath(p) for p in (*SYSTEM, *SCRATCH)}
    try:
        entries = sorted(os.listdir("/"))
    except OSError:
        return _CLOSED
    for entry in entries:
        real = os.path.realpath("/" + entry)
        if real != "/" and real not in system and not any(_within(real, s) for s in system):
            _CLOSED.append(real)
    return _CLOSED


def scratch_size(memory_bytes: int | None) -> int:
    """Bytes each scratch tmpfs may hold: a share of the job's memory limit, so all of them together hold no more
    than the limit (tmpfs pages are no address space: RLIMIT_AS does not count them)."""
    total = memory_bytes if memory_bytes and memory_bytes > 0 else SCRATCH_BYTES
    return max(total // len(SCRATCH), 1 << 20)


def _plan_covers(hide: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """(folders to cover, files to blank, paths that cannot be covered: the system itself)."""
    covers, files, skipped = [], [], []
    for raw in dict.fromkeys([*COVERED, *closed_roots(), *hide]):
        path = os.path.realpath(raw)
        if not os.path.lexists(path):
            continue
        if any(_within(e, path) for e in _ESSENTIAL) or path in _ESSENTIAL:
            skipped.append(path)  # the system itself: never covered
        elif os.path.isdir(path):
            covers.append(path)
        else:
            files.append(path)
    return sorted(set(covers)), files, skipped


def _open_anchors(keep: list[str], covers: Iterable[str]) -> dict[str, int]:
    """Descriptors to what must stay, opened before anything above them is covered."""
    anchors: dict[str, int] = {}
    covers = list(covers)
    for k in keep:
        if any(_within(k, c) for c in covers):
            try:  # a folder, or a shared file (``_SHARED``)
                anchors[k] = os.open(k, os.O_PATH | (0 if k in _SHARED else os.O_DIRECTORY))
            except OSError:
                pass
    return anchors


def _mount_point(path: str) -> None:
    try:
        os.makedirs(path, mode=0o755, exist_ok=True)
    except OSError:
        pass


def _bind_back(path: str, fd: int, writable: bool) -> None:
    if path in _SHARED:  # a file's mount point is a file
        _mount_point(os.path.dirname(path))
        try:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o444))
        except OSError:
            pass
    else:
        _mount_point(path)
    if _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC) and not writable:
        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _needless(cover: str, laid: list[str], anchors: dict[str, int]) -> bool:
    """Under a cover already laid, and nothing bound back around it: not there at all."""
    return any(_within(cover, c) for c in laid) and not any(_within(k, cover) or _within(cover, k) for k in anchors)


def _lay(covers: list[str], scratch: list[str], anchors: dict[str, int], private_dir: str | None,
         scratch_bytes: int) -> tuple[list[str], list[str]]:
    """Covers, scratch mounts and the paths bound back, shallowest first: a kept path is bound back over the covers
    above it (and over a cover of its very own path), and a hidden folder inside a kept one, deeper, is laid over
    the kept one. Returns (covers laid, covers that failed)."""
    private = os.path.realpath(private_dir) if private_dir else None
    steps = sorted([(c.count("/"), 0, c) for c in [*covers, *scratch]] + [(k.count("/"), 1, k) for k in anchors])
    laid: list[str] = []
    failed: list[str] = []
    for _, is_anchor, path in steps:
        if is_anchor:
            if any(_within(path, c) for c in laid):
                _bind_back(path, anchors[path], writable=path == private)
            continue
        if path not in scratch and _needless(path, laid, anchors):
            continue
        if any(_within(path, c) for c in laid):
            _mount_point(path)  # its mount point, inside a cover laid before (still writable)
        options = f"size={scratch_bytes},mode=1777" if path in scratch else "size=64k,mode=755"
        if _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options):
            laid.append(path)
        elif path not in scratch:
            failed.append(path)
    return laid, failed


def _blank(files: Iterable[str]) -> list[str]:
    """/dev/null (read-only) over each hidden file and the shadow files; returns the hidden ones left visible."""
    visible = []
    for path in [*files, *(f for f in BLANKED_FILES if os.path.exists(f))]:
        if _mount("/dev/null", path, None, MS_BIND):
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif path not in BLANKED_FILES or os.geteuid() == 0:
            visible.append(path)
    return visible


def _mount_namespace(hide: Iterable[str], private_dir: str | None, report: dict[str, object],
                     scratch_bytes: int = 0) -> bool:
    """In a fresh mount namespace (entered by the caller), a view of the system's folders and of what the child
    needs, nothing else: an empty read-only tmpfs over every other entry of / (``closed_roots``), /root, /home and
    each hidden folder, with the interpreter, its libraries, kata's package and the private folder bound back
    (read-only but the last); a fresh tmpfs of ``scratch_bytes`` (``scratch_size``) over each scratch folder;
    /dev/null over the hidden files and the shadow files. Returns whether every hidden path is hidden;
    ``report`` gets what was left visible."""
    if not _mount(None, "/", None, MS_REC | MS_PRIVATE):
        report["mounts"] = "could not make / private"
        return False
    covers, files, skipped = _plan_covers(hide)
    scratch = sorted({os.path.realpath(p) for p in SCRATCH if os.path.isdir(p)})
    covers = [c for c in covers if c not in scratch]
    anchors = _open_anchors([*_keep_paths(private_dir), *_SHARED], [*covers, *scratch])
    try:
        laid, failed = _lay(covers, scratch, anchors, private_dir, scratch_bytes or scratch_size(None))
        for cover in reversed(laid):  # read-only once every mount point inside is made
            if cover not in scratch:
                _mount(None, cover, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        skipped += failed + _blank(f for f in files if not _needless(f, laid, anchors))
    finally:
        for fd in anchors.values():
            os.close(fd)
    if skipped:
        report["visible"] = skipped
    return not skipped


def _pid_depth() -> int:
    """How many PID namespaces deep this process is (the fields of NSpid in /proc/self/status)."""
    return len(proc_status().get("NSpid", "").split())


_PID_DEPTH = _pid_depth()
"""Where kata (or its zygote) imported this module: a child deeper than that has a PID namespace of its own."""


def _own_proc() -> str | None:
    """A /proc that shows this child's processes only: a fresh one where the child is in a PID namespace of its
    own (pid 1, or the child of that namespace's init), else one mounted with hidepid=invisible (processes the
    child cannot trace are not there)."""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    own = os.getpid() == 1 or _pid_depth() > _PID_DEPTH
    if own and (_mount("proc", "/proc", "proc", flags, "hidepid=invisible") or _mount("proc", "/proc", "proc", flags)):
        return "pid namespace"
    if _mount("proc", "/proc", "proc", flags, "hidepid=invisible"):
        return "hidepid"
    return None


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 63


def _drop_bounding() -> bool:
    ok = True
    for cap in range(_last_cap() + 1):
        ok = _prctl(PR_CAPBSET_DROP, cap) and ok
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    return ok


def capabilities() -> dict[str, int]:
    """CapInh/CapPrm/CapEff/CapBnd/CapAmb of this process, from /proc/self/status."""
    caps = {}
    for name, value in proc_status().items():
        if name.startswith("Cap"):
            try:
                caps[name] = int(value, 16)
            except ValueError:
                break
    return caps


def _no_capabilities(identity: tuple[int, int] | None) -> bool:
    """Drop every capability for good: the bounding set, ambient and inheritable ones, then the uid (as root)
    and whatever is left. Verified in /proc/self/status."""
    held = capabilities().get("CapPrm", 1)
    _drop_bounding()
    if identity is not None and os.geteuid() == 0:
        uid, gid = identity
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    _capset(0, 0)
    caps = capabilities()
    # a process that held nothing (not root, no user namespace) cannot clear its bounding set, and needs not:
    # no-new-privs and seccomp (no exec) keep it from ever gaining what the set still bounds
    sets = ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb") if held else ("CapEff", "CapPrm", "CapInh", "CapAmb")
    return bool(caps) and not any(caps.get(k, 1) for k in sets)


def minimal_environment(private_dir: str | None) -> None:
    """Clear the environment to ``ENV_KEEP`` and LC_*; HOME and the temporary-folder variables are the private
    folder. Nothing the launcher held (tokens, paths, the grader's own settings) reaches the file."""
    for name in list(os.environ):
        if name not in ENV_KEEP and not name.startswith("LC_"):
            del os.environ[name]
    if private_dir:
        for var in ("TMPDIR", "TEMP", "TMP", "HOME"):
            os.environ[var] = private_dir
    os.environ.setdefault("USER", "kata-sandbox")
    os.environ.setdefault("LOGNAME", "kata-sandbox")


# Landlock ------------------------------------------------------------------------------------------

_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_TRUNCATE, LL_IOCTL_DEV = 1 << 14, 1 << 15
_LL_FILE = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV


def _landlock_abi() -> int:
    import ctypes
    import platform

    numbers = _LANDLOCK.get(platform.machine())
    if numbers is None:
        return 0
    try:
        abi = _lib().syscall(ctypes.c_long(numbers[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(abi, 0)


def _landlock_handled(abi: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= 1 << 13  # REFER
    if abi >= 3:
        rights |= LL_TRUNCATE
    if abi >= 5:
        rights |= LL_IOCTL_DEV
    return rights


def _landlock_grants(hide: Iterable[str], private_dir: str | None) -> list[tuple[str, bool]]:
    """(path, writable): what a child may reach under Landlock. Read: the interpreter, its libraries, kata's
    package (its data folder left out), /usr, /lib*, /etc, /sys, the few devices Python and torch open, this
    process's own /proc entries and /proc's non-process files. Read-write: the private folder, /dev/shm."""
    hidden_paths = [os.path.realpath(h) for h in hide]
    grants: list[tuple[str, bool]] = []

    def grant(path: str, depth: int = 0) -> None:
        real = os.path.realpath(path)
        if not os.path.exists(real) or any(_within(real, h) for h in hidden_paths):
            return
        if depth < 4 and os.path.isdir(real) and any(_within(h, real) for h in hidden_paths):
            try:
                entries = os.listdir(real)
            except OSError:
                return
            for entry in entries:  # around the hidden folder beneath it
                grant(os.path.join(real, entry), depth + 1)
            return
        grants.append((real, False))

    for path in [*_keep_paths(None), "/usr", "/lib", "/lib32", "/lib64", "/bin", "/etc", "/sys", "/dev/null",
                 "/dev/zero", "/dev/urandom", "/dev/random"]:
        grant(path)
    try:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() and entry not in ("self", "thread-self"):
                grants.append((f"/proc/{entry}", False))
    except OSError:
        pass
    grants.append((f"/proc/{os.getpid()}", False))
    for path in [private_dir, "/dev/shm"]:
        if path and os.path.isdir(path):
            grants.append((os.path.realpath(path), True))
    import glob

    grants += [(p, True) for p in glob.glob("/dev/nvidia*")]
    return grants + _shared_grants()


def _shared_grants() -> list[tuple[str, bool]]:
    """The shared files (``_SHARED``), read where they lie, the hidden folder around them or not."""
    return [(f, False) for f in _SHARED]


def _files_of(paths: Iterable[str]) -> tuple[str, ...]:
    """The regular files among ``paths``, real."""
    return tuple(os.path.realpath(f) for f in paths if os.path.isfile(f))


def _landlock(hide: Iterable[str], private_dir: str | None) -> int:
    """Restrict this process (and what it forks) to ``_landlock_grants``; returns the ABI used, 0 if refused.
    Needs no_new_privs (set by the caller)."""
    import ctypes
    import platform

    abi = _landlock_abi()
    if abi < 1:
        return 0
    create, add_rule, restrict = _LANDLOCK[platform.machine()]
    handled = _landlock_handled(abi)
    attr = struct.pack("=QQQ", handled, 0, 0x2 if abi >= 6 else 0)  # scoped: signals stay inside (ABI 6)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    buf = ctypes.create_string_buffer(attr, 24)
    lib = _lib()
    ruleset = lib.syscall(ctypes.c_long(create), buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    try:
        for path, writable in _landlock_grants(hide, private_dir):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = os.path.isdir(path)
                rights = handled if writable else (LL_READ_FILE | LL_READ_DIR | LL_EXECUTE)
                if not is_dir:
                    rights &= _LL_FILE
                rights &= handled
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                lib.syscall(ctypes.c_long(add_rule), ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0))
            finally:
                os.close(fd)
        if lib.syscall(ctypes.c_long(restrict), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return 0
    finally:
        os.close(ruleset)
    return abi


LAYERS = ("filesystem", "processes", "capabilities", "environment", "seccomp")
"""What ``isolation_level`` requires for "full"."""


def isolation_level(active: dict[str, object]) -> tuple[str, list[str]]:
    """("full", []) when every kernel layer ``harden_child`` reported took effect, else ("reduced", [why, ...])
    in plain English (for `--json`, results.json and the Gradescope output)."""
    why = []
    if not active:
        return "reduced", ["no kernel isolation on this platform (not Linux, or hardening off)"]
    if not active.get("filesystem"):
        why.append("the filesystem is not closed: " + str(active.get("filesystem_why")
                                                        or "no mount namespace (not root, no user namespace) "
                                                           "and no Landlock"))
    elif active.get("visible"):
        why.append(f"left visible: {', '.join(map(str, active['visible']))}")
    if not active.get("processes"):
        why.append("other processes are visible in /proc")
    if not active.get("capabilities"):
        why.append("the child keeps capabilities")
    if not active.get("environment"):
        why.append("the launcher's environment is inherited")
    if not active.get("seccomp"):
        why.append("no seccomp filter")
    return ("reduced", why) if why else ("full", [])


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


def _secret_dirs(given: Iterable[str] | None = None) -> list[str]:
    """kata's own data (always) and what the caller hides (``harden_child(hide=...)`` by default). No track
    is looked up here: the child cannot read the track files, and must not need to."""
    here = Path(__file__).resolve().parents[1]
    dirs = [here / "_data"]
    dirs += [SOLUTIONS_DIR, MUTANTS_DIR]
    dirs += list(_HIDDEN if given is None else given)
    return [os.path.realpath(d).rstrip(os.sep) + os.sep for d in dirs]


def seal(fn: Callable) -> Callable:
    """``fn`` behind a callable that hides it: a C wrapper (functools' uncached lru_cache) whose target is no
    attribute, so neither ``__closure__``, ``__wrapped__``, ``__globals__`` nor ``__self__`` lead from it to what
    ``fn`` holds. No audit event guards ``__closure__`` or ``cell_contents`` (CPython 3.11-3.13), so a kata
    callable that a loop can reach (torch's global hook registries) is handed over sealed."""
    import functools

    sealed = functools.lru_cache(maxsize=0)(fn)
    for name in ("__wrapped__", "__dict__"):
        try:
            delattr(sealed, name)
        except (AttributeError, TypeError):
            pass
    try:
        sealed.__dict__.clear()
    except (AttributeError, TypeError):
        pass
    return sealed


_SIGNAL_SETTERS = frozenset({"signal", "setitimer", "alarm", "set_wakeup_fd", "siginterrupt"})


def _guard_signals(judge: Callable[[str], str | None]) -> None:
    """A signal handler receives the interrupted frame, and ``f_back``/``f_locals`` fire no audit event (nor
    does registering a handler): a file that could register one would walk up into kata's frames. So every
    function of ``_signal`` reachable from a module is replaced by a sealed wrapper that asks ``judge(name)``
    (the audit hook's origin rule) first; ``_signal`` itself leaves ``sys.modules`` (importing it again is
    refused by the hook); builtins' ``__self__`` no longer leads to it."""
    import types

    raw = sys.modules.get("_signal")
    if raw is None:
        return
    originals = {id(v): (k, v) for k, v in vars(raw).items() if callable(v) and not isinstance(v, type)}

    def wrap(name: str, original: Callable) -> Callable:
        def call(*args, **kwargs):
            if name in _SIGNAL_SETTERS:
                what = judge(name)
                if what:
                    raise Refused(f"kata refuses this while grading: {what}")
            return original(*args, **kwargs)

        sealed = seal(call)
        try:
            sealed.__name__ = sealed.__qualname__ = name
            sealed.__module__ = "signal"
        except (AttributeError, TypeError):
            pass
        return sealed

    wrappers = {key: wrap(name, fn) for key, (name, fn) in originals.items()}
    proxy = types.ModuleType("_signal")
    for name, value in vars(raw).items():
        if not name.startswith("__"):
            setattr(proxy, name, wrappers.get(id(value), value))
    # `from signal import setitimer` copies a builtin under its own name (or `_signal` itself): looked up by
    # name in every module, which is cheap (scanning every value of every module is not: ~90 ms with torch)
    names = [(name, fn, wrappers[key]) for key, (name, fn) in originals.items()]
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict) or module is raw:
            continue
        if namespace.get("_signal") is raw:
            namespace["_signal"] = proxy
        for name, fn, wrapper in names:
            if namespace.get(name) is fn:
                namespace[name] = wrapper
    signal_module = sys.modules.get("signal")
    if signal_module is not None:  # signal.signal is Python code: its __wrapped__ is the raw builtin
        for name in ("signal", "getsignal", "pthread_sigmask", "sigpending", "sigwait", "valid_signals"):
            fn = getattr(signal_module, name, None)
            if fn is not None and getattr(fn, "__wrapped__", None) is not None:
                try:
                    del fn.__wrapped__
                except AttributeError:
                    pass
    sys.modules.pop("_signal", None)


def install_audit_hook(learner_filename: str, report: Callable[[list[str]], None],
                       private_dir: str | None = None,
                       secret_dirs: Iterable[str] | None = None) -> Callable[[str, tuple], None]:
    """Install (for good: PEP 578 hooks cannot be removed) the hook that refuses what no loop needs.

    Each refusal raises ``Refused`` where the learner's code asked, and calls ``report([what])`` at once
    (the file may catch the exception; the report still says it tried). The rule is about *origin*:
    torch and kata fire these events all the time, so most refusals apply only when the nearest frame
    outside the standard library is not a library's (site-packages) or kata's own; frame reads and
    exec/compile are judged by the frame that asked. Writing outside the private folder, reading kata's
    reference and data, and opening other processes' /proc entries are refused from any origin but kata.
    ``secret_dirs``: what the file may not read (default: what ``harden_child`` was asked to hide), beside
    kata's own data. Paths are judged once real: a descriptor (``os.listdir(fd)``) by what it names, a relative
    name by the working folder and by every folder the process holds open (``dir_fd=``), ``//`` collapsed.
    Signal handlers may not be registered by the file (``_guard_signals``). Returns the hook (for measurement).
    """
    import sysconfig
    import threading

    stdlib = tuple(sorted({os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}))
    site = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib")}
    site.update(os.path.realpath(p) + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    site_dirs = tuple(sorted(site))
    kata_dir = str(Path(__file__).resolve().parents[1]) + os.sep
    secrets = tuple(_secret_dirs(secret_dirs))
    shared = frozenset(_SHARED)  # what harden_child was told the file may read where it lies
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

    readlink = os.readlink

    normpath = os.path.normpath

    def real(path: str) -> str:
        path = normpath("/" + path.lstrip("/"))  # "//proc/1" is "/proc/1"
        # /proc's links (self, fd/N) are judged as named (proc_private); any other link, by where it leads
        return path if path == "/proc" or path.startswith("/proc/") else realpath(path)

    def open_folders() -> list[str]:
        """Every folder this process holds a descriptor to: where a ``dir_fd=`` may point."""
        folders = []
        try:
            fds = os.listdir("/proc/self/fd")
        except OSError:
            return folders
        for fd in fds:
            try:
                target = readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/") and os.path.isdir(target):
                folders.append(target)
        return folders

    def as_paths(value) -> list[str]:
        """Where ``value`` may lead: its real path; a descriptor, what it names; a relative name, joined to
        the working folder and to every open folder (the event does not say which ``dir_fd`` was given)."""
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                target = readlink(f"/proc/self/fd/{value}")
            except OSError:
                return []
            return [real(target)] if target.startswith("/") else []
        if isinstance(value, bytes):
            value = os.fsdecode(value)
        if not isinstance(value, str):
            return []
        if value.startswith("/"):
            return [real(value)]
        return [real(os.path.join(base, value)) for base in dict.fromkeys([os.getcwd(), *open_folders()])]

    def as_path(value) -> str | None:
        paths = as_paths(value)
        return paths[0] if paths else None

    def secret(path: str) -> bool:
        return (path + os.sep).startswith(secrets) and path not in shared

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
            paths = as_paths(args[0])
            if not paths:
                return None
            path = paths[0]
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
            for candidate in paths:
                if proc_refused(candidate):
                    return f"opens {candidate}"
                if secret(candidate):
                    _, near, _ = origin()
                    if near != "kata":
                        return f"reads what grading hides: kata's data or the class folder ({candidate})"
                    return None
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
            # a descriptor only as the first argument (os.listdir(fd)); a second int is a mode
            for i, arg in enumerate(args[:2]):
                if not (isinstance(arg, str | bytes) or (i == 0 and isinstance(arg, int))):
                    continue
                paths = as_paths(arg)
                for path in paths:
                    if proc_refused(path):
                        return f"lists {path}"
                    if event in ("os.listdir", "os.scandir", "os.chdir") and secret(path):
                        _, near, _ = origin()
                        if near != "kata":
                            return f"lists what grading hides: kata's data or the class folder ({path})"
                # writes: judged where they land by the working folder (a dir_fd write meets the kernel's covers)
                if paths and event in _WRITE_PATH_EVENTS and not writable(paths[0]):
                    return f"{event.split('.', 1)[1]} {paths[0]}"
            return None
        if event == "socket.__new__":
            family = args[1] if len(args) > 1 else None
            import socket

            if family not in (socket.AF_UNIX, -1, None):
                return f"opens a network socket (family {family})"
            return None
        if event == "import":
            name = args[0] if args else ""
            if isinstance(name, str) and (name in ("solutions", "checker", "_signal")
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

    def judge_signal(name: str) -> str | None:
        _, near, _ = origin(3)  # 0 origin, 1 judge_signal, 2 the wrapper, 3 its caller
        if near == "learner":
            what = f"registers a signal handler or timer (signal.{name})"
            if what not in reported:
                reported.add(what)
                try:
                    report([f"refused: {what}"])
                except Exception:  # noqa: BLE001 - the refusal stands even if the report cannot go
                    pass
            return what
        return None

    _guard_signals(judge_signal)
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
