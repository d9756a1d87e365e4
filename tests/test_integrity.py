"""Grading integrity (issue 10): a submission cannot forge a pass, touch a classmate, or outlive the grader.

Each attack in tests/corpus/attacks/ is appended to a broken loop (the ``zero-grad-missing`` mutant: no
``optimizer.zero_grad()``, so ``steps.fresh_grads`` fails) and graded; none may be reported as passing,
and the tests say which layer stops it (checker/sandbox/hardening.py, checker/sandbox/tamper.py, the signed
event pipe in checker/sandbox/jobs.py, checker/engine/integrity.py). The class-folder attacks run through a real
``kata grade`` process, with a correct and a broken classmate beside them. Then: what must keep working (DataLoader
workers, every correct loop free of integrity flags) and the kernel layers, one by one, in a child.
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

from checker.engine.integrity import review_reasons
from checker.sandbox import hardening
from checker.sandbox.jobs import Job, Limits, run_job, run_jobs
from tests.test_sandbox import kata_check, processes_with

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ROOT / "tests" / "corpus" / "attacks"
REFERENCE = (ROOT / "solutions" / "loop.py").read_text()
ONLY = ("data.lesson", "steps.fresh_grads")
ONLY_ARGS = [arg for cid in ONLY for arg in ("--only", cid)]
MAIN_GUARD = 'if __name__ == "__main__":'
LINUX = sys.platform.startswith("linux")
ROOTED = LINUX and os.geteuid() == 0


def broken_loop() -> str:
    from checker.catalogue.mutants import mutant_source

    source = mutant_source("zero-grad-missing")
    return source[: source.index(MAIN_GUARD)] if MAIN_GUARD in source else source


@pytest.fixture(scope="module")
def reference_measured(runner_module) -> dict:
    """What `kata check --json` prints for the reference: the `measured` dict of each check."""
    code, _, data, _ = kata_check(runner_module, ROOT / "solutions" / "loop.py", "--json", *ONLY_ARGS)
    assert code == 0, data
    return {c["id"]: c["measured"] for c in data["checks"]}


@pytest.fixture(scope="module")
def runner_module():
    from click.testing import CliRunner

    return CliRunner()


def attack_source(name: str, measured: dict | None = None, out: Path | None = None) -> str:
    block = (ATTACKS / f"{name}.py").read_text()
    block = block.replace("__MEASURED__", repr(measured or {}))
    block = block.replace("__OUT__", str(out or ""))
    return broken_loop() + "\n\n# ---- attack ----\n" + block


def grade_attack(runner, tmp_path: Path, name: str, measured: dict, *args: str):
    path = tmp_path / f"{name}.py"
    path.write_text(attack_source(name, measured))
    code, out, data, seconds = kata_check(runner, path, "--json", *ONLY_ARGS, *args)
    assert code != 0, out
    assert data is not None and data["passed"] is False, out
    return data


def test_the_broken_base_fails_on_its_own(runner, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(broken_loop())
    code, _, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert code == 1 and not review_reasons(broken_loop(), str(path))
    assert {c["id"]: c["status"] for c in data["checks"]}["steps.fresh_grads"] == "fail"


# ---------------------------------------------------------------------------------------- forging a pass
# (attack file, what the refusal says: the layer that stops it)

TAMPERING = [
    ("forged_pipe_proc", "/proc/self/fd"),  # the audit hook: /proc/*/fd
    ("forged_pipe_numbers", "forged event in the result pipe"),  # the signed pipe
    ("gc_reporter", "gc.get_objects"),  # the audit hook: gc
    ("patch_reporter_send", "Reporter"),  # the guard: kata classes (the reporter has no class to patch)
    ("swap_class", "changes the class"),  # the audit hook: __class__ assignment
    ("patch_json_encoder", "JSONEncoder"),  # the guard (the reporter's encoder was bound before)
    ("patch_perf_counter", "time.perf_counter"),  # the guard: one level below
    ("patch_engine", "_engine_run_backward"),  # the guard: one level below
    ("patch_and_restore", "_engine_run_backward"),  # the guard, at every optimizer step
    ("replace_measure", "solutions"),  # the audit hook: kata's reference is not readable
    ("replay_measured", "Check"),  # the guard: each registered check's fields
    ("patch_rig_init", "Rig.__init__"),  # the guard: kata classes
    ("global_step_hook", "_global_optimizer_post_hooks"),  # the guard: torch's global hook registries
    ("import_solution", "solutions"),  # the audit hook: kata's reference is not readable
]


@pytest.mark.parametrize("name, layer", TAMPERING, ids=[t[0] for t in TAMPERING])
def test_attack_is_refused_as_tampering(runner, tmp_path, reference_measured, name, layer):
    data = grade_attack(runner, tmp_path, name, reference_measured)
    assert data["error"]["kind"] == "tampered", data["error"]
    assert layer in data["error"]["message"], data["error"]["message"]
    assert not any(c["status"] == "pass" and c["id"] == "steps.fresh_grads" for c in data["checks"])


# whatever layer stops these (nothing to find, a sealed hook, a refusal, the strict event schema), no pass
NEVER_PASSES = ["frame_walk_reference", "stolen_send_malformed"]


@pytest.mark.parametrize("name", NEVER_PASSES)
def test_attack_never_passes(runner, tmp_path, reference_measured, name):
    data = grade_attack(runner, tmp_path, name, reference_measured)
    assert not any(c["status"] == "pass" and c["id"] == "steps.fresh_grads" for c in data["checks"]), data


def test_a_file_that_trains_correctly_only_while_graded_is_held_for_review(runner, tmp_path, reference_measured):
    """Behaviourally a correct loop (no grader can tell): the integrity note holds it for review."""
    data = grade_attack(runner, tmp_path, "graded_only", reference_measured)
    assert data.get("held_for_review") is True
    assert any("sys.modules" in reason for reason in data["integrity"])


@pytest.mark.parametrize("fmt", ["gradescope", "junit", "text"])
def test_no_format_reports_a_forgery_as_passing(runner, tmp_path, reference_measured, fmt):
    from checker.cli import main

    path = tmp_path / "forged.py"
    path.write_text(attack_source("forged_pipe_numbers", reference_measured))
    result = runner.invoke(main, ["check", str(path), "--format", fmt, *ONLY_ARGS])
    assert result.exit_code == 2
    if fmt == "gradescope":
        assert json.loads(result.output)["score"] == 0
    elif fmt == "junit":
        assert 'errors="1"' in result.output and "tampered" in result.output
    else:
        assert "cannot grade" in result.output and "pass" not in result.output.split("cannot grade")[0]


def test_a_held_report_scores_zero_in_every_format(runner, tmp_path, reference_measured):
    from checker.cli import main

    path = tmp_path / "graded_only.py"
    path.write_text(attack_source("graded_only", reference_measured))
    gs = runner.invoke(main, ["check", str(path), "--format", "gradescope", *ONLY_ARGS])
    assert gs.exit_code == 1
    data = json.loads(gs.output)
    assert data["score"] == 0 and "held for review" in data["output"] and "sys.modules" in data["output"]
    junit = runner.invoke(main, ["check", str(path), "--format", "junit", *ONLY_ARGS])
    assert junit.exit_code == 1 and 'name="integrity"' in junit.output and "held_for_review" in junit.output
    text = runner.invoke(main, ["check", str(path), "--lang", "es", *ONLY_ARGS])
    assert text.exit_code == 1 and "retenido para revisión" in text.output


# ---------------------------------------------------------------------------------------- a background process


def test_a_background_process_neither_hangs_kata_nor_survives_it(runner, tmp_path):
    path = tmp_path / "background.py"
    path.write_text(attack_source("background_sleep"))
    code, out, data, seconds = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert code == 2 and data["passed"] is False and seconds < 60
    time.sleep(0.2)
    assert processes_with("sleep 301.7319") == []


def _spawner(marker: str, detach: bool):
    """A trusted job (no audit hook) that starts a grandchild holding the output pipe, then ends."""

    def target(rep):
        if detach:  # a double fork with setsid(): another session, re-parented to kata
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", marker])
                os._exit(0)
        else:
            subprocess.Popen(["sleep", marker])
        rep.send({"event": "measured", "check": "x"})

    return target


@pytest.mark.parametrize("detach", [False, True], ids=["child", "setsid-grandchild"])
def test_the_runner_kills_what_a_job_started_and_does_not_wait_for_it(detach):
    """Without the kernel layers (which refuse exec and setsid), the subreaper and the tree kill still
    end every process a job started, at once, even one that holds the output pipe in another session."""
    marker = "31172" if detach else "31173"
    started = time.monotonic()
    outcome = run_job(Job(_spawner(marker, detach), Limits(step_timeout=30, harden=False)))
    assert outcome.finished and time.monotonic() - started < 10
    time.sleep(0.2)
    assert processes_with(f"sleep {marker}") == []


# ---------------------------------------------------------------------------------------- a class folder


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory, reference_measured):
    """A class graded by a real `kata grade`: two honest classmates, three attackers."""
    if shutil.which("kata") is None:
        pytest.skip("the kata command is not installed")
    base = tmp_path_factory.mktemp("class")
    folder, out = base / "submissions", base / "gradebook"
    folder.mkdir()
    files = {
        "a_correct.py": REFERENCE,
        "b_broken.py": broken_loop(),
        "c_ptrace_parent.py": attack_source("ptrace_parent"),
        "d_sibling_fds.py": attack_source("sibling_fds"),
        "e_setsid_grandchild.py": attack_source("setsid_grandchild", out=out),
        "f_forged_pipe.py": attack_source("forged_pipe_numbers", reference_measured),
        "g_copy_classmate.py": attack_source("copy_classmate"),
        "h_stolen_send.py": attack_source("stolen_send_malformed", reference_measured),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    before = {name: (folder / name).read_bytes() for name in files}
    command = [shutil.which("kata"), "grade", str(folder), "-o", str(out), "--workers", "2", *ONLY_ARGS]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    written = {name: (out / name).read_bytes() for name in ("grades.csv", "results.json")}
    # every process kata grade forked carries its command line, the folder's path included
    survivors = [_describe(pid) for pid in processes_with(str(folder)) if pid != os.getpid()]
    time.sleep(1.5)  # a survivor that waits for kata to exit would strike now
    results = {Path(r["file"]).name: r for r in json.loads((out / "results.json").read_text())}
    return {"proc": proc, "folder": folder, "out": out, "before": before, "written": written,
            "survivors": survivors, "results": results}


def _describe(pid: int) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} {cmdline[:200]} | {status[:80]}"


@pytest.mark.parametrize("name", ["c_ptrace_parent.py", "d_sibling_fds.py", "e_setsid_grandchild.py",
                                  "f_forged_pipe.py", "g_copy_classmate.py", "h_stolen_send.py"])
def test_class_folder_attack_never_passes(class_folder, name):
    assert class_folder["proc"].returncode == 0, class_folder["proc"].stderr
    assert class_folder["results"][name]["passed"] is False


def test_class_folder_classmates_untouched(class_folder):
    folder, before = class_folder["folder"], class_folder["before"]
    for name, data in before.items():
        assert (folder / name).read_bytes() == data, f"{name} was changed on disk"
    results = class_folder["results"]
    assert results["a_correct.py"]["passed"] is True, results["a_correct.py"]
    assert "error" not in results["a_correct.py"]
    assert results["b_broken.py"]["passed"] is False and "error" not in results["b_broken.py"]


def test_class_folder_nothing_outlives_kata_and_grades_stay_written(class_folder):
    assert class_folder["survivors"] == []
    assert [pid for pid in processes_with(str(class_folder["folder"])) if pid != os.getpid()] == []
    out = class_folder["out"]
    for name, data in class_folder["written"].items():
        assert (out / name).read_bytes() == data, f"{name} changed after kata exited"


# ---------------------------------------------------------------------------------------- what keeps working


def test_a_correct_loop_with_dataloader_workers_passes(runner, tmp_path):
    source = REFERENCE.replace("batch_size=batch_size, shuffle=True, generator=generator",
                               "batch_size=batch_size, shuffle=True, generator=generator, num_workers=2")
    assert source != REFERENCE
    path = tmp_path / "workers.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", "--only", "loader.coverage", "--only", "loader.order",
                                    "--only", "steps.fresh_grads")
    assert code == 0, out
    assert not review_reasons(source, str(path))


ORDINARY_EXTRAS = """import random
import copy
import csv, fractions, wave, colorsys, difflib, textwrap
import logging, warnings, traceback
from collections import namedtuple
from dataclasses import dataclass

