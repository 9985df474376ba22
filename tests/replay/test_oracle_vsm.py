"""The C VSM kernel and the pure-Python oracle give identical detections on random builder logs.

The kernel keeps its shadow in blocks (uniform blocks updated in O(1), split blocks byte by byte);
the tests run it with blocks of 4 to 16 bytes as well as the default size, so random logs of a few
dozen bytes cross block edges, split and re-join blocks all the time. Strided ACCESS rows (format
version 2) are generated on both sides.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_detections
from quiver.formats import ConstructKind, DataOpKind, EventKind, LogBuilder, MapType, read_log
from quiver.replay.mapping.vsm import replay_log, run_vsm
from quiver.replay.mapping.vsm_layout import LOG_BLOCK

HOST_VARS = [(0x1000, 24), (0x1018, 16), (0x2000, 32)]   # two adjacent, one apart
DEV_BASES = [0x9000, 0x9040, 0x9028]
SITES = [("r.c", line, "main") for line in range(10, 16)]

host_range = st.tuples(st.integers(0, 2), st.integers(-4, 36), st.integers(1, 12))
dev_range = st.tuples(st.sampled_from([0, 0, 1, 1, 2]), st.integers(-4, 20), st.integers(1, 12))

device_no = st.sampled_from([0, 0, 0, 1])
map_op = st.tuples(st.just("map"), st.integers(0, 2), st.integers(0, 8), st.sampled_from([0, 0, 1, 1, 2]), st.integers(1, 24),
                   st.booleans(), device_no)
device_op = st.tuples(st.just("device"), dev_range, st.booleans(), st.integers(0, 5), device_no)
# stale patterns: copy in, write on one side, read on the other (with the CV released or not)
scenario_op = st.tuples(st.just("scenario"), st.integers(0, 2), st.integers(0, 8), st.sampled_from([0, 1, 2]),
                        st.integers(1, 16), device_no, st.booleans(), st.booleans())
# strided runs: (base, offset, block size, gap, blocks, write, site)
host_strided = st.tuples(st.just("hstride"), st.integers(0, 2), st.integers(-4, 30), st.integers(1, 6),
                         st.integers(1, 6), st.integers(2, 5), st.booleans(), st.integers(0, 5))
device_strided = st.tuples(st.just("dstride"), st.sampled_from([0, 0, 1, 1, 2]), st.integers(-4, 16),
                           st.integers(1, 6), st.integers(1, 6), st.integers(2, 5), st.booleans(), st.integers(0, 5),
                           device_no)
op = st.one_of(
    map_op, map_op, device_op, device_op, device_op, scenario_op, host_strided, device_strided, device_strided,
    # map / unmap: the data ops a runtime emits for one clause (alloc + copy-in, copy-out + delete)
    st.tuples(st.just("unmap"), st.integers(0, 2), st.integers(0, 8), st.sampled_from([0, 0, 1, 1, 2]), st.integers(1, 24),
              st.booleans(), st.integers(0, 1)),
    st.tuples(st.just("alloc"), st.integers(0, 2), st.integers(-8, 8), st.integers(1, 48)),
    st.tuples(st.just("free"), st.integers(0, 2)),
    st.tuples(st.just("construct"), st.lists(st.tuples(st.integers(0, 2), st.integers(0, 8), st.integers(0, 40),
                                                       st.integers(0, 15)), min_size=0, max_size=3)),
    st.tuples(st.just("dataop"), st.sampled_from([1, 1, 2, 2, 3, 3, 4, 5, 6]), st.integers(0, 2),
              st.integers(0, 8), st.integers(0, 2), st.integers(0, 24), st.integers(0, 1), st.integers(-2, 2),
              st.sampled_from([0, 0, 0, 1]), st.sampled_from([False, False, False, True])),
    st.tuples(st.just("host"), host_range, st.booleans(), st.integers(0, 5)),
    device_op,
)


def build(ops: list, ranks: int = 1, path: Path | None = None) -> dict[str, np.ndarray]:
    """The events of ``ops`` as columns (also written to ``path`` as a log when given, one rank)."""
    b = LogBuilder(program="random")
    construct = -1
    for o in ops:
        if o[0] == "alloc":
            base, size = HOST_VARS[o[1]]
            b.alloc(base + o[2], o[3], site=SITES[0])
        elif o[0] == "free":
            b.free(HOST_VARS[o[1]][0], site=SITES[0])
        elif o[0] == "construct":
            construct = b.construct_begin(ConstructKind.TARGET, site=SITES[1])
            for i, (var, off, size, bits) in enumerate(o[1]):
                base, _ = HOST_VARS[var]
                b.map_clause(construct, f"v{var}", base + off, size, bits, site=SITES[2 + var], index=i,
                             text=f"v{var}[{off}:{size}]")
        elif o[0] in ("map", "unmap"):
            _, var, off, dev, size, copy, device = o
            host, devaddr = HOST_VARS[var][0] + off, DEV_BASES[dev] + off
            kinds = ([DataOpKind.ALLOC] + [DataOpKind.TRANSFER_TO] * copy if o[0] == "map"
                     else [DataOpKind.TRANSFER_FROM] * copy + [DataOpKind.DELETE])
            for k in kinds:
                b.data_op(k, host, devaddr, size, construct=construct, device=device, var=f"v{var}")
        elif o[0] == "scenario":
            _, var, off, dev, size, device, device_writes, release = o
            host, devaddr = HOST_VARS[var][0] + off, DEV_BASES[dev] + off
            b.data_op(DataOpKind.ALLOC, host, devaddr, size, construct=construct, device=device)
            b.data_op(DataOpKind.TRANSFER_TO, host, devaddr, size, construct=construct, device=device)
            if device_writes:
                b.access(devaddr, size, write=True, device=device, construct=construct, site=SITES[4])
            else:
                b.access(host, size, write=True, site=SITES[4])
            if release:
                b.data_op(DataOpKind.DELETE, host, devaddr, size, construct=construct, device=device)
            if device_writes:
                b.access(host, size, site=SITES[5])
            else:
                b.access(devaddr, size, device=device, construct=construct, site=SITES[5])
        elif o[0] == "dataop":
            _, kind, var, off, dev, size, device, slip, aux, no_host = o
            base, _ = HOST_VARS[var]   # aux 1: a declare-target association; no_host: omp_target_alloc
            b.event(EventKind.DATA_OP, op=kind, addr=0 if no_host else base + off, addr2=DEV_BASES[dev] + off + slip,
                    size=size, id=construct, device=device, name=b.string(f"v{var}"), aux=aux,
                    loc=b.location(*SITES[1]))
        elif o[0] == "hstride":
            _, var, off, size, gap, blocks, write, line = o
            b.access(HOST_VARS[var][0] + off, size, write=write, site=SITES[line], stride=size + gap, blocks=blocks)
        elif o[0] == "dstride":
            _, dev, off, size, gap, blocks, write, line, device = o
            b.access(DEV_BASES[dev] + off, size, write=write, device=device, construct=construct, site=SITES[line],
                     stride=size + gap, blocks=blocks)
        elif o[0] == "host":
            (var, off, size), write, line = o[1], o[2], o[3]
            b.access(HOST_VARS[var][0] + off, size, write=write, site=SITES[line])
        else:
            (dev, off, size), write, line, device = o[1], o[2], o[3], o[4]
            b.access(DEV_BASES[dev] + off, size, write=write, device=device, construct=construct,
                     site=SITES[line])
    cols = b.columns()
    if path is not None:
        b.write(path)
    if ranks > 1:   # the same events on a second rank (its own address space)
        cols = {k: np.concatenate([v, v]) for k, v in cols.items()}
        cols["rank"][len(cols["rank"]) // 2:] = 1
    return cols


# shadow blocks of 4, 8 or 16 bytes (many block edges in a small log) or the default size
log_block = st.sampled_from([2, 3, 4, LOG_BLOCK])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=50), log_block)
def test_vsm_matches_oracle(ops, lgb):
    cols = build(ops)
    assert run_vsm(cols, log_block=lgb).detections == oracle_detections(cols)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=30), log_block)
def test_vsm_matches_oracle_two_ranks(ops, lgb):
    cols = build(ops, ranks=2)
    assert run_vsm(cols, log_block=lgb).detections == oracle_detections(cols)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=40), st.randoms(use_true_random=False), log_block)
def test_vsm_matches_oracle_in_any_order(ops, rnd, lgb):
    cols = build(ops)
    order = list(range(len(cols["kind"])))
    rnd.shuffle(order)
    order = order[: max(1, len(order) - rnd.randint(0, 3))]   # a subset too
    assert run_vsm(cols, order=order, log_block=lgb).detections == oracle_detections(cols, order=order)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(op, min_size=8, max_size=40))
def test_streamed_replay_reads_lazy_columns_only_when_needed_and_agrees(tmp_path, ops):
    """The mapping checker's streaming pass stops at a row that needs ``loc``/``id``/``aux``, reads
    them and applies the row again: the same detections (and histories) as an in-memory replay."""
    path = tmp_path / "random.arrow"
    cols = build(ops, path=path)
    streamed, _session = replay_log(read_log(path))
    assert streamed == run_vsm(cols).detections


def on_high_devices(cols: dict[str, np.ndarray], ndev: int = 31) -> dict[str, np.ndarray]:
    """The same events on devices ndev and ndev+1, after device memory on devices 2..ndev-1 (ndev devices).

    The shadow is then the widest of its type (7 devices: uint16, 15: uint32, 31: uint64) and the two
    devices' bits are its top ones (with 31, bit 63 is the sign bit).
    """
    b = LogBuilder(program="devices")
    for d in range(2, ndev):   # omp_target_alloc on each: a device of the log, nothing tracked
        b.data_op(DataOpKind.ALLOC, 0, 0x100, 8, device=d)
    dummy = b.columns()
    out = {k: np.concatenate([dummy[k], v]) for k, v in cols.items()}
    dev = out["device"][len(dummy["kind"]):]
    dev[dev >= 0] += ndev
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=30), log_block)
def test_vsm_matches_oracle_with_31_devices(ops, lgb):
    cols = on_high_devices(build(ops))
    assert run_vsm(cols, log_block=lgb).detections == oracle_detections(cols)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=8, max_size=30), log_block, st.sampled_from([7, 15]))
def test_vsm_matches_oracle_with_uint16_and_uint32_shadows(ops, lgb, ndev):
    """The kernel is compiled once per shadow element type: the two middle widths agree too."""
    cols = on_high_devices(build(ops), ndev)
    result = run_vsm(cols, log_block=lgb)
    assert result.session.shadow.dtype == (np.uint16 if ndev == 7 else np.uint32)
    assert result.detections == oracle_detections(cols)


def test_fixed_example_agrees_and_finds_uum():
    ops = [("alloc", 1, 0, 16), ("construct", [(1, 0, 16, 0)]), ("dataop", 1, 1, 0, 0, 16, 0, 0, 0, False),
           ("device", (0, 0, 4), False, 3, 0)]
    cols = build(ops)
    dets = run_vsm(cols).detections
    assert dets == oracle_detections(cols)
    assert [d.kind for d in dets] == ["uum"]
    assert MapType.TO  # the clause had no copy-in
