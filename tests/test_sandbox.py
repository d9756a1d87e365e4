"""Bad inputs through `kata check`: the right exit code, a clear message, and nothing left running.

Exit codes: 2 when the file cannot be graded, 1 when a check fails (or errs, or times out), never 0.
Most cases run through click's CliRunner (the learner's code still runs in forked children, never
in this process); one runs `kata check` as a real subprocess to cover the environment variable
and a fresh process tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "solutions" / "loop.py").read_text()
TIMEOUT = 2  # seconds per check (and per import) in the hanging cases
# steps.per_batch runs train_epoch, data.lesson does not
STEP_CHECKS = ["--only", "data.lesson", "--only", "steps.per_batch"]


def at_import(code: str) -> str:
    """The reference with ``code`` run at module level, right after the imports."""
    return REFERENCE.replace("\n\ndef seed_everything", f"\n{code}\n\n\ndef seed_everything", 1)


def in_train_epoch(code: str) -> str:
    """The reference with ``code`` run at the top of train_epoch."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    source = REFERENCE.replace("    model.train()\n", "    model.train()\n" + body, 1)
    assert source != REFERENCE
    return source


def spawn_and_hang(marker: str) -> str:
    """Code that never returns. (A file may not start processes while graded: the audit hook refuses
    it, as tampering; tests/test_integrity.py covers what the runner does with a job's processes.)"""
    return f"marker = '{marker}'\nwhile True:\n    pass"


def own_children() -> set[int]:
    """Pids of live processes whose parent is this process (zombies count: they were not reaped), but for
    the zygote, which lives as long as this process by design."""
    from checker.sandbox.zygote import zygote

    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                found.add(int(entry))
    return found - {zygote().pid}


def processes_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                pids.append(int(entry))
    return pids


def kata_check(runner, path: Path | str, *args: str):
    """Run `kata check PATH ARGS` in-process; return (exit code, output, parsed JSON or None, seconds)."""
    from checker.cli import main

    before = own_children()
    started = time.monotonic()
    result = runner.invoke(main, ["check", str(path), *args])
    seconds = time.monotonic() - started
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert own_children() <= before, "a child process was left behind"
    data = None
    if "--json" in args and result.output.lstrip().startswith("{"):
        data = json.loads(result.output)
    return result.exit_code, result.output, data, seconds


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    return write


# ---------------------------------------------------------------------------- cannot be graded: exit 2


def test_missing_file(runner, tmp_path):
    code, out, _, _ = kata_check(runner, tmp_path / "nope.py")
    assert code == 2 and "no such file" in out and "Traceback" not in out


def test_directory(runner, tmp_path):
    code, out, _, _ = kata_check(runner, tmp_path)
    assert code == 2 and "is a directory" in out


def test_empty_file(runner, write):
    code, out, _, _ = kata_check(runner, write("empty.py", "   \n"))
    assert code == 2 and "is empty" in out


def test_binary_file(runner, write):
    code, out, _, _ = kata_check(runner, write("blob.py", b"\x7fELF\x00\x01\x02"))
    assert code == 2 and "binary" in out


def test_syntax_error_shows_file_line_and_the_line(runner, write):
    path = write("syntax.py", REFERENCE.replace("def make_model(seed=0):", "def make_model(seed=0)"))
    line = REFERENCE.splitlines().index("def make_model(seed=0):") + 1
    code, out, _, _ = kata_check(runner, path)
    assert code == 2
    assert f"{path}:{line}" in out and "def make_model(seed=0)" in out and "^" in out


def test_missing_function_is_named_with_its_signature(runner, write):
    path = write("nofit.py", REFERENCE.replace("def fit(", "def fit_model("))
    code, out, data, _ = kata_check(runner, path, "--json")
    assert code == 2
    assert "missing function fit" in data["error"]["message"]
    assert 'fit(model, optimizer, loader, loss_fn, epochs, *, scheduler=None' in data["error"]["message"]


def test_import_error_names_the_module(runner, write):
    code, out, _, _ = kata_check(runner, write("imp.py", at_import("import notamodule_xyz")))
    assert code == 2 and "'notamodule_xyz'" in out and "line" in out


# ---------------------------------------------------------------------------- hangs


