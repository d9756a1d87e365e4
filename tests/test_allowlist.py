"""What a graded child may reach (issue 31): a list of what it needs, not a list of what to hide.

kata installed from its checkout (``pip install -e .``) puts the checkout on ``sys.path``; a child once read its
``.git`` (and rebuilt the reference from the objects), its test corpus and every file but ``solutions/``. Now a
child's mount namespace shows the system's folders and what it needs (the interpreter, its libraries, kata's
package, its private folder), every other entry of / being an empty tmpfs; each scratch tmpfs holds a share of
the job's memory limit; RLIMIT_NPROC caps its tasks, and a plain user's child gets a PID namespace (inside a user
namespace) of its own. tests/corpus/attacks3/sandbox_reach.py tries each escape while the file loads, and a
correct ``train_epoch`` replaces the broken one where any succeeded: through ``kata check``, as root and as a plain
user (uid 65534, by ``setpriv``), ``steps.fresh_grads`` must not pass; the same probe aimed within the bounds does
pass (the probe works). tests/corpus/attacks3/sandbox_rebuild_from_git.py is the attack as it was found.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from checker.sandbox import hardening
from checker.sandbox.jobs import Job, Limits, run_job
from tests.test_integrity import ONLY_ARGS, broken_loop
from tests.test_isolation import CORRECT_IF_LEAKED, HARMLESS, KERNEL, ROOTED, _measured
from tests.test_sandbox import kata_check

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ROOT / "tests" / "corpus" / "attacks3"
MEMORY = Limits().memory_bytes
"""The memory limit of a `kata check` job."""
CORRECT = sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py"))
CHECKOUT = [ROOT / ".git" / "HEAD", ROOT / "solutions" / "loop.py", ROOT / "pyproject.toml", *CORRECT[:2]]
"""Files of the checkout a child must not read (the first two correct loops of the corpus among them)."""


def reach_source(targets, *, shm_bytes: int, shm_limit: int, tasks: int, task_cap: int, need: int = 1) -> str:
    """The broken loop, the reach probe, and a correct train_epoch where ``need`` of its escapes succeeded."""
    block = (ATTACKS / "sandbox_reach.py").read_text()
    for key, value in {"__TARGETS__": repr([str(t) for t in targets]), "__SHM_BYTES__": str(shm_bytes),
                       "__SHM_LIMIT__": str(shm_limit), "__TASKS__": str(tasks), "__TASK_CAP__": str(task_cap),
                       "__NEED__": str(need)}.items():
        block = block.replace(key, value)
    return broken_loop() + "\n\n# ---- probe ----\n" + block + CORRECT_IF_LEAKED


ATTACK = {"targets": CHECKOUT, "shm_bytes": 2 * MEMORY, "shm_limit": MEMORY, "tasks": 2 * hardening.NPROC,
          "task_cap": hardening.NPROC}
"""Past every bound: the checkout's files, twice the memory limit into /dev/shm, twice the task cap."""
CONTROL = {"targets": [HARMLESS], "shm_bytes": 8 << 20, "shm_limit": 4 << 20, "tasks": 16, "task_cap": 8, "need": 3}
"""Within every bound: each of the three escapes must succeed for the loop to be correct."""


def _fresh_grads(data: dict) -> str:
    return {c["id"]: c["status"] for c in data["checks"]}.get("steps.fresh_grads", "missing")


@pytest.fixture(scope="module")
def runner():
    from click.testing import CliRunner

    return CliRunner()


@KERNEL
@pytest.mark.skipif(not ROOTED, reason="kata as root: the plain user's run is tested below")
@pytest.mark.parametrize("probe", ["attack", "control"])
def test_as_root_a_child_reaches_nothing_past_its_bounds(runner, tmp_path, probe):
    path = tmp_path / "reach.py"
    path.write_text(reach_source(**(ATTACK if probe == "attack" else CONTROL)))
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None, out
    assert data["isolation"] == "full", data
    if probe == "attack":
        assert code == 1 and _fresh_grads(data) != "pass", data
    else:
        assert _fresh_grads(data) == "pass", data


RUNS = "import subprocess, sys, checker, torch; subprocess.run([sys.executable, '-c', ''], check=True)"
"""What the plain user must be able to do: import kata and torch, and start the interpreter again (the zygote)."""


