"""A timeline drawn with matplotlib (for notebooks): one row per track, slices coloured by kind,
RMA calls as arrows from the origin's row to the target's window row."""

from __future__ import annotations

from typing import Any

import polars as pl

from .export_timeline import Timeline

COLORS = {"construct": "#d9d9d9", "kernel": "tab:blue", "transfer_to": "tab:orange",
          "transfer_from": "tab:green", "alloc": "#9e9e9e", "rma": "tab:purple"}
LABELS = {"construct": "target construct", "kernel": "kernel", "transfer_to": "copy to device",
          "transfer_from": "copy to host", "alloc": "alloc / release", "rma": "RMA call"}
MIN_WIDTH = 0.004   # of the time span: short slices stay visible


def x_window(tl: Timeline) -> tuple[float, float]:
    """The x range in µs since the log's first event: [from_ns, to_ns] when given, else what is drawn."""
    t0 = tl.origin_ns
    ends = [int(v) for v in ((tl.slices["start_ns"] + tl.slices["dur_ns"]).max(), tl.instants["time_ns"].max())
            if v is not None]
    starts = [int(v) for v in (tl.slices["start_ns"].min(), tl.instants["time_ns"].min()) if v is not None]
    lo = tl.from_ns if tl.from_ns is not None else min(starts, default=t0)
    hi = tl.to_ns if tl.to_ns is not None else max(ends, default=lo + 1)
    return (lo - t0) / 1e3, max(hi - t0, lo - t0 + 1) / 1e3


def plot_timeline(tl: Timeline, ax: Any = None, *, title: str | None = None) -> Any:
    """Draw ``tl`` on ``ax`` (a new figure when None) and return the axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # matplotlib is optional for quiver itself
        raise ImportError("plotting needs matplotlib (pip install matplotlib)") from e
    slices = tl.slices.with_columns(
        pl.when(pl.col("category") == "transfer").then(pl.col("detail")).otherwise(pl.col("category")).alias("kind"))
    used = pl.concat([slices.select("rank", "tid"), tl.instants.select("rank", "tid")])
    rows = tl.tracks.filter(pl.struct("rank", "tid").is_in(used.select(pl.struct("rank", "tid")).to_series().implode()))
    rows = rows.sort("rank", "sort")
    labels = [f"rank {r}: {name}" if len(tl.ranks) > 1 else name for r, name in rows.select("rank", "track").iter_rows()]
    index = {(r, tid): i for i, (r, tid) in enumerate(rows.select("rank", "tid").iter_rows())}
    if ax is None:
        _fig, ax = plt.subplots(figsize=(11, 1.0 + 0.55 * max(len(index), 1)))
    t0 = tl.origin_ns
    lo, hi = x_window(tl)
    span = max(int((hi - lo) * 1e3), 1)
    min_w = MIN_WIDTH * span / 1e3
    for kind, color in COLORS.items():
        part = slices.filter(pl.col("kind") == kind)
        first = True
        for r, tid, start, dur in part.select("rank", "tid", "start_ns", "dur_ns").iter_rows():
            y = index[(r, tid)]
            height = 0.8 if kind != "construct" else 0.9
            ax.broken_barh([((start - t0) / 1e3, max(dur / 1e3, min_w))], (y - height / 2, height), color=color,
                           label=LABELS[kind] if first else None)
            first = False
    for r0, tid0, ts, r1, tid1 in tl.flows.select("from_rank", "from_tid", "from_ns", "to_rank", "to_tid").iter_rows():
        if (r0, tid0) in index and (r1, tid1) in index:
            x = (ts - t0) / 1e3
            ax.annotate("", xy=(x, index[(r1, tid1)]), xytext=(x, index[(r0, tid0)]),
                        arrowprops={"arrowstyle": "->", "color": COLORS["rma"]})
    for cat, marker, color, label in (("sync", "|", "black", "synchronisation"),
                                      ("mpi", "|", "black", "synchronisation"),
                                      ("finding", "X", "tab:red", "finding")):
        part = tl.instants.filter(pl.col("category") == cat)
        if part.height:
            xs = ((part["time_ns"] - t0) / 1e3).to_list()
            ys = [index[(r, tid)] for r, tid in part.select("rank", "tid").iter_rows()]
            have = {h.get_label() for h in ax.collections}
            ax.scatter(xs, ys, marker=marker, color=color, s=120 if marker == "X" else 200, zorder=3,
                       label=None if label in have else label)
    ax.set_xlim(lo, hi)   # from_ns/to_ns zoom: the axis is the window, not the slices that overlap it
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("time since the first event (µs)")
    ax.set_title(title or f"{tl.program}: timeline")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return ax