def test_endless_loop_at_import(runner, write):
    path = write("hang_import.py", at_import("while True:\n    pass"))
    code, out, data, seconds = kata_check(runner, path, "--json", "--timeout", str(TIMEOUT))
    assert code == 2 and data["error"]["kind"] == "load"
    assert f"did not finish importing within {TIMEOUT} s" in data["error"]["message"]
    assert seconds < TIMEOUT + 10


def test_endless_loop_in_train_epoch_names_the_check(runner, write):
    marker = "31170"  # a grandchild the loop starts must go too
    path = write("hang_train.py", in_train_epoch(spawn_and_hang(marker)))
    code, out, _, seconds = kata_check(runner, path, *STEP_CHECKS, "--timeout", str(TIMEOUT))
    assert code == 1
    assert "steps.per_batch" in out and f"did not finish within {TIMEOUT} s" in out
    assert "✓ data.lesson" in out  # the other checks still ran, in a fresh child
    assert seconds < TIMEOUT + 10
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


def test_endless_output_is_capped_and_times_out(runner, write):
    path = write("flood.py", in_train_epoch("while True:\n    print('spam' * 250)"))
    code, _, data, seconds = kata_check(runner, path, "--json", *STEP_CHECKS, "--timeout", str(TIMEOUT))
    assert code == 1
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status == {"data.lesson": "pass", "steps.per_batch": "timeout"}
    assert data["output_dropped_bytes"] > 0
    assert seconds < TIMEOUT + 10


def test_bounded_output_flood_is_dropped_and_noted(runner, write):
    """Printing is no fault: a correct loop printing 2 MB still passes; the excess is counted, not kept."""
    path = write("chatty.py", at_import("for _ in range(20000):\n    print('x' * 99)"))
    code, out, _, _ = kata_check(runner, path, "--only", "data.lesson", "--only", "loss.epoch_mean")
    assert code == 0
    assert "more bytes, not shown" in out


# ---------------------------------------------------------------------------- exits and crashes


@pytest.mark.parametrize("call", ["import sys\nsys.exit(0)", "raise SystemExit(0)"])
def test_exit_zero_at_import(runner, write, call):
    code, out, _, _ = kata_check(runner, write("exit_import.py", at_import(call)))
    assert code == 2 and "called exit(0) while being imported" in out


def test_exit_zero_inside_a_function(runner, write):
    path = write("exit_train.py", in_train_epoch("import sys\nsys.exit(0)"))
    code, _, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS)
    assert code == 1
    res = {c["id"]: c for c in data["checks"]}
    assert res["steps.per_batch"]["status"] == "error" and "exit(0)" in res["steps.per_batch"]["message"]


def test_os_exit_zero_at_import(runner, write):
    code, out, _, _ = kata_check(runner, write("osexit_import.py", at_import("import os\nos._exit(0)")))
    assert code == 2 and "ended the process while being imported (exit status 0)" in out


def test_os_exit_zero_inside_a_function(runner, write):
    path = write("osexit_train.py", in_train_epoch("import os\nos._exit(0)"))
    code, _, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS, "--only", "loss.epoch_mean")
    assert code == 1
    res = {c["id"]: c for c in data["checks"]}
    assert res["data.lesson"]["status"] == "pass"
    for cid in ("steps.per_batch", "loss.epoch_mean"):  # each in its own fresh child, each ended
        assert res[cid]["status"] == "error" and "exit status 0" in res[cid]["message"]


def test_segfault_at_import(runner, write):
    path = write("segv_import.py", at_import("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"))
    code, out, _, _ = kata_check(runner, path)
    assert code == 2 and "SIGSEGV" in out


def test_segfault_inside_a_function(runner, write):
    path = write("segv_train.py", in_train_epoch("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"))
    code, out, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS)
    assert code == 1
    res = {c["id"]: c for c in data["checks"]}
    assert res["steps.per_batch"]["status"] == "error" and "SIGSEGV" in res["steps.per_batch"]["message"]


def test_huge_allocation_at_import(runner, write):
    code, out, _, _ = kata_check(runner, write("alloc_import.py", at_import("big = torch.empty(1 << 40)")))
    assert code == 2 and "allocate memory" in out


