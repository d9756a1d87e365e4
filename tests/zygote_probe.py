"""A child-side probe for tests/test_zygote.py: what can a child find anywhere in its own memory?

Run as a ``Task("tests.zygote_probe:scan", ...)`` (no learner file, no audit hook: this is the strongest
reader a native-level payload could be). Each marker arrives as two halves and is looked for as the
halves joined, without ever building the joined string here, so the probe does not plant what it seeks.
"""

from __future__ import annotations

import re


def _regions():
    with open("/proc/self/maps") as fh:
        for line in fh:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else ""
            if fields[1].startswith("r") and name not in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
                yield start, end


def found_in_memory(pairs: list[tuple[bytes, bytes]]) -> list[bool]:
    found = [False] * len(pairs)
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        for start, end in _regions():
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            for i, (head, tail) in enumerate(pairs):
                if found[i]:
                    continue
                for hit in re.finditer(re.escape(head), data):
                    if data[hit.end():hit.end() + len(tail)] == tail:
                        found[i] = True
                        break
    return found


def scan(pairs: list[tuple[bytes, bytes]], own: str):
    """``own``: what this child was legitimately given (a submission's source); held while scanning."""

    def target(rep) -> None:
        held = own  # noqa: F841 - kept alive on purpose: the positive control
        rep.send({"event": "measured", "check": "probe", "measured": {"found": found_in_memory(pairs)}})

    return target


def lineage():
    """Who forked this child (its shepherd's parent: the zygote or its early twin), and whether torch._dynamo is
    in it. Run without a PID namespace (``harden=False``), so the pids are the host's."""

    def target(rep) -> None:
        import os
        import sys

        from checker.sandbox.hardening import _proc_table

        shepherd = os.getppid()
        rep.send({"event": "measured", "check": "probe", "measured": {
            "forker": _proc_table()[shepherd][0], "dynamo": "torch._dynamo" in sys.modules,
            "cores": sorted(os.sched_getaffinity(0))}})

    return target


def note_cores(path: str) -> None:
    """A zygote's late preload: writes the cores the zygote may run on while it warms late (a JSON list)."""
    import json
    import os

    with open(path, "w") as fh:
        json.dump(sorted(os.sched_getaffinity(0)), fh)


def build_optimizer():
    """Builds an optimizer (so imports torch._dynamo if it is not yet) and reports whether that took the import."""

    def target(rep) -> None:
        import sys

        import torch

        before = "torch._dynamo" in sys.modules
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        rep.send({"event": "measured", "check": "probe", "measured": {"before": before}})

    return target


def hold(started: str, go: str):
    """Writes ``started``, waits (up to a minute) for ``go`` to exist, then reports who forked it: a job still
    running while the test makes the zygote ready (so dismisses its twin)."""

    def target(rep) -> None:
        import os
        import time

        from checker.sandbox.hardening import _proc_table

        with open(started, "w") as fh:
            fh.write("1")
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
        rep.send({"event": "measured", "check": "probe", "measured": {
            "forker": _proc_table()[os.getppid()][0], "go": os.path.exists(go)}})

    return target


def limits():
    """The child's address-space and data caps, and whether a 4 GiB allocation is refused."""

    def target(rep) -> None:
        import resource

        try:
            block = bytearray(4 * 1024**3)
            refused = False
            del block
        except MemoryError:
            refused = True
        rep.send({"event": "measured", "check": "probe", "measured": {
            "as": resource.getrlimit(resource.RLIMIT_AS)[0], "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
            "refused": refused}})

    return target


def warm_as_on_gpu() -> None:
    """A zygote's late warm-up as on a machine whose torch was built for CUDA (``fork_sensitive``), with every
    backward pass refused: it must run none (the first backward initialises CUDA, which no forked child could
    then use)."""
    import torch
    import torch._dynamo  # noqa: F401

    from checker.setting import lab

    def refuse(*args, **kwargs):
        raise AssertionError("a backward pass in the zygote")

    saved = lab.fork_sensitive, torch.Tensor.backward, torch.autograd.backward
    lab.fork_sensitive = lambda: True
    torch.Tensor.backward = torch.autograd.backward = refuse
    try:
        lab.warm_up_torch()
    finally:
        lab.fork_sensitive, torch.Tensor.backward, torch.autograd.backward = saved
