"""Fixtures for the exploration tests; the log builders live in explore_logs.py."""

from __future__ import annotations

import pytest
from explore_logs import listing_5_3_log, rma_log, saxpy_tofrom_log


@pytest.fixture
def saxpy_log(tmp_path):
    return saxpy_tofrom_log(tmp_path / "saxpy.arrow")


@pytest.fixture
def listing_log(tmp_path):
    return listing_5_3_log(tmp_path / "listing53.arrow")


@pytest.fixture
def mpi_log(tmp_path):
    return rma_log(tmp_path / "rma.arrow")
