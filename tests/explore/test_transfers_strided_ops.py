"""The transfers replay takes the blocks of a strided ACCESS row (and of its planes) a run at a time
(replay/transfers/redundant.py ``_strided_op``): the same results as the row written block by block.

Why: the runs must stop where a block alone would be handled differently: at the end of a plane, of a
live mapping (a block crossing it is cut there), of a mapped segment, where a newer mapping takes a
block, where no mapping holds one; the log below has each, on the device and on the host, in granules
of 4 bytes (a 4-byte access), and compares every per-transfer count with its block-by-block twin.
"""

from __future__ import annotations

import numpy as np
import pytest
from quiver.formats import ConstructKind, DataOpKind, EventKind, LogBuilder, MapType
from quiver.formats.blocks import expand_blocks
from quiver.formats.reader import read_log
from quiver.formats.writer import write_log
from quiver.replay.registry import CheckOptions
from quiver.replay.transfers.advice import check_transfers
from quiver.replay.transfers.redundant import replay_transfers

Z, A, B = 0x20000, 0x20400, 0x40000     # z and a adjacent on the host (one segment), b apart
DEV, DEV2 = 0x800000, 0x900000
SIZE = 1024
SITE = ("s.c", 1, "main")


def strided_log() -> LogBuilder:
    b = LogBuilder(program="strided")
    for host in (Z, A, B):
        b.alloc(host, SIZE, site=SITE)
        b.access(host, SIZE, write=True, site=SITE)
    c = b.construct_begin(ConstructKind.TARGET, site=("s.c", 5, "main"))
    for i, (name, host, dev) in enumerate((("z", Z, DEV), ("a", A, DEV + 0x1000), ("b", B, DEV2))):
        b.map_clause(c, name, host, SIZE, MapType.TO | MapType.FROM, site=("s.c", 5, "main"), text=f"{name}[0:256]", index=i)
        b.data_op(DataOpKind.ALLOC, host, dev, SIZE, construct=c, var=name)
        b.data_op(DataOpKind.TRANSFER_TO, host, dev, SIZE, construct=c, var=name)
    b.kernel(c)
    dev = {"site": ("s.c", 7, "main"), "device": 0, "construct": c}
    # a colour of z in planes (8 bytes every 16), its last planes beyond z's device copy: no mapping holds them
    b.access(DEV + 8, 8, **dev, stride=16, blocks=12, planes=6, plane_stride=192, width=8)
    # 4-byte writes every 12 bytes across the end of z's copy (a block cut there, the rest in no mapping)
    b.access(DEV + SIZE - 100, 4, write=True, **dev, stride=12, blocks=20, width=4)
    # 24-byte blocks, one straddling the end of a's copy
    b.access(DEV + 0x1000 + SIZE - 200, 24, **dev, stride=40, blocks=8, width=8)
    # a newer mapping (an associate of a's last 64 bytes to b) takes a later block of a run in a's copy
    b.data_op(DataOpKind.ASSOCIATE, B + 512, DEV + 0x1000 + 960, 64, construct=c, var="b")
    b.access(DEV + 0x1000 + 700, 8, write=True, **dev, stride=32, blocks=4, planes=3, plane_stride=128, width=8)
    b.data_op(DataOpKind.DISASSOCIATE, B + 512, DEV + 0x1000 + 960, 64, construct=c, var="b")
    # b read in planes, then half of it written
    b.access(DEV2, 4, **dev, stride=8, blocks=16, planes=8, plane_stride=128, width=4)
    b.access(DEV2 + 4, 4, write=True, **dev, stride=8, blocks=64, width=4)
    b.data_op(DataOpKind.TRANSFER_FROM, A, DEV + 0x1000, SIZE, construct=c, var="a")
    b.data_op(DataOpKind.TRANSFER_FROM, B, DEV2, SIZE, construct=c, var="b")
    # host: strided reads over z and a (one segment), over a's end (beyond: not mapped), writes in b
    b.access(Z + 16, 8, site=("s.c", 9, "main"), stride=24, blocks=50, planes=3, plane_stride=1200, width=8)
    b.access(A + SIZE - 64, 8, site=("s.c", 10, "main"), stride=16, blocks=10, width=8)
    b.access(B, 4, write=True, site=("s.c", 11, "main"), stride=12, blocks=40, planes=2, plane_stride=480, width=4)
    b.data_op(DataOpKind.TRANSFER_TO, B, DEV2, SIZE, construct=c, var="b")
    b.access(DEV2 + 8, 8, **dev, stride=16, blocks=30, width=8)
    for name, host, d in (("z", Z, DEV), ("a", A, DEV + 0x1000), ("b", B, DEV2)):
        b.data_op(DataOpKind.DELETE, host, d, SIZE, construct=c, var=name)
    b.construct_end(c)
    return b


