"""Data-mapping checker: the byte-granular variable state machine (VSM) of ARBALEST, replayed offline.

What it finds (``check_mapping``): use of uninitialised memory, use of stale data (host or device)
and buffer overflows (device accesses past the mapped section, sections past the host object).
``mapping_diagnosis`` words each detection and works out the fix; docs/analyze.md has the rules.

Reusable core (for the nowait race and schedule checkers)::

    from quiver.replay.mapping.vsm import VsmSession, run_vsm

    result = run_vsm(columns)                  # all events of a column set, in row order
    result = run_vsm(columns, order=perm)      # the same events applied in another order
    result.detections                          # list[Detection], one per distinct problem

    session = VsmSession(control)              # control = read_control_events(log) or
    session.apply(batch, base=offset)          #   control_events_from_columns(columns)
    fork = session.copy()                      # snapshot: run a prefix once, fork per schedule
    fork.apply(columns, rows=perm_tail)        # rows = global row indices when base=0
    fork.detections()

``columns`` is a dict of numpy arrays with the log's column names (``EventLog.columns()``, one record
batch, or a builder's ``columns()``); ``rows`` / ``order`` are row indices into it applied in that
order (an event may be left out). The static tables (tracked host memory, map clauses, devices) come
from the control events given to the session, which must include every control event that is applied.

State (one entry per tracked host byte; tracked = union of the host ranges ever mapped, compacted):
OV valid, OV initialised, and per device CV valid, CV initialised. Before a byte is first mapped its
host copy counts as valid and initialised. Transitions (SPEC): host write -> OV valid+init, all CVs
invalid; device write -> that CV valid+init, OV and other CVs invalid; transfer to device
CV := OV; transfer from device OV := CV; CV allocated / released -> CV invalid, not initialised;
a transfer into a CV whose host address is not the CV's own OV (the runtime attaching a pointer)
makes the CV bytes valid+initialised; a transfer whose device side is in no live CV, or by a device
memory routine (``omp_target_memcpy``: construct id -1) between a CV and another host buffer, reads
(to device) or writes (from device) its host bytes like a host access, a routine's copy from a CV
first reading that CV like a device access; a new host allocation (ALLOC not identical to a live one)
resets its bytes to the never-mapped state; an association the recorder inferred for a
``declare target`` variable (DATA_OP associate, aux 1) starts valid+initialised; device memory without
a host side (``omp_target_alloc``, host address 0) is not tracked. A read of an invalid copy is a
detection: uninitialised if that copy was never initialised, else stale.

Overflows: a device access that begins in a live CV and runs past its end overflows that CV's
variable; a device access in no live CV overflows variable V when it lies in V's window (V's host
object translated to the device, or one section length around V's CV) for the CVs the access's
construct maps (all live CVs if the construct has no clause events); object beats band, then the
nearest CV, then clause order. A map clause (or a copy no clause explains) whose section runs past
the live host allocation holding its first byte is a section overflow.

A strided ACCESS row (format version 2: ``aux2`` blocks of ``size`` bytes every ``addr2`` bytes) is
applied block by block, in address order, all as the row's event: bytes are summed over its blocks,
and it counts as one occurrence. A row of planes (format version 5: ``name`` >= 2 copies of that run,
``id2`` bytes apart) is applied plane by plane, each plane as that strided run would be (its first
block decides which variable a later block of the plane overflows), all as the row's event. A masked run
(format version 6: ``op`` bit 4, ``aux2`` slots every ``addr2`` bytes, ``id2`` the bitmap of the present
ones) is applied one run of set bits at a time (contiguous slots as one range, else as a strided run),
absent slots untouched, all as the row's event (its first present slot decides which variable a later one
overflows, as the first block of a strided run).

Detections are deduplicated by (kind, rank, device, access site, clause site and variable), keeping
the first occurrence and summing bytes and occurrences (one per event). The oracle
(``quiver.replay.oracle``) implements exactly these rules; docs/analyze.md explains them to users.

Speed (the C kernel ``vsm_kernel.c``, loaded by ``vsm_native``): the shadow is kept in blocks of
4 KiB with a lower and an upper bound of their bits; a uniform block is one value (its bytes are
not even paged in), so copies, allocations and whole-array accesses cost O(blocks), a read of a
block whose lower bound has the valid bit is O(1), and what is left runs as vectorised slice loops. The
common row (a one-block device access in one of the two last-used device copies) is settled by a small
loop that keeps its values in registers; every other row goes through one out-of-line function. ``loc``/``id``/``aux`` of a streamed batch
are read only when one of its rows produces a finding or an overflow. A strided row inside one device
copy is settled without a pass over its blocks when the shadow blocks of its span decide it, or when
the *strided memo* (``vsm_layout.SM_*``: runs of rows, or planes of runs of rows, whose bytes are known
to hold some bits, dropped row by row as bytes change) says its rows already hold what it writes or
the valid bit it reads: a kernel sweeping the same rows again costs O(1) per record instead of
O(rows). Else its rows are applied a shadow block at a time and remembered. ``strided_counts`` counts
both. Detections are the same as block by block (the oracle checks it).
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from quiver.formats import DataOpKind, EventKind, EventLog, LogFormatError
from quiver.formats.memory_limit import check_fits
from quiver.formats.schema import COLUMN_DTYPES, FORMAT_VERSION, PLANES_VERSION
from quiver.formats.sets import sorted_unique
from quiver.replay.mapping import vsm_layout as K
from quiver.replay.mapping import vsm_native
from quiver.replay.mapping.events import (
    DETECTION_KINDS,
    HISTORY_MAX,
    PLANE_COLUMNS,
    S_CV_INIT,
    S_CV_VALID,
    S_OV_INIT,
    S_OV_VALID,
    VSM_COLUMNS,
    ControlEvents,
    Detection,
    control_events_from_columns,
    read_control_events,
)
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import Finding

FIND_CAPACITY = 1 << 15
# columns the kernel reads only for findings and overflows (streamed batches read them on demand)
LAZY_COLUMNS = ("loc", "id", "aux")
_SHADOW_TYPES = ((3, np.uint8), (7, np.uint16), (15, np.uint32), (31, np.uint64))


# Inside ``reusing_shadows()``: the shadow array of the last session that went away, for the next
# session of the same size (None outside: nothing is kept).
_SPARE_SHADOW: list[np.ndarray] | None = None


@contextmanager
def reusing_shadows() -> Iterator[None]:
    """Within, a new session takes over the shadow array of the last finished one of the same size.

    One analysis replays a log several times (findings' histories, the schedule explorer), and a
    fresh array costs a page fault per page the replay touches (expensive on VMs). The bytes it
    holds do not matter: a new session starts with every block uniform. On leaving, the spare is
    released, so a notebook that drops its sessions gets the memory back."""
    global _SPARE_SHADOW
    outermost = _SPARE_SHADOW is None
    if outermost:
        _SPARE_SHADOW = []
    try:
        yield
    finally:
        if outermost:
            _SPARE_SHADOW = None


def _column(columns: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    """A column as the kernel reads it: C-contiguous, the log's dtype (no copy when it already is)."""
    return np.ascontiguousarray(columns[name], dtype=COLUMN_DTYPES[name])


def _shadow_for(owner: VsmSession, size: int, dtype: type) -> np.ndarray:
    """A shadow array for ``owner`` (the spare when it fits), handed back as the spare when ``owner`` goes."""
    spare = _SPARE_SHADOW.pop() if _SPARE_SHADOW else None
    shadow = spare if spare is not None and spare.shape == (size,) and spare.dtype == dtype \
        else np.empty(size, dtype=dtype)
    weakref.finalize(owner, _keep_spare, shadow)
    return shadow


def _keep_spare(shadow: np.ndarray) -> None:
    if _SPARE_SHADOW is not None:
        _SPARE_SHADOW[:] = [shadow]


def _shadow_dtype(ndev: int) -> type:
    for limit, dtype in _SHADOW_TYPES:
        if ndev <= limit:
            return dtype
    raise LogFormatError(f"{ndev} offload devices in one log; quiver's mapping checker handles at most 31")


@dataclass
class StaticTables:
    """What the kernel needs that never changes during a replay (built once from the control events)."""

    devices: np.ndarray          # dense index -> device number
    devmap: np.ndarray           # device number -> dense index (-1)
    ct_event: np.ndarray
    ct: np.ndarray               # int64 [n, CT_N]
    cl_static: np.ndarray        # int64 [n_clauses, CL_N] (object columns -1)
    clk_keys: np.ndarray
    clk_rows: np.ndarray
    tr_lo: np.ndarray
    tr_hi: np.ndarray
    tr_base: np.ndarray
    n_entries_max: int
    n_allocs_max: int
    n_window_max: int
    # whether replaying can find anything: every finding needs a map clause (section overflow) or a data
    # op on a device (a device copy, tracked host bytes, a device known for overflows); without either
    # (an MPI or host-only log) the replay is skipped and the kernel is not even built
    can_find: bool = True

    @property
    def ndev(self) -> int:
        return max(len(self.devices), 1)

    @property
    def tracked_bytes(self) -> int:
        return int(self.tr_base[-1] + (self.tr_hi[-1] - self.tr_lo[-1])) if len(self.tr_lo) else 0


def _union(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge [lo, hi) intervals (vectorised): sorted, disjoint, adjacent ones joined."""
    if not len(lo):
        return lo, hi
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    starts = np.concatenate(([True], lo[1:] > reach[:-1]))
    group = np.cumsum(starts) - 1
    out_lo = lo[starts]
    out_hi = np.zeros(len(out_lo), dtype=np.int64)
    np.maximum.at(out_hi, group, hi)
    return out_lo, out_hi


# the control events the kernel applies (apply_control in vsm_shadow.h); the others only matter to reports
KERNEL_CONTROL_KINDS = np.array([int(k) for k in (EventKind.ALLOC, EventKind.FREE, EventKind.MAP_CLAUSE,
                                                  EventKind.DATA_OP)], dtype=np.int16)


def build_static(control: ControlEvents) -> StaticTables:
    control = control.select(KERNEL_CONTROL_KINDS)
    kind = control["kind"].astype(np.int64)
    rank = control["rank"].astype(np.int64)
    device = control["device"].astype(np.int64)
    addr = control["addr"].astype(np.uint64)
    addr2 = control["addr2"].astype(np.uint64)
    size = control["size"].astype(np.uint64)
    ident = control["id"].astype(np.int64)
    op = control["op"].astype(np.int64)
    is_data = kind == int(EventKind.DATA_OP)
    makes_cv = is_data & np.isin(op, (int(DataOpKind.ALLOC), int(DataOpKind.ASSOCIATE))) & (size > 0) & (addr > 0)
    devices = sorted_unique(device[is_data & (device >= 0)])  # not np.unique: it imports numpy.ma
    ndev = max(len(devices), 1)
    _shadow_dtype(ndev)
    if len(rank) and (rank.max() + 1) * ndev >= (1 << 14):
        raise LogFormatError("too many ranks x devices for the mapping checker (at most 16383)")
    limit = np.uint64(1 << K.SHIFT)
    wide = (addr >= limit) | (addr + size >= limit) | (addr2 >= limit)
    if (wide & is_data).any():
        raise LogFormatError("a data op with an address beyond 48 bits in the log; the mapping checker cannot "
                             "key it")
    # firstprivate (literal) clauses carry values, not addresses: keep them as clauses that hold nothing
    kind = np.where(wide, 0, kind)
    if len(ident) and int(ident.max()) >= (1 << K.CKEY_SHIFT):
        raise LogFormatError("a construct id beyond 2^40 in the log")
    devmap = np.full(int(devices.max()) + 1 if len(devices) else 1, -1, dtype=np.int64)
    devmap[devices] = np.arange(len(devices))
    di = np.where((device >= 0) & (device < len(devmap)), devmap[np.clip(device, 0, len(devmap) - 1)], -1)

    hk = (rank << K.SHIFT) | addr.astype(np.int64)
    lo, hi = _union(hk[makes_cv], hk[makes_cv] + size[makes_cv].astype(np.int64))
    lengths = hi - lo
    base = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64) if len(lo) else lo

    is_map = (control["kind"] == int(EventKind.MAP_CLAUSE))
    clrow = np.full(len(kind), -1, dtype=np.int64)
    clrow[is_map] = np.arange(int(is_map.sum()))
    ct = np.zeros((len(kind), K.CT_N), dtype=np.int64)
    ct[:, K.CT_KIND] = kind
    ct[:, K.CT_RANK] = rank
    ct[:, K.CT_DI] = di
    ct[:, K.CT_LOC] = control["loc"]
    ct[:, K.CT_ADDR] = addr.astype(np.int64)
    ct[:, K.CT_ADDR2] = addr2.astype(np.int64)
    ct[:, K.CT_SIZE] = size.astype(np.int64)
    ct[:, K.CT_ID] = ident
    ct[:, K.CT_OP] = op
    ct[:, K.CT_NAME] = control["name"]
    ct[:, K.CT_CLROW] = clrow
    ct[:, K.CT_AUX] = control["aux"]

    m = np.flatnonzero(is_map)
    cl = np.full((len(m), K.CL_N), -1, dtype=np.int64)
    cl[:, K.CL_EVENT] = control.event[m]
    cl[:, K.CL_CKEY] = np.where(ident[m] >= 0, (rank[m] << K.CKEY_SHIFT) | ident[m], -1)
    cl[:, K.CL_HOST] = np.where(wide[m], -2, hk[m])
    cl[:, K.CL_SIZE] = np.where(wide[m], 0, size[m].astype(np.int64))
    cl[:, K.CL_NAME] = control["name"][m]
    cl[:, K.CL_TYPE] = op[m]
    cl[:, K.CL_LOC] = control["loc"][m]
    order = np.lexsort((cl[:, K.CL_EVENT], cl[:, K.CL_CKEY]))
    keep = cl[order, K.CL_CKEY] >= 0
    clk_rows = order[keep].astype(np.int64)
    clk_keys = cl[clk_rows, K.CL_CKEY].copy()
    per_construct = int(np.unique(clk_keys, return_counts=True)[1].max()) if len(clk_keys) else 0
    n_entries = int(makes_cv.sum())
    return StaticTables(
        devices=devices.astype(np.int64), devmap=devmap, ct_event=control.event.astype(np.int64), ct=ct,
        cl_static=cl, clk_keys=clk_keys, clk_rows=clk_rows, tr_lo=lo.astype(np.int64),
        tr_hi=hi.astype(np.int64), tr_base=base, n_entries_max=n_entries,
        n_allocs_max=int((kind == int(EventKind.ALLOC)).sum()), n_window_max=max(per_construct, n_entries),
        can_find=bool(((kind == K.K_MAP) | (is_data & (di >= 0))).any()))


@dataclass
class Watches:
    """Bytes whose history the replay records: shadow index and the event at which recording stops."""

    shadow: np.ndarray
    stop: np.ndarray

    @classmethod
    def none(cls) -> Watches:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@dataclass
class VsmSession:
    """One replay of the VSM: static tables plus the mutable shadow, mapping and finding tables."""

    static: StaticTables
    watches: Watches = field(default_factory=Watches.none)
    log_block: int = K.LOG_BLOCK     # shadow bytes per block: 2**log_block (tests use small blocks)

    def __post_init__(self) -> None:
        st = self.static
        # the shadow in blocks (vsm_kernel.c): every block starts uniform (never mapped: OV valid and
        # initialised), so its bytes are not written (nor paged in) until an operation splits it
        nblocks = -(-st.tracked_bytes >> self.log_block)
        # the shadow is virtual memory the size of the mapped bytes plus 24 bytes per block written up front
        check_fits(st.tracked_bytes + nblocks * 24, "the shadow of its mapped memory")
        self.shadow = _shadow_for(self, nblocks << self.log_block, _shadow_dtype(st.ndev))
        self.blo = np.full(nblocks, K.OVV | K.OVI, dtype=np.int64)
        self.bhi = self.blo.copy()
        self.bcnt = np.zeros(nblocks, dtype=np.int64)
        self.cl = st.cl_static.copy()
        self.en = np.full((st.n_entries_max + 1, K.EN_N), -1, dtype=np.int64)
        self.lv_key = np.zeros(st.n_entries_max + 1, dtype=np.int64)
        self.lv_en = np.zeros(st.n_entries_max + 1, dtype=np.int64)
        self.al_lo = np.zeros(st.n_allocs_max + 1, dtype=np.int64)
        self.al_hi = np.zeros(st.n_allocs_max + 1, dtype=np.int64)
        self.ctr = np.zeros(K.C_N, dtype=np.int64)
        self.ctr[K.C_WIN_GEN] = -1
        self.ctr[K.C_LE_N] = -1
        self.win = np.zeros((st.n_window_max + 1, 5), dtype=np.int64)
        self.fd = np.zeros((FIND_CAPACITY, K.F_N), dtype=np.int64)
        self.fd_hash = np.zeros(FIND_CAPACITY * 2, dtype=np.int64)
        self.memo = np.zeros((K.SM_CAP, K.SM_COLS), dtype=np.int64)   # the strided memo (vsm_layout.py)
        self.all_cvv = sum(4 << (2 * d) for d in range(st.ndev))
        w = self.watches
        by_shadow = np.argsort(w.shadow, kind="stable")
        self.wa_sh = w.shadow[by_shadow].astype(np.int64)
        self.wa_id = by_shadow.astype(np.int64)
        by_stop = np.argsort(w.stop, kind="stable")
        self.st_ev = w.stop[by_stop].astype(np.int64)
        self.st_w = by_stop.astype(np.int64)
        self.wa_done = np.zeros(len(w.shadow), dtype=np.int64)
        self.wh = np.zeros((len(w.shadow), HISTORY_MAX, 2), dtype=np.int64)
        self.wn = np.zeros(len(w.shadow), dtype=np.int64)
        self._records()

    def _records(self) -> None:
        """The kernel's Tables, State and Watch structs over this session's arrays (vsm_native)."""
        st = self.static
        p = vsm_native.ptr
        self._tables = vsm_native.Tables(
            p(st.ct_event), p(st.ct), len(st.ct_event), p(st.clk_keys), p(st.clk_rows), len(st.clk_keys),
            p(st.devmap), len(st.devmap), st.ndev, self.all_cvv, p(st.tr_lo), p(st.tr_hi), p(st.tr_base), len(st.tr_lo))
        self._state = vsm_native.State(
            p(self.cl), p(self.shadow), p(self.blo), p(self.bhi), p(self.bcnt), len(self.blo), self.log_block,
            p(self.en), p(self.lv_key), p(self.lv_en), p(self.al_lo), p(self.al_hi), p(self.ctr), p(self.win),
            len(self.win), p(self.fd), len(self.fd), p(self.fd_hash), len(self.fd_hash), p(self.memo))
        self._watch = vsm_native.Watch(
            p(self.wa_sh), p(self.wa_id), p(self.wa_done), p(self.wh), p(self.wn), len(self.wa_sh), HISTORY_MAX,
            p(self.st_ev), p(self.st_w), len(self.st_ev))

    @classmethod
    def for_control(cls, control: ControlEvents, watches: Watches | None = None,
                    log_block: int = K.LOG_BLOCK) -> VsmSession:
        return cls(build_static(control), watches or Watches.none(), log_block)

    _STATE = ("blo", "bhi", "bcnt", "cl", "en", "lv_key", "lv_en", "al_lo", "al_hi", "ctr", "win", "fd", "fd_hash",
              "memo", "wa_done", "wh", "wn")

    def copy(self) -> VsmSession:
        """An independent snapshot of the replay state (static tables shared)."""
        other = object.__new__(VsmSession)
        other.__dict__.update(self.__dict__)
        for name in self._STATE:
            setattr(other, name, getattr(self, name).copy())
        other.shadow = _shadow_for(other, len(self.shadow), self.shadow.dtype)   # only split blocks' bytes matter
        if self.static.can_find:
            vsm_native.library().qv_vsm_copy_split_blocks(
                vsm_native.ptr(self.shadow), vsm_native.ptr(other.shadow), vsm_native.ptr(self.blo),
                vsm_native.ptr(self.bhi), len(self.blo), self.log_block, self.shadow.itemsize)
        other._records()
        return other

    def values(self, index: np.ndarray) -> np.ndarray:
        """The state bits (int64) of the given shadow bytes."""
        index = np.asarray(index, dtype=np.int64)
        if not len(index):
            return np.zeros(0, dtype=np.int64)
        b = index >> self.log_block
        return np.where(self.blo[b] == self.bhi[b], self.blo[b], self.shadow[index].astype(np.int64))

    def apply(self, columns: Mapping[str, np.ndarray], rows: np.ndarray | None = None, base: int = 0,
              more: Callable[[], Mapping[str, np.ndarray]] | None = None) -> None:
        """Apply events of ``columns`` (row i has global index base+i), all in order or ``rows`` in order.

        ``more``: ``columns`` may then lack ``loc``, ``id`` and ``aux`` (a streamed batch read
        without them); ``more()`` returns them, called only if a row needs them (a finding or an
        overflow), so clean batches never decompress them.
        """
        if not self.static.can_find:
            return
        kind = columns["kind"]
        if rows is None:
            rows_arr = None
            n = len(kind)
        else:
            rows_arr = np.ascontiguousarray(rows, dtype=np.int64)
            n = len(rows_arr)
        if n == 0:
            return
        stride, blocks = columns.get("addr2"), columns.get("aux2")
        if stride is None or blocks is None:   # columns without strided runs
            stride = np.zeros(len(kind), dtype=COLUMN_DTYPES["addr2"])
            blocks = np.zeros(len(kind), dtype=COLUMN_DTYPES["aux2"])
        lazy = more is not None and any(c not in columns for c in LAZY_COLUMNS)
        held = [_column(columns, name) for name in ("kind", "rank", "device")]
        held += [None if lazy else _column(columns, "loc"), _column(columns, "addr"), _column(columns, "size"),
                 None if lazy else _column(columns, "id"), _column(columns, "op"),
                 None if lazy else _column(columns, "aux"), _column({"addr2": stride}, "addr2"),
                 _column({"aux2": blocks}, "aux2")]
        # planes of strided rows (name >= 2, id2 apart): columns without them are one plane a row; id2 is also
        # a masked run's bitmap (format version 6)
        held += [_column(columns, "name") if "name" in columns else None,
                 _column(columns, "id2") if "id2" in columns else None]
        p = vsm_native.ptr
        cols = vsm_native.Columns(*(p(a) for a in held), int(lazy))
        sel = vsm_native.Selection(p(rows_arr), 0, n, base)
        lib = vsm_native.library()
        args = (ctypes.byref(cols), ctypes.byref(sel), ctypes.byref(self._tables), ctypes.byref(self._state),
                ctypes.byref(self._watch), self.shadow.itemsize)
        while True:
            lib.qv_vsm_apply(*args)
            first = int(self.ctr[K.C_STOP])
            if first < 0:
                return
            extra = more()   # the kernel stopped at row ``first``, which needs the lazy columns
            held[3], held[6], held[8] = (_column(extra, c) for c in ("loc", "id", "aux"))
            cols.loc, cols.eid, cols.aux, cols.lazy = p(held[3]), p(held[6]), p(held[8]), 0
            sel.first = first

    @property
    def dropped(self) -> int:
        """Occurrences not recorded because the table of distinct findings was full."""
        return int(self.ctr[K.C_DROPPED])

    @property
    def strided_counts(self) -> tuple[int, int]:
        """(strided rows settled without a pass over their blocks, blocks of strided rows applied one by
        one) so far: how often the kernel's strided shortcuts were taken (tests check they are)."""
        return int(self.ctr[K.C_STRIDED_FAST]), int(self.ctr[K.C_STRIDED_ROWS])

    def detections(self, histories: VsmSession | None = None) -> list[Detection]:
        """The distinct problems found so far (histories filled only for watched bytes: this session's, or those a
        history replay ``histories`` recorded)."""
        st = self.static
        h = histories if histories is not None else self
        out = []
        for row in self.fd[: self.ctr[K.C_NFIND]]:
            e = int(row[K.F_ENTRY])
            di = int(row[K.F_DI])
            entry_di = int(self.en[e, K.EN_DI]) if e >= 0 else -1
            out.append(Detection(
                kind=DETECTION_KINDS[int(row[K.F_KIND]) - 1], rank=int(row[K.F_RANK]),
                device=int(st.devices[di]) if di >= 0 and row[K.F_KIND] != K.FK_SECTION else -1,
                event=int(row[K.F_EVENT]), loc=int(row[K.F_LOC]), clause_event=int(row[K.F_CLAUSE]),
                entry_event=int(self.en[e, K.EN_CREATE]) if e >= 0 else -1,
                release_event=int(row[K.F_RELEASE]), name=int(row[K.F_NAME]),
                entry_device=int(st.devices[entry_di]) if entry_di >= 0 else -1,
                host_addr=int(row[K.F_HOST]), device_addr=int(row[K.F_DEV]), bytes=int(row[K.F_BYTES]),
                occurrences=int(row[K.F_OCC]), last_host_addr=int(row[K.F_LASTHOST]), width=int(row[K.F_WIDTH]),
                access_size=int(row[K.F_ASIZE]), object_lo=int(row[K.F_OBJLO]), object_hi=int(row[K.F_OBJHI]),
                history=h._history(int(row[K.F_SHADOW]), int(row[K.F_EVENT]),
                                   di if di >= 0 else entry_di)))
        return sorted(out, key=Detection.sort_key)

    def first_bad_bytes(self) -> Watches:
        """Watches for the first bad byte of every state finding (for a history replay)."""
        rows = self.fd[: self.ctr[K.C_NFIND]]
        rows = rows[rows[:, K.F_SHADOW] >= 0]
        return Watches(rows[:, K.F_SHADOW].copy(), rows[:, K.F_EVENT].copy())

    def _history(self, shadow_index: int, stop: int, di: int) -> tuple[tuple[int, int], ...]:
        hits = np.flatnonzero((self.watches.shadow == shadow_index) & (self.watches.stop == stop))
        if shadow_index < 0 or not len(hits):
            return ()
        w = int(hits[0])
        n = int(self.wn[w])
        slots = [(n - k) % HISTORY_MAX for k in range(min(n, HISTORY_MAX), 0, -1)]
        return tuple((int(self.wh[w, s, 0]), state4(int(self.wh[w, s, 1]), di)) for s in slots)


def state4(full: int, di: int) -> int:
    """Full shadow bits -> S_* bits for the OV and the CV of dense device di."""
    out = (S_OV_VALID if full & K.OVV else 0) | (S_OV_INIT if full & K.OVI else 0)
    if di >= 0:
        out |= (S_CV_VALID if full & (4 << (2 * di)) else 0) | (S_CV_INIT if full & (8 << (2 * di)) else 0)
    return out


@dataclass
class VsmResult:
    detections: list[Detection]
    session: VsmSession


def run_vsm(columns: Mapping[str, np.ndarray], order: Sequence[int] | np.ndarray | None = None, *,
            control: ControlEvents | None = None, history: bool = True, log_block: int = K.LOG_BLOCK) -> VsmResult:
    """Run the VSM over an in-memory column set, in row order or in ``order``; with histories."""
    control = control if control is not None else control_events_from_columns(columns)
    rows = None if order is None else np.asarray(order, dtype=np.int64)
    session = VsmSession.for_control(control, log_block=log_block)
    session.apply(columns, rows)
    if history:
        watches = session.first_bad_bytes()
        if len(watches.shadow):
            replay = VsmSession(session.static, watches, log_block)
            replay.apply(columns, rows)
            return VsmResult(replay.detections(), replay)
    return VsmResult(session.detections(), session)


def replay_log(log: EventLog, control: ControlEvents | None = None, *, history: bool = True,
               progress=None) -> tuple[list[Detection], VsmSession]:
    """Stream a log through the VSM (a second pass records the history of each first bad byte, up to the last
    first bad access: the findings are the first pass's, their histories the second's)."""
    control = control if control is not None else read_control_events(log)
    static = build_static(control)
    session = VsmSession(static)
    if not static.can_find:
        if progress is not None:
            progress(log.num_events)
        return [], session
    stream_log(log, session, progress)
    if history:
        watches = session.first_bad_bytes()
        if len(watches.shadow):
            replay = VsmSession(static, watches)
            # progress counts the first pass only; nothing is watched past the last stop
            stream_log(log, replay, None, lazy=False, until=int(watches.stop.max()))
            return session.detections(histories=replay), session
    return session.detections(), session


def stream_columns(lazy: bool = True, version: int = FORMAT_VERSION) -> list[str]:
    """The columns ``stream_log`` reads from every batch (``lazy``: without ``loc``/``id``/``aux``; a log
    older than format version 5: without the planes' ``name``/``id2``)."""
    skip = (LAZY_COLUMNS if lazy else ()) + (PLANE_COLUMNS if version < PLANES_VERSION else ())
    return [c for c in VSM_COLUMNS if c not in skip]


def stream_log(log: EventLog, session: VsmSession, progress, lazy: bool = True,
            batches: Sequence[Mapping[str, np.ndarray]] | None = None, until: int | None = None) -> None:
    """Apply every record batch (``until``: up to the one holding that event); ``lazy``: read ``loc``/``id``/``aux``
    of a batch only if it needs them (never when recording histories: a row the kernel stops at is applied again).
    ``batches``: the batches already read with ``stream_columns(lazy)`` (the bench times decoding apart)."""
    names = stream_columns(lazy, log.version)
    offset = 0
    for i in range(log.num_batches):
        if until is not None and offset > until:
            break
        batch = batches[i] if batches is not None else log.batch(i, names)
        session.apply(batch, base=offset, more=(lambda i=i: log.batch(i, list(LAZY_COLUMNS))) if lazy else None)
        offset += len(batch["kind"])
        if progress is not None:
            progress(len(batch["kind"]))


def check_mapping(log: EventLog, options: CheckOptions) -> list[Finding]:
    """The `mapping` checker: uninitialised / stale data and buffer overflows, with history and fix."""
    control = read_control_events(log)
    detections, session = replay_log(log, control, progress=options.extra.get("progress"))
    if not detections:   # what diagnose answers; its modules (~3 ms of import) are for logs with findings
        return []
    from quiver.replay.mapping.diagnosis import diagnose

    return diagnose(log, control, detections, dropped=session.dropped)
