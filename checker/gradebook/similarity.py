"""Pairs of identical or near-identical submissions, for a person to look at (``kata grade``'s class page and
``similar.csv``). A review aid only: it never changes a grade.

Two files are compared as token streams (Python's own tokenizer), so comments, blank lines, spacing and the
layout of a notebook's cells make no difference; names, strings and numbers do. Each stream is cut into
k-grams of ``K`` tokens, each k-gram hashed, and a fingerprint kept by winnowing (Schleimer, Wilkerson and
Aiken, 2003, as MOSS does): the least hash of every window of ``W`` consecutive k-grams. Pairs are found
through an index from fingerprint to files, so the cost grows with the files' length, not with the product
of two lengths: two 12,000-line files cost what tokenizing them costs. A fingerprint found in more than
``COMMON`` files (or half the class, if more) is left out, as MOSS's ``-m`` does: it is the course's, not
a student's.

With a base (``--base``: the starter every file began from), every k-gram of the base is taken out of each
file first, as MOSS's ``-b`` does: what is compared is what each student changed, so files written from one
starter are no longer alike by nature and planted copies top the list; a pair is then listed from
``NEAR_CHANGED`` and at least ``MIN_SHARED`` fingerprints of their own in common.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

NEAR = 0.95
"""The least similarity (0-1) listed."""

_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def token_stream(source: str) -> list[str]:
    """The source's tokens without comments and layout (``INDENT``/``DEDENT``/``NEWLINE`` kept as markers, not
    their spacing); text the tokenizer refuses is split on whitespace instead."""
    tokens: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in _DROPPED:
                continue
            if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE):
                tokens.append(tokenize.tok_name[tok.type])
            else:
                tokens.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source.split()
    return tokens


@dataclass(frozen=True)
class SimilarPair:
    first: str
    second: str
    similarity: float
    """The Jaccard index of the two files' fingerprints (1.0: identical token streams)."""
    shared: int = 0
    """How many fingerprints the two files have in common (of their own, with a base)."""

    @property
    def identical(self) -> bool:
        return self.similarity >= 1.0


K = 8
"""Tokens per k-gram: a passage shorter than this is never matched."""
W = 6
"""Winnowing window: any passage of ``K + W - 1`` tokens shared by two files shares at least one fingerprint."""
COMMON = 10
"""A fingerprint in more files than this (or half the class, if more) is the course's, and left out."""
NEAR_CHANGED = 0.5
"""With a base: the least similarity listed of what two files changed."""
MIN_SHARED = 4
"""With a base: the fewest fingerprints of their own two files must share to be listed (one same small fix is
not a copy)."""


def _hashes(tokens: Sequence[str]) -> list[int]:
    """The hash of each k-gram of ``tokens`` (stable from run to run: BLAKE2b, 8 bytes)."""
    if len(tokens) < K:
        return [_hash(" ".join(tokens))] if tokens else []
    return [_hash("\0".join(tokens[i:i + K])) for i in range(len(tokens) - K + 1)]


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def winnow(hashes: Sequence[int]) -> set[int]:
    """The fingerprints of a list of k-gram hashes: the least (rightmost, on ties) of every window of ``W``."""
    if len(hashes) <= W:
        return {min(hashes)} if hashes else set()
    chosen, at = set(), -1
    for start in range(len(hashes) - W + 1):
        if at < start:  # the last minimum left the window: find the new one
            window = hashes[start:start + W]
            low = min(window)
            at = start + W - 1 - window[::-1].index(low)
            chosen.add(low)
        elif hashes[start + W - 1] <= hashes[at]:
            at = start + W - 1
            chosen.add(hashes[at])
    return chosen


def fingerprints(tokens: Sequence[str], base: set[int] | None = None) -> set[int]:
    """The winnowed fingerprints of a token stream (``token_stream``), those of its k-grams found in ``base``
    (every k-gram hash of the starter) left out."""
    hashes = _hashes(tokens)
    if base:
        hashes = [h for h in hashes if h not in base]
    return winnow(hashes)


def _shared_counts(prints: dict[str, set[int]]) -> dict[tuple[str, str], int]:
    """(a, b) -> how many fingerprints the two files share, through an index from fingerprint to the files that
    hold it (names in sorted order); a fingerprint in more than ``COMMON`` files (or half of them) is left out."""
    from collections import Counter

    index: dict[int, list[str]] = {}
    for name in sorted(prints):
        for fp in prints[name]:
            index.setdefault(fp, []).append(name)
    common = max(COMMON, len(prints) // 2)
    shared: Counter = Counter()
    for holders in index.values():
        if 1 < len(holders) <= common:
            for i, a in enumerate(holders):
                for b in holders[i + 1:]:
                    shared[a, b] += 1
    return shared


def _pair(a: str, b: str, shared: int, prints: dict[str, set[int]], same: bool, near: float) -> SimilarPair | None:
    """The pair, when its streams are the same (``same``) or its fingerprints match at ``near`` or more."""
    if same:
        return SimilarPair(a, b, 1.0, shared)
    union = len(prints[a] | prints[b])
    ratio = shared / union if union else 0.0
    return SimilarPair(a, b, min(ratio, 0.9999), shared) if ratio >= near else None


def similar_pairs(sources: dict[str, str], near: float | None = None, base: str | None = None) -> list[SimilarPair]:
    """Every pair of ``sources`` (submission name -> its code) whose token streams are identical or whose
    fingerprints match at ``near`` or more (default ``NEAR``; with a ``base``, ``NEAR_CHANGED`` on what each
    changed from it), most similar first, then by name."""
    names = sorted(sources)
    starter = set(_hashes(token_stream(base))) if base else None
    near = near if near is not None else (NEAR_CHANGED if base else NEAR)
    streams = {name: token_stream(sources[name]) for name in names}
    prints = {name: fingerprints(streams[name], starter) for name in names}
    digests = {name: hashlib.sha256("\0".join(streams[name]).encode("utf-8", "surrogatepass")).digest()
               for name in names}
    least = MIN_SHARED if base else 1
    pairs = [pair for (a, b), n in _shared_counts(prints).items() if n >= least
             and (pair := _pair(a, b, n, prints, digests[a] == digests[b], near)) is not None]
    return sorted(pairs, key=lambda p: (-p.similarity, -p.shared, p.first, p.second))


def similar_csv(pairs: Sequence[SimilarPair]) -> str:
    """``similar.csv``: ``first, second, similarity, identical``, a row per pair."""
    import csv

    from checker.engine.formats import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["first", "second", "similarity", "identical"])
    for p in pairs:
        identical = "true" if p.identical else "false"
        writer.writerow([csv_cell(p.first), csv_cell(p.second), f"{p.similarity:.4f}", identical])
    return buf.getvalue()
