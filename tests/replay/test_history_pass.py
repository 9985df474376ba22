"""The history pass of the mapping checker (a second replay that watches each finding's first bad byte) stops
after the batch holding the last first bad access: the report is the one a replay of the whole log gives,
and a finding in the first kernel of a long run does not cost a second pass over the run."""

from __future__ import annotations

from omp_sim import OmpSim
from quiver.formats import read_log
from quiver.formats.writer import write_log
from quiver.replay.mapping import vsm
from quiver.replay.mapping.events import read_control_events


def long_run(tmp_path, kernels: int):
    """`b` mapped alloc and read by the first kernel (use of uninitialised memory), then `kernels` clean kernels
    over `c`, written 40 rows to a record batch."""
    sim = OmpSim("long.c")
    b, c = sim.global_array("b", 64), sim.global_array("c", 64)
    with sim.target(5, [sim.map("alloc", "b", b, 0, 16, 6, "b[0:16]")]) as k:
        k.read(b, 64, 7)
    with sim.target(9, [sim.map("tofrom", "c", c, 0, 16, 10, "c[0:16]")]) as k:
        for _ in range(kernels):
            k.read(c, 64, 11)
            k.write(c, 64, 12)
    cols = sim.columns()
    n = len(cols["kind"])
    chunks = [{name: v[s:s + 40] for name, v in cols.items()} for s in range(0, n, 40)]
    path = write_log(tmp_path / "long.arrow", chunks, strings=sim.b.strings, locations=sim.b.locations,
                     run={"threads": 1, **sim.b.run})
    return read_log(path)


def test_the_history_pass_stops_after_the_last_first_bad_access(tmp_path, monkeypatch):
    log = long_run(tmp_path, 400)
    assert log.num_batches > 10
    control = read_control_events(log)
    full = vsm.VsmSession(vsm.build_static(control))
    vsm.stream_log(log, full, None)
    replay = vsm.VsmSession(full.static, full.first_bad_bytes())
    vsm.stream_log(log, replay, None, lazy=False)   # the whole log, watching
    want = replay.detections()
    (d,) = want
    assert d.kind == "uum" and len(d.history) >= 2

    reads = []
    batch = log.batch

    def counted(i, columns=None):
        if columns is not None and "aux" in columns and "kind" in columns:   # a pass that is not lazy
            reads.append(i)
        return batch(i, columns)

    monkeypatch.setattr(log, "batch", counted)
    got, _ = vsm.replay_log(log, control)
    assert got == want
    assert reads and max(reads) <= 1   # the history pass read the batches up to the finding's, not the other ~20