Point = namedtuple("Point", "x y")


@dataclass
class Config:
    lr: float = 0.1


log = logging.getLogger("loop")
log.warning("starting")
warnings.warn("a warning the loop raises")
try:
    1 / 0
except ZeroDivisionError:
    traceback.print_exc()
    log.exception("caught")
"""


def test_a_correct_loop_with_ordinary_extras_passes(runner, tmp_path):
    """First imports of standard modules, namedtuple, dataclass, logging and printed tracebacks, a deep
    copy of a model (copyreg caches __slotnames__ on torch's classes): nothing a loop does is refused."""
    source = REFERENCE.replace("import random\n", ORDINARY_EXTRAS, 1)
    source += "\n\n_snapshot = copy.deepcopy(make_model(seed=0))\n"
    path = tmp_path / "extras.py"
    path.write_text(source)
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS, "--only", "model.init")
    assert code == 0, out
    assert "integrity" not in data


def test_no_correct_loop_is_flagged():
    from checker.catalogue.katas import load_katas, starter_source
    from checker.catalogue.mutants import mutant_source, reference_source
    from checker.setting.tracks import all_tracks

    sources = {"solutions/loop.py": REFERENCE}
    sources.update({str(t.reference_path): reference_source(t) for t in all_tracks().values()})
    sources.update({str(p): p.read_text() for p in (ROOT / "tests" / "corpus" / "correct").glob("*.py")})
    sources.update({str(p): p.read_text() for p in (ROOT / "tests" / "corpus" / "broken").glob("*.py")})
    for kata in load_katas():
        if kata.mutant:
            sources[f"starter {kata.track}/{kata.mutant}"] = starter_source(kata)
            sources[f"mutant {kata.track}/{kata.mutant}"] = mutant_source(kata.mutant, track=kata.setting)
    assert len(sources) > 40
    flagged = {name: reasons for name, src in sources.items() if (reasons := review_reasons(src, name))}
    assert flagged == {}


