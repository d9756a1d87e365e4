"""Isolation that holds (issue 17): what a graded child can read, write, hold and inherit.

Each leak probe in tests/corpus/attacks2/ is a broken loop (no ``optimizer.zero_grad()``) that defines a
correct ``train_epoch`` only when, while graded, it could read its target: ``/etc/shadow``, a classmate's
file, kata's solutions, another process's ``/proc/<pid>/cmdline`` or ``environ``; by ``open``,
``os.open(..., dir_fd=)``, ``mmap``, ``torch.from_file``, ``numpy.fromfile`` or a ``//`` path. None may pass
``steps.fresh_grads``; the same probe aimed at a harmless file does (so the probe itself works). Then: the
files a child writes outside its private folder are gone after grading, it holds no capability, its
environment is a whitelist, a signal handler or a hook's closure cannot reach the reporter, and a file that
rebinds ``__name__`` is read whole. Kernel layers need root or an unprivileged user namespace; where the
platform refuses both, the tests that need them are skipped with the reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from checker.base.paths import SOLUTIONS_DIR
from checker.engine.integrity import review_reasons
from checker.sandbox import hardening
from checker.sandbox.jobs import Job, Limits, run_job
from tests.test_integrity import ONLY_ARGS, broken_loop
from tests.test_sandbox import kata_check

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / "tests" / "corpus" / "attacks2"
LINUX = sys.platform.startswith("linux")
ROOTED = LINUX and os.geteuid() == 0
HARMLESS = "/etc/os-release"

CORRECT_IF_LEAKED = '''

# ---- a correct train_epoch, only where the probe read something ----
try:
    _kata_leaked = bool(_kata_probe())
except BaseException:
    _kata_leaked = False
if _kata_leaked:
    def train_epoch(model, loader, optimizer, loss_fn, *, scheduler=None, clip_norm=None, device="cpu"):
        model.train()
        total, seen = 0.0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            if clip_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            optimizer.step()
            total += loss.item() * len(y)
            seen += len(y)
        if scheduler is not None:
            scheduler.step()
        return total / seen
'''


def _namespaces_allowed() -> bool:
    """Whether this platform lets a child close its filesystem: root, or an unprivileged user namespace."""
    if not LINUX:
        return False
    if ROOTED:
        return True
    pid = os.fork()
    if pid == 0:
        os._exit(0 if hardening._user_namespace() else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0 or hardening._landlock_abi() > 0


KERNEL = pytest.mark.skipif(not _namespaces_allowed(), reason="this platform allows no mount namespace (not root, "
                            "no unprivileged user namespace) and no Landlock: the kernel layers cannot be tested")


def probe_source(name: str, target: str, **extra: str) -> str:
    block = (PROBES / f"{name}.py").read_text()
    replacements = {"__TARGET__": target, "__DIR__": os.path.dirname(target) or "/",
                    "__NAME__": os.path.basename(target), **extra}
    for key, value in replacements.items():
        block = block.replace(key, value)
    return broken_loop() + "\n\n# ---- probe ----\n" + block + CORRECT_IF_LEAKED


@pytest.fixture(scope="module")
def runner():
    from click.testing import CliRunner

    return CliRunner()


@pytest.fixture
def classroom(tmp_path):
    """A class folder: the file under test beside a classmate's, whose bytes must not change."""
    folder = tmp_path / "class"
    folder.mkdir()
    mate = folder / "classmate.py"
    mate.write_text("# a classmate's loop: private\nSECRET = 'classmate-secret'\n")
    return folder, mate


def fresh_grads(data: dict) -> str:
    return {c["id"]: c["status"] for c in data["checks"]}.get("steps.fresh_grads", "missing")


def check_probe(runner, folder: Path, source: str, name: str = "probe.py") -> dict:
    path = folder / name
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None, out  # a report, never a traceback
    assert code in (1, 2), out
    return data


TECHNIQUES = ["read_open", "read_dir_fd", "read_mmap", "read_torch_from_file", "read_numpy_fromfile",
              "read_double_slash"]


