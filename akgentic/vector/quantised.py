"""An int8 copy of a large collection that narrows a search to a few exact candidates.

An exact scan of 100,000 x 384 float32 rows reads 154 MB and is bound by memory
bandwidth. The int8 codes of the same rows are a quarter of that, and SimSIMD's int8
dot products (VNNI where the processor has it) scan them at about the speed memory
delivers them. Each row ``x`` is coded on its own scale, ``s = max|x| / 127`` and
``c = rint(x / s)``, and so is the query ``q`` (``t``, ``d``). With ``x' = s * c`` and
``q' = t * d``, the approximate score ``x' . q'`` differs from the exact ``x . q`` by
``(x - x') . q + x' . (q - q')``, at most ``|x - x'| + |x'| * |q - q'|`` (Cauchy-Schwarz,
``q`` being a unit vector). Both norms of a row are kept beside its codes; the
query's is computed per search. The float32 rounding of both scores is covered by
:data:`_ABSOLUTE_SLACK`.

That bound makes the shortcut exact, not approximate: the ``k`` rows that score best
on codes have exact scores of at least their approximate score minus their bound,
so the ``k``-th best exact score is at least the smallest of those (the floor). Any
row whose approximate score plus its bound reaches the floor is a candidate, and
only the candidates are scored exactly. Every row of the exact top ``k`` is among
them, so the re-ranked result is the exact scan's result. On embeddings the
candidates are a handful of rows; when they are not (a bound too loose for a
crowded neighbourhood), :func:`certified_candidates` says so and the caller scans
exactly. Without SimSIMD (:func:`available` is False) the caller always scans
exactly: numpy has no SIMD int8 product, and its int8 to float32 cast alone costs
more than the float32 scan.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "QUANTISE_FROM_ROWS",
    "Approximation",
    "Codes",
    "approximate_scores",
    "available",
    "certified_candidates",
    "error_bounds",
    "quantise",
]

#: Collections with at least this many rows are searched through their int8 codes;
#: below, the exact scan is as fast and the codes would only cost memory.
QUANTISE_FROM_ROWS = 20_000

# The float32 rounding of an exact score (unit vectors: at most d * 2**-24), of an
# approximate one and of the norms in the bound, with a wide margin.
_ABSOLUTE_SLACK = 1e-4
# Past this share of the rows, scoring the candidates one by one is no cheaper than
# the exact scan.
_MAX_CANDIDATE_SHARE = 8

_kernel: Any = None
_looked_up = False


def available() -> bool:
    """True when SimSIMD is installed (the int8 scan needs its kernels)."""
    global _kernel, _looked_up
    if not _looked_up:
        try:
            _kernel = importlib.import_module("simsimd")
        except ImportError:
            _kernel = None
        _looked_up = True
    return _kernel is not None


@dataclass(frozen=True)
class Codes:
    """Rows as int8 ``codes`` (rows x dimension) and, per row, its ``scales``, the
    norm of its coding error ``|x - x'|`` (``errors``) and that of ``x'`` (``norms``).
    """

    codes: NDArray[np.int8]
    scales: NDArray[np.float32]
    errors: NDArray[np.float32]
    norms: NDArray[np.float32]


@dataclass(frozen=True)
class Approximation:
    """A query's approximate scores (``-inf`` where the caller hides a row) and the
    norm of the query's own coding error."""

    scores: NDArray[np.float32]
    query_error: float


def quantise(rows: NDArray[np.float32]) -> Codes:
    """The int8 codes of ``rows`` (each of non-zero norm), on a scale per row."""
    peaks = np.abs(rows).max(axis=1)
    scales = (peaks / np.float32(127)).astype(np.float32)
    # A zero row has no direction and is refused before it gets here; guard anyway.
    safe = np.where(scales > 0, scales, np.float32(1))
    codes = np.divide(rows, safe[:, None], dtype=np.float32)
    np.rint(codes, out=codes)
    np.clip(codes, -127, 127, out=codes)
    # float32 throughout: its rounding of the norms is far inside _ABSOLUTE_SLACK.
    decoded = codes * scales[:, None]
    norms = np.sqrt(np.einsum("ij,ij->i", decoded, decoded))
    decoded -= rows
    errors = np.sqrt(np.einsum("ij,ij->i", decoded, decoded))
    return Codes(codes.astype(np.int8), scales, errors, norms)


def approximate_scores(rows: Codes, query: NDArray[np.float32]) -> Approximation:
    """``x' . q'`` of every row, for a unit ``query``."""
    if not available():
        raise RuntimeError("the int8 scan needs simsimd, which is not installed")
    coded = quantise(query[None, :])
    dots = _kernel.cdist(
        coded.codes, rows.codes, metric="dot", dtype="int8", threads=1, out_dtype="float32"
    )
    # Integer dot products: exact in float32 up to d = 1040, past that rounded far
    # inside _ABSOLUTE_SLACK.
    scores = np.asarray(dots, dtype=np.float32).reshape(-1)
    scores *= rows.scales
    scores *= coded.scales[0]
    return Approximation(scores, float(coded.errors[0]))


def error_bounds(rows: Codes, where: NDArray[np.intp], query_error: float) -> NDArray[np.float32]:
    """How far the approximate scores of the rows at ``where`` may be from the exact ones."""
    bounds = rows.norms[where] * np.float32(query_error)
    bounds += rows.errors[where]
    bounds += np.float32(_ABSOLUTE_SLACK)
    return bounds


def certified_candidates(rows: Codes, found: Approximation, k: int) -> NDArray[np.intp] | None:
    """The rows that may be in the exact top ``k``, ascending; None when too many.

    None also when fewer than ``k`` rows are searchable (the caller then scans exactly).
    """
    scores = found.scores
    size = scores.shape[0]
    if k >= size:
        return None
    best = np.argpartition(scores, size - k)[size - k :]
    floor = float(np.min(scores[best] - error_bounds(rows, best, found.query_error)))
    if not np.isfinite(floor):
        return None
    widest = float(rows.errors.max()) + float(rows.norms.max()) * found.query_error
    coarse = np.flatnonzero(scores >= np.float32(floor - widest - _ABSOLUTE_SLACK))
    if coarse.size * _MAX_CANDIDATE_SHARE > size:
        return None
    reach = scores[coarse] + error_bounds(rows, coarse, found.query_error)
    return coarse[reach >= floor]
