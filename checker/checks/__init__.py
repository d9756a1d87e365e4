"""The check battery. Each family module registers its checks on import."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module

from checker.checks.base import FAMILIES, REGISTRY, Check, Verdict, check, failed, passed

for _family in FAMILIES:  # one module per family, named after it; importing it registers its checks
    import_module(f"checker.checks.{_family}")

__all__ = ["FAMILIES", "REGISTRY", "Check", "Verdict", "check", "failed", "passed", "ordered_ids"]


def ordered_ids(ids: Sequence[str] | None = None, *, device: str = "cpu", track=None) -> list[str]:
    """Check ids in catalogue order (by family, then as registered), for ``device`` and ``track``
    (a ``checker.setting.tracks.Track``; default: the moons track, protocol v1).

    Unknown ids raise KeyError naming them; known ids that do not apply to the track are left out.
    """
    if track is None:
        from checker.setting.tracks import get_track

        track = get_track()
    unknown = [i for i in ids or () if i not in REGISTRY]
    if unknown:
        raise KeyError(", ".join(unknown))
    kind = device.split(":")[0]
    chosen = [c for c in REGISTRY.values()
              if (ids is None or c.id in ids) and kind in c.devices and track.runs(c)]
    return [c.id for c in sorted(chosen, key=lambda c: FAMILIES.index(c.family))]