def _plain_user(base: Path) -> list[str] | None:
    """A command prefix running Python as uid 65534 with this kata importable (this interpreter, or, where the
    plain user cannot run it, a venv of a system Python of the same version over this one's site-packages)."""
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base)}
    candidates = [sys.executable]
    system = shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}", path="/usr/bin:/usr/local/bin")
    if system:
        venv = base / "venv"
        made = subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], capture_output=True)
        if made.returncode == 0:
            site = next((venv / "lib").glob("python*/site-packages"))
            (site / "kata_under_test.pth").write_text(
                f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
            candidates.append(str(venv / "bin" / "python"))
    for python in candidates:
        tried = subprocess.run([*drop, python, "-c", RUNS], cwd=base, env=env, capture_output=True)
        if tried.returncode == 0:
            return [*drop, python]
    return None


@pytest.fixture(scope="module")
def plain_user():
    """(command prefix, a folder uid 65534 may read and write), or a skip where kata cannot run as a plain user."""
    if not ROOTED or not shutil.which("setpriv"):
        pytest.skip("needs root (to become a plain user) and setpriv")
    base = Path(tempfile.mkdtemp(prefix="kata-plain-"))
    base.chmod(0o777)
    try:
        command = _plain_user(base)
        if command is None:
            pytest.skip("no Python here that uid 65534 can run with this kata")
        yield command, base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _check_as(plain_user, source: str) -> tuple[int, dict]:
    command, base = plain_user
    folder = Path(tempfile.mkdtemp(prefix="class-", dir=base))
    folder.chmod(0o777)
    path = folder / "reach.py"
    path.write_text(source)
    path.chmod(0o644)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base), "LANG": "C.UTF-8"}
    done = subprocess.run([*command, "-m", "checker", "check", str(path), "--json", *ONLY_ARGS], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.stdout.lstrip().startswith("{"), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("probe", ["attack", "control"])
def test_as_a_plain_user_a_child_reaches_nothing_past_its_bounds(plain_user, probe):
    code, data = _check_as(plain_user, reach_source(**(ATTACK if probe == "attack" else CONTROL)))
    assert data["isolation"] == "full", data
    if probe == "attack":
        assert code == 1 and _fresh_grads(data) != "pass", data
    else:
        assert _fresh_grads(data) == "pass", data


@KERNEL
def test_the_reference_rebuilt_from_git_is_not_a_pass(runner, tmp_path):
    """The attack as found: inflate the checkout's git objects, find the reference's blob."""
    path = tmp_path / "rebuild.py"
    path.write_text(broken_loop() + "\n\n" + (ATTACKS / "sandbox_rebuild_from_git.py").read_text())
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert data is not None, out
    assert code == 1 and data["passed"] is False and _fresh_grads(data) != "pass", data


def _viewer(memory: int):
    def view(rep):
        """Runs in a hardened child: what it finds of the checkout and of its scratch folders."""
        try:
            listed: object = sorted(os.listdir(ROOT))
        except OSError as exc:
            listed = f"refused ({exc.errno})"
        facts: dict[str, object] = {"listed": listed}
        for path in [*CHECKOUT, ROOT / "checker" / "sandbox" / "hardening.py"]:
            try:
                facts[str(path)] = len(path.read_bytes())
            except OSError as exc:
                facts[str(path)] = f"refused ({exc.errno})"
        sizes = {}
        for folder in hardening.SCRATCH:
            if os.path.isdir(folder):
                stat = os.statvfs(folder)
                sizes[folder] = stat.f_blocks * stat.f_frsize
        facts["sizes"] = sizes
        facts["written"] = _fill("/dev/shm", 2 * memory)
        rep.send({"event": "measured", "check": "view", "measured": facts})

    return view


def _fill(folder: str, total: int) -> int:
    """Write up to ``total`` bytes into ``folder`` in files of 16 MiB (RLIMIT_FSIZE caps one file); how many went."""
    written, chunk, names = 0, b"\0" * (1 << 20), []
    try:
        while written < total:
            names.append(os.path.join(folder, f"kata_fill_{os.getpid()}_{len(names)}"))
            with open(names[-1], "wb") as fh:
                for _ in range(16):
                    fh.write(chunk)
                    fh.flush()
                    written += len(chunk)
    except OSError:
        pass
    finally:
        for name in names:
            try:
                os.remove(name)
            except OSError:
                pass
    return written


@KERNEL
@pytest.mark.skipif(not ROOTED, reason="a child forked from the test process: its mount namespace is root's")
def test_a_child_sees_of_the_checkout_kata_package_alone_and_scratch_within_its_memory_limit():
    memory = 512 << 20
    outcome = run_job(Job(_viewer(memory), Limits(step_timeout=60, memory_bytes=memory)))
    assert outcome.finished, outcome.output
    facts = _measured(outcome, "view")
    interpreter = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix)}
    allowed = {"checker"} | {name for name in os.listdir(ROOT) if os.path.realpath(ROOT / name) in interpreter}
    assert "checker" in facts["listed"] and set(facts["listed"]) <= allowed, facts["listed"]
    for path in CHECKOUT:
        assert str(facts[str(path)]).startswith("refused"), (path, facts[str(path)])
    own = ROOT / "checker" / "sandbox" / "hardening.py"
    assert facts[str(own)] == len(own.read_bytes())  # kata's package, bound back read-only
    share = hardening.scratch_size(memory)
    assert facts["sizes"] and all(size <= share for size in facts["sizes"].values()), facts["sizes"]
    assert sum(facts["sizes"].values()) <= memory
    assert 0 < facts["written"] <= share


@pytest.mark.skipif(not sys.platform.startswith("linux") or hardening._landlock_abi() < 1,
                    reason="this kernel has no Landlock")
def test_where_namespaces_are_refused_landlock_grants_of_the_checkout_kata_package_alone(monkeypatch):
    monkeypatch.setattr(hardening, "_unshare", lambda flags: False)
    monkeypatch.setattr(hardening, "_user_namespace", lambda flags=0: False)
    monkeypatch.setattr(hardening, "_own_user_namespace", lambda: False)
    outcome = run_job(Job(_viewer(16 << 20), Limits(step_timeout=60, memory_bytes=64 << 20)))
    assert outcome.finished, outcome.output
    facts = _measured(outcome, "view")
    for path in CHECKOUT:
        assert str(facts[str(path)]).startswith("refused"), (path, facts[str(path)])
    own = ROOT / "checker" / "sandbox" / "hardening.py"
    assert facts[str(own)] == len(own.read_bytes())


def test_every_entry_of_the_root_but_the_system_is_closed():
    closed = hardening.closed_roots()
    system = {os.path.realpath(p) for p in (*hardening.SYSTEM, *hardening.SCRATCH)}
    for entry in os.listdir("/"):
        real = os.path.realpath("/" + entry)
        inside = real in system or any(real.startswith(s + "/") for s in system)
        assert (real in closed) != inside, entry
    assert hardening.scratch_size(4 << 30) * len(hardening.SCRATCH) <= 4 << 30
