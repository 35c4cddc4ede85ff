"""The seed's path of the hybrid rule; the rule itself is :mod:`akgentic.vector.hybrid`."""

from akgentic.vector.hybrid import (
    DEFAULT_ALPHA,
    OVERFETCH,
    HybridResult,
    fold,
    fuse,
    hybrid_search,
    keyword_match,
    normalise_scores,
    semantic_scores,
)

__all__ = [
    "DEFAULT_ALPHA",
    "OVERFETCH",
    "HybridResult",
    "fold",
    "fuse",
    "hybrid_search",
    "keyword_match",
    "normalise_scores",
    "semantic_scores",
]
