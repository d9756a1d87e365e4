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
