"""Run one BLAS call on a single thread: the in-memory engine's scans.

A search is one matrix-vector product, bound by memory bandwidth. OpenBLAS hands it
to every core it has; on a small machine that other processes keep busy, waking the
second thread costs more than the scan (measured on a shared 2-core machine: 7.8 ms
threaded against 1.7 ms on one thread at 10,000 x 384; idle, 0.2 against 0.4 ms).
So the engine scans on one thread, leaving the process's own BLAS setting as it was
for everything else.

numpy offers no API for this; the OpenBLAS it loaded exports ``*_set_num_threads``.
The library is looked up among the shared objects already mapped into the process
(never loaded anew), on Linux only. Anywhere else, or with another BLAS, the limit
is a no-op and scans run as BLAS decides.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator

__all__ = ["single_blas_thread"]

# (getter, setter) symbol names: numpy's wheels bundle scipy-openblas (ILP64, prefixed);
# a distribution's numpy links the plain OpenBLAS.
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)

_Controls = tuple[Callable[[], int], Callable[[int], None]]
_controls: list[_Controls] | None = None
_lookup = threading.Lock()
# Concurrent scans share one limit: the first in sets it, the last out restores the
# setting the first one found (a count, so scans never wait on each other).
_switch = threading.Lock()
_inside = 0
_saved: list[int] = []


def _mapped_openblas() -> list[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.readlines()
    except OSError:
        return []
    paths = {line.split()[-1] for line in lines if "openblas" in line.lower()}
    return sorted(p for p in paths if p.startswith("/") and ".so" in p)


def _find() -> list[_Controls]:
    found: list[_Controls] = []
    for path in _mapped_openblas():
        try:
            library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        for getter, setter in _SYMBOLS:
            get = getattr(library, getter, None)
            put = getattr(library, setter, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                found.append((get, put))
                break
    return found


def _get_controls() -> list[_Controls]:
    global _controls
    if _controls is None:
        with _lookup:
            if _controls is None:
                _controls = _find()
    return _controls


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Within the block, BLAS calls of this process use one thread (where possible)."""
    controls = _get_controls()
    if not controls:
        yield
        return
    global _inside, _saved
    with _switch:
        if _inside == 0:
            _saved = [get() for get, _ in controls]
            for _, put in controls:
                put(1)
        _inside += 1
    try:
        yield
    finally:
        with _switch:
            _inside -= 1
            if _inside == 0:
                for (_, put), value in zip(controls, _saved, strict=True):
                    put(value)
