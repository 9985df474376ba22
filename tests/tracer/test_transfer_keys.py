"""Which transfers get an inferred ASSOCIATE (qv_omp.c associate_if_unknown): only one to device memory
no alloc produced (a `declare target` variable's copy in the device image), once; never a transfer of
a whole mapped section (the key of its device copy: found without scanning the table since
2026-11-29) nor one into the middle of a mapped array (found by the scan over the copies' ranges).

tests/programs/omp/transfer_keys.c: `table` is declare target and updated twice; `a` and `b` are mapped
by 20 kernels, `a[16:8]` updated inside a `target data` region.
"""

from __future__ import annotations

import pytest
from quiver.formats import DataOpKind, EventKind, read_log

pytestmark = pytest.mark.clang


def _ops(log, op: DataOpKind):
    cols = log.columns()
    sel = (cols["kind"] == EventKind.DATA_OP) & (cols["op"] == op)
    return [(log.strings[n] if n >= 0 else None, int(a)) for n, a in zip(cols["name"][sel], cols["aux"][sel], strict=True)]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_only_the_declare_target_copy_is_associated_once(record_c, opt):
    run = record_c("omp/transfer_keys.c", opt=opt)
    assert run.returncode == 0, run.stderr
    log = read_log(run.log)
    assert _ops(log, DataOpKind.ASSOCIATE) == [("table", 1)]
    to_device = [name for name, _ in _ops(log, DataOpKind.TRANSFER_TO)]
    assert to_device.count("table") == 2 and to_device.count("a") == 20 + 2 and to_device.count("b") == 20
    assert len(_ops(log, DataOpKind.ALLOC)) == len(_ops(log, DataOpKind.DELETE)) == 41
