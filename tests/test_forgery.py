"""A child that steals its own event key (issue 31): what it forges earns no check.

The key that signs a child's events lives where the learner's code runs, so code there can always read it:
tests/corpus/attacks3/forge_events*.py read it through the uncached lru_cache wrapper that holds the reporter's
step hook (NumPy's array interface reads any address without an audit event) and send, signed, the reference's own
figures for the checks whose verdicts rest on what the child reports. ``forge_events_quiet.py`` does the same with
no construct the static note flags. Appended to a broken loop (no ``optimizer.zero_grad()``), neither may earn a
check that loop fails on its own: a verdict the child's figures decide must be confirmed outside the child.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_integrity import broken_loop
from tests.test_sandbox import kata_check

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ROOT / "tests" / "corpus" / "attacks3"
FORGED = ("steps.fresh_grads", "loss.falls", "clip.norm", "converge.adam")
"""The checks the issue's attack forged to pass (the broken loop fails the first three on its own)."""
ONLY_ARGS = [arg for cid in ("steps.per_batch", *FORGED) for arg in ("--only", cid)]


@pytest.fixture(scope="module")
def module_runner():
    from click.testing import CliRunner

    return CliRunner()


@pytest.fixture(scope="module")
def reference_measured(module_runner) -> dict:
    """What `kata check --json` prints for the reference: the figures a forger sends as its own."""
    code, _, data, _ = kata_check(module_runner, ROOT / "solutions" / "loop.py", "--json", *ONLY_ARGS)
    assert code == 0, data
    return {c["id"]: c["measured"] for c in data["checks"] if c["id"] in FORGED}


@pytest.fixture(scope="module")
def honest(module_runner, tmp_path_factory) -> dict:
    """The broken loop's own verdicts."""
    path = tmp_path_factory.mktemp("honest") / "broken.py"
    path.write_text(broken_loop())
    _, _, data, _ = kata_check(module_runner, path, "--json", *ONLY_ARGS)
    return {c["id"]: c["status"] for c in data["checks"]}


def statuses(data: dict) -> dict:
    return {c["id"]: c["status"] for c in data["checks"]}


@pytest.mark.parametrize("attack", ["forge_events", "forge_events_quiet"])
def test_forged_events_earn_no_check_the_loop_fails(module_runner, tmp_path, reference_measured, honest, attack):
    block = (ATTACKS / f"{attack}.py").read_text().replace("__MEASURED__", repr(reference_measured))
    path = tmp_path / f"{attack}.py"
    path.write_text(broken_loop() + "\n\n" + block)
    code, out, data, _ = kata_check(module_runner, path, "--json", *ONLY_ARGS)
    assert data is not None and code != 0 and data["passed"] is False, out
    got = statuses(data)
    earned = [cid for cid in FORGED if got.get(cid) == "pass" and honest.get(cid) != "pass"]
    held = bool(data.get("integrity")) or (data.get("error") or {}).get("kind") == "tampered"
    assert not earned or held, (earned, data.get("integrity"), data.get("error"))
    assert not earned, earned  # no pass granted, held or not


def test_the_quiet_attack_is_not_flagged_by_the_static_note():
    """So nothing but the confirmation outside the child can catch it."""
    from checker.engine.integrity import review_reasons

    source = (ATTACKS / "forge_events_quiet.py").read_text()
    assert review_reasons(source, "forge_events_quiet.py") == []
    assert review_reasons((ATTACKS / "forge_events.py").read_text(), "forge_events.py")
