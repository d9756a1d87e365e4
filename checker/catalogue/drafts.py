"""`--drafts` on `kata list` and `kata next`: the flag form of ``KATA_DRAFTS=1``.

Draft katas (texts incomplete, mutant not proven killed: the rules are in checker/catalogue/proofs.py) are
hidden from learners. An author who wants to try one as a learner passes --drafts: the drafts are shown
for that one command, exactly as with ``KATA_DRAFTS=1`` (the catalogue reads that variable whenever it
loads), and the environment is left as it was afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from checker.catalogue.proofs import DRAFTS_ENV


@contextmanager
def drafts_shown(show: bool = True) -> Iterator[None]:
    """Within the block, the catalogue includes drafts (when ``show``; else it is left as configured)."""
    if not show:
        yield
        return
    before = os.environ.get(DRAFTS_ENV)
    os.environ[DRAFTS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DRAFTS_ENV, None)
        else:
            os.environ[DRAFTS_ENV] = before