@pytest.mark.parametrize("code", [
    "import io\nbuffer = io.BytesIO()\ntorch.save(model.state_dict(), buffer)",  # best weights kept in memory
    "from io import BytesIO\nkept = BytesIO()",
])
def test_memory_buffers_are_not_file_access(code):
    assert review_reasons(code, "loop.py") == []


@pytest.mark.parametrize("code, expected", [
    ("import checker.setting.instruments", "kata's own code"),
    ("import io\nio.open('answers.json')", "io.open"),
    ("from io import FileIO", "io.FileIO"),
    ("from solutions.loop import fit", "kata's own code"),
    ("import sys\nok = 'checker.setting.instruments' in sys.modules", "sys.modules"),
    ("exec('x = 1')", "exec()"),
    ("__import__('os')", "__import__()"),
    ("import gc\ngc.get_objects()", "gc"),
    ("import ctypes", "ctypes"),
    ("import inspect", "inspect"),
    ("import subprocess", "subprocess"),
    ("import socket", "socket"),
    ("import signal", "signal"),
    ("import os\nos.write(5, b'x')", "os.write"),
    ("import os\nos._exit(0)", "os._exit"),
    ("import os\nos.fork()", "os.fork"),
    ("import os\nos.kill(1, 9)", "os.kill"),
    ("p = '/proc/self/fd'", "/proc"),
    ("data = open('x.txt').read()", "open()"),
    ("from pathlib import Path\nPath('x').write_text('1')", ".write_text()"),
    ("import sys\nf = sys._getframe()", "sys._getframe"),
    ("import sys\nsys.settrace(None)", "sys.settrace"),
    ("x = object()\nx.__class__ = int", "__class__"),
    ("d = fit.__globals__", "__globals__"),
    ("c = fit.__code__", "__code__"),
    ("s = object.__subclasses__()", "__subclasses__"),
    ("b = __builtins__", None),
    ("import torch\nsetattr(torch.optim.SGD, 'step', None)", "setattr()"),
    ("import time\ntime.perf_counter = lambda: 0", "time.perf_counter"),
    ("from torch.optim.optimizer import register_optimizer_step_post_hook", "global torch hook"),
])
def test_the_integrity_note_names_what_no_loop_needs(code, expected):
    reasons = review_reasons(code + "\n", "x.py")
    if expected is None:
        return
    assert reasons and any(expected in r for r in reasons), reasons
    assert all(r.startswith("line ") for r in reasons)
    assert review_reasons(code + "\n", "x.py", lang="es")[0].startswith("línea ")