def block_by_block(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The log with every strided ACCESS row (and every row of planes) as one plain row per block."""
    acc = (cols["kind"] == int(EventKind.ACCESS)) & (cols["aux2"] >= 2)
    idx = np.flatnonzero(acc)
    row, lo, _ = expand_blocks(cols["addr"][idx], cols["size"][idx], cols["addr2"][idx], cols["aux2"][idx],
                               cols["name"][idx], cols["id2"][idx])
    per_row = np.ones(len(acc), dtype=np.int64)
    per_row[idx] = np.bincount(row, minlength=len(idx))
    origin = np.repeat(np.arange(len(acc)), per_row)
    out = {c: v[origin].copy() for c, v in cols.items()}
    at = np.flatnonzero(acc[origin])          # the blocks, in expand_blocks' order (rows, then blocks)
    out["addr"][at] = lo.astype(out["addr"].dtype)
    for c in ("addr2", "aux2"):
        out[c][at] = 0
    for c in ("name", "id2"):
        out[c][at] = -1
    return out


COUNTS = ["op", "variable", "bytes", "used_bytes", "unused_bytes", "duplicate_bytes", "round_trip_bytes",
          "wasted_bytes", "held_bytes", "reason", "first_wasted"]


@pytest.mark.parametrize("jit", ["always", "never"])
def test_runs_of_blocks_count_as_the_blocks_one_by_one(tmp_path, monkeypatch, jit):
    monkeypatch.setenv("QUIVER_JIT", jit)
    b = strided_log()
    cols = b.columns()
    run = dict(b.run, threads=1)
    strided = read_log(write_log(tmp_path / "strided.arrow", cols, strings=b.strings, locations=b.locations, run=run))
    wide = block_by_block(cols)
    assert len(wide["kind"]) > len(cols["kind"]) + 500
    blocks = read_log(write_log(tmp_path / "blocks.arrow", wide, strings=b.strings, locations=b.locations, run=run))
    got, want = replay_transfers(strided), replay_transfers(blocks)
    assert got.transfers.select(COUNTS).to_dicts() == want.transfers.select(COUNTS).to_dicts()
    assert got.allocations["touched"].to_list() == want.allocations["touched"].to_list()
    # every kind of waste is in it, so a slip shows
    t = got.transfers
    assert (t["unused_bytes"] > 0).any() and (t["round_trip_bytes"] > 0).any() and (t["used_bytes"] > 0).sum() == 5
    found = [(f.kind.value, f.variable, f.bytes, f.message, f.fix) for f in check_transfers(strided, CheckOptions())]
    assert found and found == [(f.kind.value, f.variable, f.bytes, f.message, f.fix)
                               for f in check_transfers(blocks, CheckOptions())]


def test_a_red_black_sweep_is_a_few_ops(tmp_path):
    """The point of the runs: a colour of a 256 x 256 grid in planes, 32768 blocks, replays in a few
    hundred slot operations rather than one per block (counted through the op buffer's high-water mark)."""
    from quiver.replay.transfers import redundant

    b = LogBuilder(program="rb")
    n = 256
    host, dev = 0x100000, 0x10000000
    b.alloc(host, 8 * n * n, site=SITE)
    c = b.construct_begin(ConstructKind.TARGET, site=("s.c", 5, "main"))
    b.map_clause(c, "u", host, 8 * n * n, MapType.TO, site=("s.c", 5, "main"), text="u[0:n*n]")
    b.data_op(DataOpKind.ALLOC, host, dev, 8 * n * n, construct=c, var="u")
    b.data_op(DataOpKind.TRANSFER_TO, host, dev, 8 * n * n, construct=c, var="u")
    b.kernel(c)
    for color in (0, 1):     # rows 2k and 2k + 1 start at 8 x color and 8 x (1 - color): two rows of planes
        for r in (0, 1):
            b.access(dev + 8 * n * r + 8 * ((r + color) % 2), 8, device=0, construct=c, site=("s.c", 7, "main"),
                     stride=16, blocks=n // 2, planes=n // 2, plane_stride=16 * n, width=8)
    b.data_op(DataOpKind.DELETE, host, dev, 8 * n * n, construct=c, var="u")
    b.construct_end(c)
    log = read_log(write_log(tmp_path / "rb.arrow", b.columns(), strings=b.strings, locations=b.locations,
                             run=dict(b.run, threads=1)))
    seen: list[int] = []
    decode = redundant._decode

    def counting(*args):
        out = decode(*args)
        seen.append(int(out[0]))
        return out

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(redundant, "_decode", counting)
    try:
        t = replay_transfers(log).transfers
    finally:
        monkeypatch.undo()
    assert t["used_bytes"].to_list() == [8 * n * n] and t["unused_bytes"].to_list() == [0]
    assert sum(seen) < 4 * n + 10
