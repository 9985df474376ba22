"""Sorted unique values of an integer array (and columns of a 2-D one), without `np.unique`.

Why: numpy 2's plain `np.unique(a)` imports numpy.ma on its first call (~10 ms of a small run's
`trace record`) and hashes every value, which on the columns and PC lists finalize and the writer
reduce (a few distinct values among many rows) is several times slower than sorting them.
"""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """What np.unique(values) returns for a 1-D integer array."""
    s = np.sort(np.asarray(values).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def sorted_unique_columns(values: np.ndarray) -> np.ndarray:
    """What np.unique(values, axis=1) returns for a 2-D integer array: its distinct columns, in
    lexicographic order (first row first). (`trace analyze` of a small MPI log: numpy.ma not imported.)"""
    a = np.asarray(values)
    if a.shape[1] < 2:
        return a.copy()
    s = a[:, np.lexsort(a[::-1])]
    keep = np.empty(s.shape[1], dtype=bool)
    keep[0] = True
    np.any(s[:, 1:] != s[:, :-1], axis=0, out=keep[1:])
    return s[:, keep]
