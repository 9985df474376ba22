"""formats/sets.py: sorted_unique gives what np.unique gives (values and dtype) for integer arrays."""

from __future__ import annotations

import numpy as np
import pytest
from quiver.formats.sets import sorted_unique


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 1000])
def test_sorted_unique_is_np_unique(dtype, n):
    values = np.random.default_rng(n).integers(0, 50, n).astype(dtype)
    values[::3] = values[0] if n else values[::3]
    got, want = sorted_unique(values), np.unique(values)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 500])
def test_sorted_unique_columns_is_np_unique_axis_1(rows, n):
    from quiver.formats.sets import sorted_unique_columns

    values = np.random.default_rng(n).integers(0, 4, (rows, n)).astype(np.int64)
    got, want = sorted_unique_columns(values), np.unique(values, axis=1)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