def test_ordinary_constructs_are_not_flagged():
    code = (
        "import os, sys, random, math, time, logging\nimport numpy as np\nimport torch\nfrom torch import nn\n"
        "torch.backends.cudnn.deterministic = True\ntorch.backends.cudnn.benchmark = False\n"
        "os.environ['PYTHONHASHSEED'] = '0'\nlog = logging.getLogger(__name__)\n"
        "def fit(model):\n    print(type(model).__name__, model.__class__.__name__, time.time())\n"
        "    best = {k: v.clone() for k, v in model.state_dict().items()}\n    return best\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n"
        "        setattr(self, 'extra', nn.Identity())\n"
        "if __name__ == '__main__':\n    import argparse\n    torch.save(fit(Net()), open('best.pt', 'wb'))\n"
    )
    assert review_reasons(code, "x.py") == []


# ---------------------------------------------------------------------------------------- the kernel layers


def _facts_in(folder: Path):
    """A job target that records, in a hardened child (trusted code, no audit hook), what the kernel lets it
    do; ``folder`` is outside its private folder (the child's environment holds no variable to name it)."""
    return lambda rep: _facts(rep, folder)


def _facts(rep, folder: Path):
    import socket
    import tempfile

    facts: dict = {"uid": os.getuid(), "tmp": tempfile.gettempdir(), "cwd": os.getcwd()}
    status = Path("/proc/self/status").read_text()
    facts["no_new_privs"] = "NoNewPrivs:\t1" in status
    facts["seccomp"] = "Seccomp:\t2" in status
    facts["fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        facts["inet"] = True
    except OSError:
        facts["inet"] = False
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    try:
        os.execv("/bin/true", ["true"])
    except OSError:
        facts["exec"] = False
    try:
        os.setsid()
        facts["setsid"] = True
    except OSError:
        facts["setsid"] = False
    facts["interfaces"] = [line.split(":")[0].strip() for line in Path("/proc/net/dev").read_text().splitlines()[2:]]
    try:
        Path(folder, "planted.py").write_text("raise SystemExit\n")
        facts["wrote_outside"] = True
    except OSError:
        facts["wrote_outside"] = False
    Path(facts["tmp"], "scratch.txt").write_text("mine")
    import resource

    facts["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    facts["dumpable"] = None
    rep.send({"event": "measured", "check": "facts", "measured": facts})


@pytest.mark.skipif(not LINUX, reason="the kernel layers are Linux's")
def test_each_kernel_layer_is_active_in_the_child(tmp_path, monkeypatch):
    folder = tmp_path / "class"
    folder.mkdir()
    outcome = run_job(Job(_facts_in(folder), Limits(step_timeout=30)))
    assert outcome.finished, outcome.output
    facts = next(e.measured for e in outcome.events if getattr(e, "check", None) == "facts")
    assert facts["no_new_privs"] and facts["seccomp"]
    assert len(facts["fds"]) <= 5 and facts["fds"][:3] == [0, 1, 2]  # 0-2, the event pipe, listdir's own
    assert facts["inet"] is False and facts["exec"] is False and facts["setsid"] is False
    assert facts["tmp"].startswith(tempfile_root()) and facts["cwd"] == facts["tmp"]
    assert not Path(facts["tmp"]).exists()  # removed after the job
    assert facts["nproc"] == hardening.NPROC or not ROOTED
    if ROOTED:
        assert hardening.UID_BASE <= facts["uid"] < hardening.UID_BASE + hardening.UID_SLOTS
        assert facts["wrote_outside"] is False and not (folder / "planted.py").exists()
        assert facts["interfaces"] in (["lo"], [])  # a network namespace of its own


def tempfile_root() -> str:
    import tempfile

    return tempfile.gettempdir()


def test_the_parent_is_a_non_dumpable_subreaper():
    run_jobs([], workers=1)
    if not LINUX:
        return
    status = Path("/proc/self/status").read_text()
    assert hardening._parent_done
    # PR_GET_DUMPABLE (3) / PR_GET_CHILD_SUBREAPER (37)
    import ctypes

    libc = ctypes.CDLL(None)
    assert libc.prctl(3, 0, 0, 0, 0) == 0
    value = ctypes.c_int(0)
    libc.prctl(37, ctypes.byref(value), 0, 0, 0)
    assert value.value == 1 and status


def test_the_seccomp_program_covers_both_architectures():
    for machine in ("x86_64", "aarch64"):
        program = hardening.seccomp_program(machine)
        assert program and len(program) % 8 == 0 and len(program) // 8 < 4096
    assert hardening.seccomp_program("riscv64") is None


def test_an_unsigned_line_in_the_event_pipe_is_tampering():
    def target(rep):
        os.write(rep._fd, b'{"event": "measured", "check": "x", "measured": {}}\n')
        rep.send({"event": "measured", "check": "y", "measured": {}})

    outcome = run_job(Job(target, Limits(step_timeout=30)))
    kinds = [(str(e.kind), getattr(e, "check", None)) for e in outcome.events]
    assert ("tampered", None) in kinds and ("measured", "x") not in kinds and ("measured", "y") in kinds


@pytest.mark.skipif(not LINUX, reason="the kernel layers are Linux's")
def test_without_root_the_child_keeps_every_other_layer(monkeypatch, tmp_path):
    """Where kata cannot drop privileges (not root), the child still gets its own descriptors, a private
    folder, no-new-privs and seccomp."""
    monkeypatch.setattr(hardening, "job_identity", lambda: None)
    outcome = run_job(Job(_facts_in(tmp_path), Limits(step_timeout=30)))
    facts = next(e.measured for e in outcome.events if getattr(e, "check", None) == "facts")
    assert facts["uid"] == os.getuid()
    assert facts["no_new_privs"] and facts["seccomp"] and facts["exec"] is False and facts["inet"] is False
    assert facts["cwd"] == facts["tmp"] and not Path(facts["tmp"]).exists()


HOSTILE_METADATA = [
    {"metadata": ["not", "a", "dict"]},
    {"metadata": {"tags": 5}},
    {"metadata": {"tags": {"kata-skip": True}}},
    {"metadata": "kata-skip"},
]


@pytest.mark.parametrize("extra", HOSTILE_METADATA, ids=["list", "int-tags", "dict-tags", "string"])
def test_a_notebook_with_hostile_metadata_and_the_frame_walk_never_passes(runner, tmp_path, reference_measured,
                                                                           extra):
    """The frame-walk payload inside a notebook whose metadata is not what Jupyter writes: a verdict or a
    clear refusal, never a traceback, never a pass."""
    source = attack_source("frame_walk_reference", reference_measured)
    cell = {"cell_type": "code", "execution_count": None, "outputs": [], "source": source.splitlines(True), **extra}
    notebook = {"cells": [{"cell_type": "markdown", "metadata": 7, "source": "# hi"}, cell],
                "metadata": {"kernelspec": ["python3"], "kata": "../../solutions"}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "walk.ipynb"
    path.write_text(json.dumps(notebook))
    code, out, data, _ = kata_check(runner, path, "--json", *ONLY_ARGS)
    assert code in (1, 2) and "Traceback (most recent call last)" not in out, out
    assert data is None or data["passed"] is False
    if data is not None and data.get("checks"):
        assert not any(c["status"] == "pass" and c["id"] == "steps.fresh_grads" for c in data["checks"])
