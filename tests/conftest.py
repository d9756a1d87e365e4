"""Shared fixtures: paths, a CLI runner, and one prepared lab per session (torch imported once)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "solutions" / "loop.py"

os.environ.setdefault("NO_COLOR", "1")
# Test catalogues are drafts by design (stories without a [symptom] claim): show them. The tests of
# drafts themselves set KATA_DRAFTS=0 (tests/test_instructor.py); the shipped katas are proven drafts-free.
os.environ.setdefault("KATA_DRAFTS", "1")
# Ask for CUDA without initialising it (torch.cuda.is_available() would otherwise call cuInit, and the
# sandbox's forked children could not use CUDA afterwards).
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")


@pytest.fixture(scope="session")
def reference_source() -> str:
    return REFERENCE.read_text()


@pytest.fixture(scope="session")
def lab():
    from checker.cli.common import prepared_lab

    return prepared_lab("cpu")


@pytest.fixture
def runner():
    from click.testing import CliRunner

    return CliRunner()
