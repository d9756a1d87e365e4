"""Pairs of identical or near-identical submissions, for a person to look at (``kata grade``'s class page and
``similar.csv``). A review aid only: it never changes a grade.

Two files are compared as token streams (Python's own tokenizer), so comments, blank lines, spacing and the
layout of a notebook's cells make no difference; names, strings and numbers do. Identical streams are
listed first, then pairs whose streams, cut into logical lines, match at ``NEAR`` or more (difflib's ratio
over the lines: a line is one element, which keeps a class of 200 within seconds). A quick bound on the
ratio skips most unlike pairs before difflib runs. Files written from one starter are alike by nature: the
list says which pairs to read, a person decides what they mean.
"""

from __future__ import annotations

import difflib
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


_BREAKS = ("NEWLINE", "INDENT", "DEDENT")


def token_lines(tokens: Sequence[str]) -> list[str]:
    """The token stream cut after each ``NEWLINE``/``INDENT``/``DEDENT``: one string per logical line."""
    lines, current = [], []
    for tok in tokens:
        current.append(tok)
        if tok in _BREAKS:
            lines.append(" ".join(current))
            current = []
    if current:
        lines.append(" ".join(current))
    return lines


@dataclass(frozen=True)
class SimilarPair:
    first: str
    second: str
    similarity: float
    """difflib's ratio of the two token streams' lines (1.0: identical streams)."""

    @property
    def identical(self) -> bool:
        return self.similarity >= 1.0


def similar_pairs(sources: dict[str, str], near: float = NEAR) -> list[SimilarPair]:
    """Every pair of ``sources`` (submission name -> its code) whose token streams are identical or match at
    ``near`` or more, most similar first, then by name."""
    names = sorted(sources)
    streams = {name: token_stream(sources[name]) for name in names}
    digests = {name: hashlib.sha256("\0".join(streams[name]).encode("utf-8")).hexdigest() for name in names}
    lines = {name: token_lines(streams[name]) for name in names}
    pairs = []
    for i, a in enumerate(names):
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(lines[a])
        for b in names[i + 1:]:
            if not streams[a] or not streams[b]:
                continue
            if digests[a] == digests[b]:
                pairs.append(SimilarPair(a, b, 1.0))
                continue
            matcher.set_seq1(lines[b])
            if matcher.real_quick_ratio() < near or matcher.quick_ratio() < near:
                continue
            ratio = matcher.ratio()
            if ratio >= near:
                pairs.append(SimilarPair(a, b, min(ratio, 0.9999)))
    return sorted(pairs, key=lambda p: (-p.similarity, p.first, p.second))


def similar_csv(pairs: Sequence[SimilarPair]) -> str:
    """``similar.csv``: ``first, second, similarity, identical``, a row per pair."""
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["first", "second", "similarity", "identical"])
    for p in pairs:
        writer.writerow([p.first, p.second, f"{p.similarity:.4f}", "true" if p.identical else "false"])
    return buf.getvalue()
