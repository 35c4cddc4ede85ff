"""The engine's scan runs BLAS on one thread and leaves the process's setting as it was."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from akgentic.vector import blas_threads


def _threads() -> list[int]:
    return [get() for get, _ in blas_threads._get_controls()]


needs_openblas = pytest.mark.skipif(
    not blas_threads._get_controls(), reason="numpy's BLAS here exposes no thread control"
)


@needs_openblas
def test_inside_the_block_blas_uses_one_thread_and_after_it_the_old_setting() -> None:
    before = _threads()
    with blas_threads.single_blas_thread():
        assert _threads() == [1] * len(before)
        scores = np.ones(8, np.float32) @ np.ones((8, 16), np.float32)
    assert _threads() == before
    assert scores.tolist() == [8.0] * 16


@needs_openblas
def test_overlapping_scans_restore_the_setting_only_when_the_last_one_leaves() -> None:
    before = _threads()
    first_in = threading.Event()
    release = threading.Event()
    seen: list[list[int]] = []

    def scan() -> None:
        with blas_threads.single_blas_thread():
            first_in.set()
            release.wait(10)
            seen.append(_threads())

    worker = threading.Thread(target=scan)
    worker.start()
    assert first_in.wait(10)
    with blas_threads.single_blas_thread():
        release.set()
        worker.join(10)
        seen.append(_threads())
    assert seen == [[1] * len(before)] * 2
    assert _threads() == before


def test_the_limit_is_a_no_op_where_no_openblas_is_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process without OpenBLAS, simulated: this machine's numpy maps OpenBLAS, so the
    lookup is replaced by one finding nothing. Not verified: a real numpy built on
    another BLAS (MKL, Accelerate), which no package here provides."""
    monkeypatch.setattr(blas_threads, "_controls", None)
    monkeypatch.setattr(blas_threads, "_mapped_openblas", lambda: [])
    with blas_threads.single_blas_thread():
        total = float(np.ones(4) @ np.ones(4))
    assert total == 4.0
    assert blas_threads._get_controls() == []
