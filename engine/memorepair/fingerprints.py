"""What counts as a copy of erased text: its fingerprints, and a matcher that finds them.

A fingerprint is the SHA-256 (truncated) of an 8-word phrase of the text (of the whole text
when shorter, from 3 words) or of an identifier-like token (a word of 5+ characters holding
a digit: booking references, passport numbers), so a copy is found without keeping the text
itself. Pure functions: the erasure records them on its event, the audit scans the graph
with them, and the local server's purge scans its files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

PHRASE = 8
MIN_PHRASE = 3

_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"\S+")


def digest(text: str) -> str:
    """SHA-256 of a text, truncated to 32 hex digits (what a fingerprint holds)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys and values), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def _phrases(words: list[str], size: int) -> Iterator[str]:
    for start in range(len(words) - size + 1):
        yield " ".join(words[start : start + size])


def _identifiers(text: str) -> Iterator[str]:
    for token in _TOKEN.findall(text):
        token = token.strip(".,;:!?()[]{}\"'").lower()
        if len(token) >= 5 and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            yield token


def fingerprints(texts: Iterable[str]) -> list[str]:
    """The fingerprints of texts to erase: `<n>:<hash>` of phrases, `id:<hash>` of tokens."""
    found: set[str] = set()
    for text in texts:
        words = [w.lower() for w in _WORD.findall(text)]
        size = min(PHRASE, len(words))
        if size >= MIN_PHRASE:
            found.update(f"{size}:{digest(p)}" for p in _phrases(words, size))
        found.update(f"id:{digest(t)}" for t in _identifiers(text))
    return sorted(found)


@dataclass(frozen=True)
class Matcher:
    """Finds erased text in any string by its fingerprints (never by the text itself)."""

    prints: frozenset[str]
    sizes: frozenset[int]

    @classmethod
    def of(cls, prints: Iterable[str]) -> Matcher:
        found = frozenset(prints)
        sizes = frozenset(int(p.split(":")[0]) for p in found if not p.startswith("id:"))
        return cls(found, sizes)

    def hits(self, value: Any) -> bool:
        """Whether a value (a string, or any JSON value) quotes the erased text."""
        return any(self._hit(text) for text in strings_in(value))

    def _hit(self, text: str) -> bool:
        if any(f"id:{digest(t)}" in self.prints for t in _identifiers(text)):
            return True
        words = [w.lower() for w in _WORD.findall(text)]
        return any(
            f"{size}:{digest(p)}" in self.prints
            for size in self.sizes
            for p in _phrases(words, size)
        )