@pytest.mark.parametrize("call", ["big = bytearray(1 << 40)", "big = torch.ones(1 << 38)"])
def test_huge_allocation_inside_a_function(runner, write, call):
    path = write("alloc_train.py", in_train_epoch(call))
    code, _, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS)
    assert code == 1
    res = {c["id"]: c for c in data["checks"]}["steps.per_batch"]
    assert res["status"] == "error" and "out of memory" in res["message"]


def test_exception_shows_the_learners_frames_only(runner, write):
    path = write("raises.py", in_train_epoch("raise ValueError('boom')"))
    code, _, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS)
    assert code == 1
    message = {c["id"]: c for c in data["checks"]}["steps.per_batch"]["message"]
    assert "raises.py" in message and "in train_epoch" in message and "ValueError: boom" in message
    assert "checker/" not in message and "site-packages" not in message


def test_nan_loss_fails_the_checks_that_watch_the_loss(runner, write):
    path = write("nan.py", REFERENCE.replace("        loss = loss_fn(logits, y)\n",
                                             "        loss = loss_fn(logits, y) * float('nan')\n"))
    only = ["--only", "loss.falls", "--only", "steps.fresh_grads"]
    code, _, data, _ = kata_check(runner, path, "--json", *only)
    assert code == 1
    res = {c["id"]: c for c in data["checks"]}
    assert res["loss.falls"]["status"] == "fail" and "NaN" in res["loss.falls"]["message"]
    assert res["steps.fresh_grads"]["status"] == "fail" and "NaN" in res["steps.fresh_grads"]["message"]


# ---------------------------------------------------------------------------- tampering


def test_patching_torch_at_import(runner, write):
    path = write("tamper_import.py", at_import("torch.optim.SGD.step = lambda self, closure=None: None"))
    code, out, _, _ = kata_check(runner, path)
    assert code == 2 and "torch.optim.SGD.step" in out


def test_patching_torch_inside_a_function(runner, write):
    path = write("tamper_train.py", in_train_epoch("torch.Tensor.backward = lambda self, *a, **k: None"))
    code, _, data, _ = kata_check(runner, path, "--json", *STEP_CHECKS)
    assert code == 2 and data["passed"] is False
    assert data["error"]["kind"] == "tampered" and "torch.Tensor.backward" in data["error"]["message"]


# ---------------------------------------------------------------------------- a real process


@pytest.mark.skipif(shutil.which("kata") is None, reason="the kata command is not installed")
def test_real_subprocess_timeout_from_the_environment(write):
    marker = "31171"
    path = write("hang_spawn.py", in_train_epoch(spawn_and_hang(marker)))
    env = {**os.environ, "KATA_CHECK_TIMEOUT": str(TIMEOUT), "NO_COLOR": "1"}
    command = [shutil.which("kata") or "kata", "check", str(path), "--json", "--only", "steps.per_batch"]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [(c["id"], c["status"]) for c in data["checks"]] == [("steps.per_batch", "timeout")]
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []
    assert sys.executable  # the same interpreter family ran it (kata's shebang)


# ---------------------------------------------------------------------------- the runner itself


def test_a_reused_descriptor_number_is_not_closed_under_a_later_child():
    """A child whose event pipe closes early must not take a later child's pipe with it when reaped.

    A closes its event pipe at once and lives on; D ends soon after, so C starts and its new pipe
    gets the number A's event pipe had. Reaping A must leave C's pipe alone, or C is never heard
    from and ends as a timeout.
    """
    from checker.sandbox.jobs import Job, Limits, run_jobs

    def a(rep):
        os.close(rep._fd)
        time.sleep(0.6)

    def d(rep):
        time.sleep(0.15)

    def c(rep):
        rep.start("c", timeout=3)
        time.sleep(1.0)  # still running when A is reaped
        rep.send({"event": "measured", "check": "c", "measured": {}})

    limits = Limits(step_timeout=3)
    outcomes = run_jobs([Job(a, limits, "a"), Job(d, limits, "d"), Job(c, limits, "c")], workers=2)
    c_outcome = outcomes[2]
    assert c_outcome.timed_out_step is None and c_outcome.finished
    assert [str(e.kind) for e in c_outcome.events if str(e.kind) != "isolation"] == ["start", "measured", "done"]