@KERNEL
@pytest.mark.parametrize("technique", TECHNIQUES)
def test_a_probe_reading_a_harmless_file_trains_correctly(runner, classroom, technique):
    """The control: aimed at a file every process may read, the probe reads it and the loop trains right."""
    if not os.path.exists(HARMLESS):
        pytest.skip(f"{HARMLESS} does not exist here")
    folder, _ = classroom
    path = folder / "control.py"
    path.write_text(probe_source(technique, HARMLESS))
    _, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert fresh_grads(data) == "pass", out


def _targets(folder: Path, mate: Path) -> dict[str, str]:
    return {
        "shadow": "/etc/shadow",
        "classmate": str(mate),
        "solutions": str(SOLUTIONS_DIR / "loop.py"),
        "proc_cmdline": f"/proc/{os.getpid()}/cmdline",
        "proc_environ": f"/proc/{os.getpid()}/environ",
    }


@KERNEL
@pytest.mark.parametrize("target", ["shadow", "classmate", "solutions", "proc_cmdline", "proc_environ"])
@pytest.mark.parametrize("technique", TECHNIQUES)
def test_no_probe_reads_what_a_child_must_not_see(runner, classroom, technique, target, monkeypatch):
    folder, mate = classroom
    before = mate.read_bytes()
    monkeypatch.setenv("KATA_TEST_SECRET", "launcher-secret")
    data = check_probe(runner, folder, probe_source(technique, _targets(folder, mate)[target]))
    assert data["passed"] is False
    assert fresh_grads(data) != "pass", data
    assert mate.read_bytes() == before


@KERNEL
def test_a_probe_graded_in_a_class_reads_no_classmate(tmp_path):
    """Through checker.engine.grading.grade, as `kata grade` runs it: every submission's folder is hidden."""
    from checker.engine.grading import Submission, grade
    from checker.setting.lab import prepared_lab
    from checker.setting.tracks import get_track

    folder = tmp_path / "submissions"
    folder.mkdir()
    mate = folder / "a_mate.py"
    mate.write_text((ROOT / "solutions" / "loop.py").read_text())
    before = mate.read_bytes()
    probes = {}
    for technique in ("read_open", "read_torch_from_file", "read_numpy_fromfile"):
        path = folder / f"b_{technique}.py"
        path.write_text(probe_source(technique, str(mate)))
        probes[str(path)] = path.read_text()
    subs = [Submission(mate.read_text(), str(mate)), *(Submission(src, name) for name, src in probes.items())]
    reports = grade(subs, prepared_lab("cpu", get_track("moons")), check_ids=["steps.fresh_grads"], workers=2)
    by_file = {r.file: r for r in reports}
    assert by_file[str(mate)].passed, by_file[str(mate)]
    for name in probes:
        statuses = {c.id: c.status.value for c in by_file[name].checks}
        assert statuses.get("steps.fresh_grads") != "pass", (name, statuses)
        assert not by_file[name].passed
    assert mate.read_bytes() == before


@KERNEL
def test_nothing_a_child_saves_outside_its_private_folder_survives(runner, classroom):
    folder, mate = classroom
    before = mate.read_bytes()
    mark = f"{os.getpid()}_{id(folder)}"
    block = (PROBES / "save_outside.py").read_text()
    for key, value in {"__OUT__": str(folder), "__MARK__": mark, "__CLASSMATE__": str(mate)}.items():
        block = block.replace(key, value)
    path = folder / "saver.py"
    path.write_text(broken_loop() + "\n\n" + block)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None and data["passed"] is False, out
    leftovers = [folder / "kata_leftover.pt", Path(f"/tmp/kata_leftover_{mark}.pt"),
                 Path(f"/var/tmp/kata_leftover_{mark}.pt"), Path(f"/dev/shm/kata_leftover_{mark}.pt")]
    assert [p for p in leftovers if p.exists()] == []
    assert mate.read_bytes() == before


@KERNEL
def test_a_probe_for_capabilities_finds_none(runner, classroom):
    folder, _ = classroom
    data = check_probe(runner, folder, probe_source("capabilities", ""))
    assert fresh_grads(data) != "pass" and data["passed"] is False


