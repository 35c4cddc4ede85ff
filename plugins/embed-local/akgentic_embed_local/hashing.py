"""``hashing``: signed feature hashing of normalised word uni- and bigrams.

Standard library only and deterministic: the same text gives the same vector on
every machine and Python version (blake2b, not ``hash()``). It measures *lexical*
overlap, not meaning: "car" and "automobile" share nothing. It is for tests, demos
and offline use, where a real model is not at hand.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import unicodedata

from akgentic.plugin_api import clean_text

__all__ = ["MAX_INPUT_CHARS", "HashingEmbedder"]

MAX_INPUT_CHARS = 8000
_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Feature-hashing embedder of any width (default 256)."""

    name = "hashing"

    def __init__(self, model: str = "hashing", dimension: int = 256, timeout_s: float = 0.0):
        if dimension < 1:
            raise ValueError("dimension must be at least 1")
        self.model = model
        self.dimension = dimension

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text; a text without tokens gets a fixed unit vector."""
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        folded = unicodedata.normalize("NFKC", clean_text(text, MAX_INPUT_CHARS)).casefold()
        tokens = _TOKEN.findall(folded)
        features = tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
        vector = [0.0] * self.dimension
        if not features:
            features = ["\x00empty"]  # a direction of its own: zero vectors cannot be stored
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            index = value % self.dimension
            vector[index] += 1.0 if (value >> 63) & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:  # every feature cancelled out
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]
