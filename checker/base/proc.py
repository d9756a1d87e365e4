"""What Linux says of this process in ``/proc/self/status`` (elsewhere, nothing)."""

from __future__ import annotations


def proc_status() -> dict[str, str]:
    """The fields of ``/proc/self/status``, name -> value (whitespace stripped); {} where there is no such file."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            return {name: value.strip() for name, sep, value in (line.partition(":") for line in fh) if sep}
    except OSError:
        return {}