def _inside(rep):
    """Runs in a hardened child: its capabilities, environment, what it sees of /proc and of kata's data."""
    import tempfile

    facts = {"caps": hardening.capabilities(), "env": sorted(os.environ), "pid": os.getpid(),
             "tmp": tempfile.gettempdir()}
    try:
        facts["procs"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    except OSError as exc:
        facts["procs"] = f"refused ({exc.errno})"
    for name, path in (("solutions", str(SOLUTIONS_DIR / "loop.py")), ("shadow", "/etc/shadow")):
        try:
            with open(path, "rb") as fh:
                facts[name] = len(fh.read())
        except OSError as exc:
            facts[name] = f"refused ({exc.errno})"
    rep.send({"event": "measured", "check": "inside", "measured": facts})


def _measured(outcome, check: str) -> dict:
    """What the job measured under ``check`` (events as dicts, or as typed records)."""
    for event in outcome.events:
        if isinstance(event, dict):
            if event.get("check") == check:
                return event["measured"]
        elif getattr(event, "check", None) == check:
            return event.measured
    raise AssertionError(f"no {check!r} among {outcome.events}")


def _run_inside(hide=()):
    outcome = run_job(Job(_inside, Limits(step_timeout=30, hide=tuple(hide))))
    assert outcome.finished, outcome.output
    return _measured(outcome, "inside")


@pytest.mark.skipif(not LINUX, reason="the kernel layers are Linux's")
def test_the_child_environment_is_a_whitelist(monkeypatch):
    monkeypatch.setenv("KATA_TEST_SECRET", "launcher-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "launcher-secret")
    facts = _run_inside()
    allowed = hardening.ENV_KEEP | {"HOME", "TMPDIR", "TEMP", "TMP"}
    assert [v for v in facts["env"] if v not in allowed and not v.startswith("LC_")] == []
    assert "KATA_TEST_SECRET" not in facts["env"]


@KERNEL
def test_the_child_holds_no_capability_and_sees_no_other_process():
    facts = _run_inside(hide=[str(SOLUTIONS_DIR)])
    caps = facts["caps"]
    assert caps and caps["CapEff"] == 0 and caps["CapPrm"] == 0
    if ROOTED:
        assert caps["CapBnd"] == 0 and caps["CapInh"] == 0 and caps["CapAmb"] == 0
    procs = facts["procs"]
    assert isinstance(procs, str) or os.getpid() not in procs  # kata itself is not there
    assert facts["solutions"] != len((SOLUTIONS_DIR / "loop.py").read_bytes())
    assert isinstance(facts["shadow"], str) or facts["shadow"] == 0


@KERNEL
def test_a_hidden_folder_that_holds_the_interpreter_keeps_it_working(tmp_path):
    """The checked file's folder may hold kata's own checkout, or a course folder its venv: covered, with the
    interpreter, its libraries and kata's package bound back (read-only) inside it."""
    holder = os.path.dirname(os.path.realpath(sys.base_prefix))
    (tmp_path / "mate.py").write_text("SECRET = 1\n")

    def inside(rep):
        import colorsys  # noqa: F401 - a standard module no one imported before: read from the bound folder

        names = sorted(os.listdir(holder))
        try:
            (tmp_path / "mate.py").read_text()
            mate = "read"
        except OSError:
            mate = "refused"
        rep.send({"event": "measured", "check": "inside", "measured": {"names": names, "mate": mate}})

    outcome = run_job(Job(inside, Limits(step_timeout=30, hide=(holder, str(ROOT), str(tmp_path)))))
    assert outcome.finished, outcome.output
    facts = _measured(outcome, "inside")
    assert facts["mate"] == "refused"
    assert set(facts["names"]) <= set(os.listdir(holder))


@KERNEL
def test_a_shared_file_is_a_read_only_copy_in_the_private_folder_and_read_only_where_it_lies(tmp_path):
    """A course's data file (``Limits.shared_files``): the child reads its copy, by its bare name (the working
    folder is the private one) or by the full path; it cannot change the copy. The original, in a hidden folder,
    is read where it lies (a loop may name the track's data file by its path: issue 32) and cannot be changed; the
    track file beside it stays refused."""
    course = tmp_path / "course" / "tracks"
    course.mkdir(parents=True)
    original = course / "points.npz"
    original.write_bytes(b"the course's data\n" * 100)
    beside = course / "points.toml"
    beside.write_text("the track file\n")

    def inside(rep):
        import tempfile

        facts = {"cwd": os.getcwd() == tempfile.gettempdir()}
        for name, path in (("bare", "points.npz"), ("copy", os.path.join(tempfile.gettempdir(), "points.npz")),
                           ("original", str(original)), ("beside", str(beside))):
            try:
                with open(path, "rb") as fh:
                    facts[name] = fh.read().decode()
            except OSError as exc:
                facts[name] = f"refused ({exc.errno})"
        try:
            with open("points.npz", "ab") as fh:
                fh.write(b"changed")
            facts["written"] = True
        except OSError:
            facts["written"] = False
        try:
            with open(str(original), "ab") as fh:
                fh.write(b"changed")
            facts["original_written"] = True
        except OSError:
            facts["original_written"] = False
        rep.send({"event": "measured", "check": "inside", "measured": facts})

    limits = Limits(step_timeout=30, hide=(str(tmp_path / "course"),), shared_files=(str(original),))
    outcome = run_job(Job(inside, limits))
    assert outcome.finished, outcome.output
    facts = _measured(outcome, "inside")
    expected = original.read_text()
    assert facts["cwd"] is True
    assert facts["bare"] == expected and facts["copy"] == expected
    assert facts["original"] == expected and facts["beside"].startswith("refused")
    # the copy: mode 0444, even the child's own uid may not write it; the original: bound read-only
    assert facts["written"] is False and facts["original_written"] is False
    assert original.read_text() == expected


@pytest.mark.skipif(not ROOTED, reason="as root only: a child in a PID namespace of its own")
@pytest.mark.parametrize("under_init", [False, True], ids=["pid 1", "pid 2 under an init"])
def test_in_a_pid_namespace_the_child_mounts_a_proc_of_its_own(tmp_path, under_init):
    """What the zygote arranges: the child is pid 1 of a fresh PID namespace, or pid 2 under that namespace's
    init; either way it mounts a /proc of its own and sees no process of kata's."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the intermediate process
        os.close(r)
        code = 1
        try:
            if hardening._unshare(0x20000000):  # CLONE_NEWPID: its next child is pid 1
                inner = os.fork()
                if inner == 0 and under_init:  # pid 1, the namespace's init: it forks the child (pid 2)
                    child = os.fork()
                    if child:
                        os.waitpid(child, 0)
                        os._exit(0)
                if inner == 0:
                    try:
                        active = hardening.harden_child([w], private_dir=str(tmp_path), hide=[str(SOLUTIONS_DIR)],
                                                        identity=hardening.job_identity())
                        seen = sorted(p for p in os.listdir("/proc") if p.isdigit())
                        level, why = hardening.isolation_level(active)
                        os.write(w, f"{os.getpid()}|{active.get('processes')}|{','.join(seen)}|{level}".encode())
                    finally:
                        os._exit(0)
                os.waitpid(inner, 0)
                code = 0
        finally:
            os._exit(code)
    os.close(w)
    text = b""
    while chunk := os.read(r, 4096):
        text += chunk
    os.close(r)
    os.waitpid(pid, 0)
    me, processes, seen, level = text.decode().split("|")
    assert me == ("2" if under_init else "1") and processes == "pid namespace" and level == "full"
    assert seen == me  # init runs as root: hidden from the child's own uid too


@pytest.mark.skipif(not LINUX or hardening._landlock_abi() < 1, reason="this kernel has no Landlock")
def test_where_namespaces_are_refused_landlock_closes_the_filesystem(monkeypatch):
    """No mount namespace (as if unprivileged, with user namespaces off): Landlock alone keeps kata's data and
    other processes out of reach, and the child still trains (it imports, forks DataLoader workers)."""
    monkeypatch.setattr(hardening, "_unshare", lambda flags: False)
    monkeypatch.setattr(hardening, "_user_namespace", lambda: False)

    def inside(rep):
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        batches = [b[0].tolist() for b in DataLoader(TensorDataset(torch.arange(4.0)), batch_size=2, num_workers=2)]
        _inside(rep)
        rep.send({"event": "measured", "check": "batches", "measured": {"batches": batches}})

    outcome = run_job(Job(inside, Limits(step_timeout=60, hide=(str(SOLUTIONS_DIR),))))
    assert outcome.finished, outcome.output
    facts = _measured(outcome, "inside")
    batches = _measured(outcome, "batches")["batches"]
    assert sorted(x for b in batches for x in b) == [0.0, 1.0, 2.0, 3.0]
    assert str(facts["solutions"]).startswith("refused")
    assert isinstance(facts["procs"], str)  # /proc lists nothing: only the child's own entries are granted


def test_isolation_level_names_each_missing_layer():
    full = {"filesystem": "mount namespace", "processes": "hidepid", "capabilities": True, "environment": True,
            "seccomp": True}
    assert hardening.isolation_level(full) == ("full", [])
    level, why = hardening.isolation_level({**full, "filesystem": False, "processes": None})
    assert level == "reduced" and len(why) == 2 and "filesystem" in why[0] and "/proc" in why[1]
    assert hardening.isolation_level({})[0] == "reduced"
    level, why = hardening.isolation_level({**full, "visible": ["/home"]})
    assert level == "reduced" and "/home" in why[0]


@pytest.mark.skipif(not LINUX, reason="the kernel layers are Linux's")
def test_the_default_hide_list_names_every_data_folder(tmp_path, monkeypatch):
    from checker.base.paths import KATAS_DIR, MUTANTS_DIR, TRACKS_DIR
    from checker.setting.tracks import all_tracks, hidden_paths

    course = tmp_path / "course"
    (course / "tracks").mkdir(parents=True)
    monkeypatch.setenv("KATA_TRACKS", str(course / "tracks"))
    hidden = hidden_paths([tmp_path / "class"])  # a folder that does not exist is left out
    for folder in (KATAS_DIR, MUTANTS_DIR, SOLUTIONS_DIR, TRACKS_DIR, course / "tracks"):
        assert os.path.realpath(folder) in hidden
    for track in all_tracks().values():
        assert os.path.realpath(track.reference.parent) in hidden
        assert os.path.realpath(track.mutants_dir) in hidden or not track.mutants_dir.exists()
    assert str(tmp_path / "class") not in hidden


# ---------------------------------------------------------------------------------------- the audit hook


def test_a_signal_handler_cannot_walk_into_kata(runner, tmp_path):
    source = broken_loop() + "\n\n" + (PROBES / "signal_frame.py").read_text().replace("__MEASURED__", "{}")
    path = tmp_path / "signal_frame.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None and data["passed"] is False, out
    assert data["error"]["kind"] == "tampered" and "signal" in data["error"]["message"], data["error"]


def test_a_hook_in_torch_registry_has_no_closure_to_read(runner, tmp_path, forged):
    source = broken_loop() + "\n\n" + (PROBES / "closure_reporter.py").read_text().replace("__MEASURED__", forged)
    path = tmp_path / "closure.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None and data["passed"] is False, out
    assert fresh_grads(data) != "pass"


def test_kata_solutions_folder_is_neither_opened_nor_listed_by_descriptor(runner, tmp_path):
    source = broken_loop() + "\n\n" + (PROBES / "dir_fd_listing.py").read_text().replace(
        "__SOLUTIONS__", str(SOLUTIONS_DIR))
    path = tmp_path / "dirfd.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None and data["passed"] is False, out
    assert fresh_grads(data) != "pass"


@pytest.fixture(scope="module")
def forged(runner) -> str:
    """The reference's own `measured` dicts, as a forger would send them."""
    code, _, data, _ = kata_check(runner, ROOT / "solutions" / "loop.py", "--json", *ONLY_ARGS)
    assert code == 0, data
    return repr({c["id"]: c["measured"] for c in data["checks"]})


def test_a_rebound_name_makes_the_main_block_read_and_held(runner, tmp_path):
    source = broken_loop() + "\n\n" + (PROBES / "main_block.py").read_text() + CORRECT_IF_LEAKED
    notes = review_reasons(source, "main_block.py")
    assert any("__name__" in n for n in notes), notes
    path = tmp_path / "main_block.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None and data["passed"] is False, out


def test_a_main_block_that_cannot_run_is_still_skipped():
    source = "import torch\n\nif __name__ == '__main__':\n    import subprocess\n"
    assert review_reasons(source) == []
    assert review_reasons("__name__ = '__main__'\n" + source.split("\n", 1)[1])
