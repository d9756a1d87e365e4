"""README's "Check your own loop" test, in a project folder of its own, with kata installed from its wheel.

Usage: python benchmarks/own_loop_wheel.py [--work DIR]

1. `pip wheel . -w DIR/wheel --no-deps` from the repository;
2. a fresh virtual environment DIR/venv: torch==2.13.0 first, then the wheel (its dependencies from the
   configured index) and pytest;
3. a project folder DIR/project outside the repository: the MNIST-style example's module as the project's
   code, and README's test block (after `<!-- own-loop-test -->`) verbatim as test_training.py;
4. `pytest` there must pass; with `optimizer.zero_grad()` deleted from the project's train() it must fail
   naming `mnist.py:<line of optimizer.step()>: steps.fresh_grads`; `kata project` must say the same.
Prints each step and exits 0 only when all of them did what they should.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sh(*cmd, cwd=None, ok=(0,)) -> subprocess.CompletedProcess:
    print("+", " ".join(map(str, cmd)), flush=True)
    done = subprocess.run(list(map(str, cmd)), cwd=cwd, capture_output=True, text=True)
    if done.returncode not in ok:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
        raise SystemExit(f"step failed with exit code {done.returncode}")
    return done


def readme_test() -> str:
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- own-loop-test -->", 1)[1]
    return re.search(r"```python\n(.*?)```", block, re.S).group(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "kata-own-loop-wheel"))
    args = parser.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sh(sys.executable, "-m", "pip", "wheel", ".", "-w", work / "wheel", "--no-deps", "-q", cwd=ROOT)
    wheel = next((work / "wheel").glob("kata-*.whl"))
    sh(sys.executable, "-m", "venv", work / "venv")
    pip = work / "venv" / "bin" / "pip"
    sh(pip, "install", "-q", "torch==2.13.0")
    sh(pip, "install", "-q", wheel, "pytest")
    project = work / "project"
    project.mkdir()
    shutil.copy(ROOT / "examples" / "mnist" / "mnist.py", project / "mnist.py")
    (project / "test_training.py").write_text(readme_test())
    python = work / "venv" / "bin" / "python"
    done = sh(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    print(done.stdout.strip().splitlines()[-1])
    source = (project / "mnist.py").read_text()
    broken = source.replace("        optimizer.zero_grad()\n", "", 1)
    (project / "mnist.py").write_text(broken)
    step_line = 1 + next(i for i, line in enumerate(broken.splitlines()) if "optimizer.step()" in line)
    expected = f"mnist.py:{step_line}: steps.fresh_grads"
    done = sh(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project, ok=(1,))
    said = [line for line in done.stdout.splitlines() if "steps.fresh_grads" in line]
    print("\n".join(said[:1]))
    if not any(expected in line for line in said) or "Traceback" in done.stdout:
        raise SystemExit(f"the failing test does not name {expected}")
    (project / "kata_pieces.py").write_text(
        "from test_training import *  # noqa\nfrom argparse import Namespace\nimport torch\n"
        "from mnist import Net, SyntheticDigits, test, train\n\n\ndef kata_pieces():\n"
        "    return dict(model=Net, data=SyntheticDigits(600), train=train, evaluate=test,\n"
        "                optimizer=lambda model: torch.optim.Adadelta(model.parameters(), lr=1.0),\n"
        "                bind={'args': Namespace(log_interval=10, dry_run=False)})\n")
    done = sh(work / "venv" / "bin" / "kata", "project", "kata_pieces.py", cwd=project, ok=(1,))
    if expected not in done.stdout:
        raise SystemExit(f"kata project does not name {expected}:\n{done.stdout}")
    print(next(line for line in done.stdout.splitlines() if expected in line).strip())
    print("the wheel, README's test and kata project work in a project folder of their own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
