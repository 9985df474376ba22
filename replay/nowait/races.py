"""`data-race` findings: conflicting operations on the same byte that happens-before leaves unordered.

Why: with ``nowait`` a target task's entry copies, kernel and exit copies run beside the host and
other target tasks; any unordered conflicting pair makes the outcome depend on the schedule
(seed 000 Theorem 1, hypothesis 1). Operations are byte ranges of a host copy (OV) or of a device
copy (CV): host and kernel accesses, and copies, which read one side and write the other;
allocating or releasing a device copy counts as a write of it. Device bytes are keyed by the lifetime
of their copy (``device_copies``): the runtime reuses device addresses, and accesses to two copies
that happened to share an address do not conflict. A kernel access outside every device copy (a
``nowait`` region that ran after its data was unmapped reaches the host memory itself when the
device is the host) is an access to the host bytes at that address.

Only pairs with at least one side in a deferred target task are reported: host threads' own
synchronisation (locks, critical, parallel fork) is not in the log, and host-only races are
another tool's job. Each pair of sites (and variable) is reported once with both sites.

Pipeline: ``happens_before`` gives each event a segment and vector clock; records of segments that
are concurrent with some target-task segment are merged per (segment, site, kind) into byte
ranges, then one sweep over the address space (numba) pairs overlapping ranges.
"""

from __future__ import annotations

import numpy as np
from quiver.formats import ConstructKind, DataOpKind, EventKind, EventLog
from quiver.formats.blocks import expand_blocks, mask_bits
from quiver.formats.jit import kernel
from quiver.formats.sets import sorted_unique
from quiver.replay.log_scan import has_target_race_work
from quiver.replay.nowait.async_text import DEPEND_CONSTRUCTS, RowText
from quiver.replay.nowait.device_copies import device_copies, space_key
from quiver.replay.nowait.happens_before import HappensBefore, build_happens_before
from quiver.replay.nowait.tasks import TaskModel, build_task_model, lookup, pack
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import Finding, FindingKind, Related, Site, merge_findings

COLUMNS = ("kind", "rank", "thread", "device", "loc", "addr", "addr2", "size", "id", "id2", "op", "name", "aux",
           "aux2")


def access_records(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Byte-range operations of every event: accesses, both sides of copies, device alloc/release."""
    kind, op = cols["kind"], cols["op"]
    acc = np.flatnonzero(kind == int(EventKind.ACCESS))
    dop = kind == int(EventKind.DATA_OP)
    to = np.flatnonzero(dop & (op == int(DataOpKind.TRANSFER_TO)))
    frm = np.flatnonzero(dop & (op == int(DataOpKind.TRANSFER_FROM)))
    life = np.flatnonzero(dop & np.isin(op, [int(DataOpKind.ALLOC), int(DataOpKind.DELETE)]))

    def part(rows: np.ndarray, device_side: bool, write) -> dict[str, np.ndarray]:
        dev = cols["device"][rows] if device_side else np.full(len(rows), -1, np.int32)
        addr = (cols["addr2"] if device_side else cols["addr"])[rows]
        return {"row": rows.astype(np.int64), "space": space_key(cols["rank"][rows], dev),
                    "lo": addr.astype(np.int64), "hi": (addr + cols["size"][rows]).astype(np.int64),
                    "write": np.broadcast_to(np.asarray(write, dtype=bool), len(rows)).copy(),
                    "atomic": np.zeros(len(rows), bool), "device_part": np.full(len(rows), device_side)}

    blk, blo, bhi = expand_blocks(cols["addr"][acc], cols["size"][acc], cols["addr2"][acc], cols["aux2"][acc],
                                  cols["name"][acc], cols["id2"][acc], mask_bits(op[acc], cols["id2"][acc]))
    acc = acc[blk]  # one record per block of a strided run (per plane: format version 5; present slot: 6)
    a = part(acc, False, (op[acc] & 1) != 0)
    a["lo"], a["hi"] = blo, bhi
    a["space"] = space_key(cols["rank"][acc], cols["device"][acc])
    a["atomic"] = (op[acc] & 2) != 0
    a["device_part"] = cols["device"][acc] >= 0
    parts = [a, part(to, False, False), part(to, True, True), part(frm, True, False), part(frm, False, True),
             part(life, True, True)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


@kernel
def _interesting_segments(vc, seg_chain, seg_idx, seg_target, chain_start, chain_segs, chain_target_prefix):
    """A segment matters if it is concurrent with a target-task segment (or is one, concurrent with any)."""
    n_seg = len(seg_chain)
    n_chain = len(chain_start) - 1
    out = np.zeros(n_seg, dtype=np.bool_)
    for s in range(n_seg):
        c = seg_chain[s]
        i = seg_idx[s]
        for c2 in range(n_chain):
            if c2 == c:
                continue
            length = chain_start[c2 + 1] - chain_start[c2]
            lo = vc[s, c2]                 # idx <= lo: before s
            a, b = lo, length              # find first idx j in (lo, length] with s before j
            while a < b:
                mid = (a + b) // 2         # candidate idx mid + 1
                if vc[chain_segs[chain_start[c2] + mid], c] >= i:
                    b = mid
                else:
                    a = mid + 1
            first_after = a + 1            # idx of the first segment after s (length + 1 if none)
            if first_after - 1 <= lo:
                continue                   # nothing concurrent in c2
            if seg_target[s]:
                out[s] = True
                break
            base = chain_start[c2]
            n_target = chain_target_prefix[base + first_after - 1] - chain_target_prefix[base + lo]
            if n_target > 0:
                out[s] = True
                break
    return out


@kernel
def _merge_ranges(space, lo, hi, write, atomic, seg, loc, var, row, order):
    """Union of byte ranges per (space, segment, write, atomic, site, variable), earliest row kept."""
    n = len(order)
    keep = np.empty(n, dtype=np.int64)
    m_lo = np.empty(n, dtype=np.int64)
    m_hi = np.empty(n, dtype=np.int64)
    m_row = np.empty(n, dtype=np.int64)
    nk = 0
    for p in range(n):
        i = order[p]
        if nk > 0:
            j = keep[nk - 1]
            if (space[j] == space[i] and seg[j] == seg[i] and write[j] == write[i] and atomic[j] == atomic[i]
                    and loc[j] == loc[i] and var[j] == var[i] and lo[i] <= m_hi[nk - 1]):
                m_hi[nk - 1] = max(m_hi[nk - 1], hi[i])
                m_row[nk - 1] = min(m_row[nk - 1], row[i])
                continue
        keep[nk] = i
        m_lo[nk] = lo[i]
        m_hi[nk] = hi[i]
        m_row[nk] = row[i]
        nk += 1
    return keep[:nk], m_lo[:nk], m_hi[:nk], m_row[:nk]


@kernel
def _sweep(space, lo, hi, write, atomic, seg, ctx, target, mapping_op, sync_device, loc, var, vc, seg_chain,
           seg_idx, weight):
    """Pairs of overlapping, conflicting, unordered ranges (records sorted by space, lo)."""
    n = len(space)
    active = np.empty(n, dtype=np.int64)
    na = 0
    # (space, site, site, variable) -> finding; seeded with one entry for numba's typing, then emptied
    zero = np.int64(0)
    index = {(zero, zero, zero, zero): zero}
    index.clear()
    cap = 16
    first_a = np.empty(cap, dtype=np.int64)
    first_b = np.empty(cap, dtype=np.int64)
    nbytes = np.zeros(cap, dtype=np.int64)
    count = np.zeros(cap, dtype=np.int64)
    nf = 0
    for i in range(n):
        w = 0
        for q in range(na):
            a = active[q]
            if space[a] == space[i] and hi[a] > lo[i]:
                active[w] = a
                w += 1
        na = w
        for q in range(na):
            a = active[q]
            if not (write[a] or write[i]) or (atomic[a] and atomic[i]) or ctx[a] == ctx[i]:
                continue
            if not (target[a] or target[i]):
                continue
            if (mapping_op[a] and sync_device[i]) or (mapping_op[i] and sync_device[a]):
                continue   # the runtime's reference count orders a mapping's creation/release with its users
            sa = seg[a]
            sb = seg[i]
            if vc[sb, seg_chain[sa]] >= seg_idx[sa] or vc[sa, seg_chain[sb]] >= seg_idx[sb]:
                continue
            l1 = min(loc[a], loc[i])
            l2 = max(loc[a], loc[i])
            key = (np.int64(space[i]), np.int64(l1), np.int64(l2), np.int64(var[i] if var[i] >= 0 else var[a]))
            overlap = min(hi[a], hi[i]) - lo[i]
            if key in index:
                f = index[key]
                # show the most telling pair: writes and copies before reads, allocations last
                if weight[a] + weight[i] > weight[first_a[f]] + weight[first_b[f]]:
                    first_a[f] = a
                    first_b[f] = i
            else:
                if nf == cap:
                    cap *= 2
                    first_a = np.concatenate((first_a, np.empty(cap - nf, np.int64)))
                    first_b = np.concatenate((first_b, np.empty(cap - nf, np.int64)))
                    nbytes = np.concatenate((nbytes, np.zeros(cap - nf, np.int64)))
                    count = np.concatenate((count, np.zeros(cap - nf, np.int64)))
                f = nf
                index[key] = f
                first_a[f] = a
                first_b[f] = i
                nf += 1
            nbytes[f] += overlap
            count[f] += 1
        active[na] = i
        na += 1
    return first_a[:nf], first_b[:nf], nbytes[:nf], count[:nf]


def named_ranges(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(space, lo, hi, name) of the byte ranges the log names: map clauses and data ops, both sides."""
    kind, name = cols["kind"], cols["name"]
    named = name >= 0
    mc = np.flatnonzero((kind == int(EventKind.MAP_CLAUSE)) & named & (cols["size"] > 0))
    do = np.flatnonzero((kind == int(EventKind.DATA_OP)) & named & (cols["size"] > 0))
    host = np.full(len(mc) + len(do), -1, np.int32)
    sp = np.concatenate([space_key(cols["rank"][np.r_[mc, do]], host),
                         space_key(cols["rank"][do], cols["device"][do])])
    lo = np.concatenate([cols["addr"][mc], cols["addr"][do], cols["addr2"][do]]).astype(np.int64)
    size = np.concatenate([cols["size"][mc], cols["size"][do], cols["size"][do]]).astype(np.int64)
    nm = np.concatenate([name[mc], name[do], name[do]]).astype(np.int64)
    table = np.unique(np.stack([sp, lo, lo + size, nm], axis=1), axis=0) if len(sp) else np.zeros((0, 4), np.int64)
    return table[:, 0], table[:, 1], table[:, 2], table[:, 3]


def variables_of(space: np.ndarray, addr: np.ndarray, table) -> np.ndarray:
    """Name id of the named range holding each (space, addr): the innermost start <= addr (-1)."""
    t_space, t_lo, t_hi, t_name = table
    out = np.full(len(space), -1, np.int64)
    if len(t_space) == 0 or len(space) == 0:
        return out
    key_t = np.stack([t_space, t_lo])
    order = np.lexsort(key_t[::-1])
    ts, tl, th, tn = t_space[order], t_lo[order], t_hi[order], t_name[order]
    # search per space: combine (space, lo) into a sortable pair via structured search
    for sp in sorted_unique(space):
        sel = np.flatnonzero(space == sp)
        lo_i, hi_i = np.searchsorted(ts, sp, "left"), np.searchsorted(ts, sp, "right")
        if lo_i == hi_i:
            continue
        pos = np.searchsorted(tl[lo_i:hi_i], addr[sel], side="right") - 1
        ok = pos >= 0
        idx = lo_i + np.maximum(pos, 0)
        ok &= th[idx] > addr[sel]
        out[sel[ok]] = tn[idx[ok]]
    return out


def find_races(cols: dict[str, np.ndarray], hb: HappensBefore):
    """Raw race pairs: (records, a, b, bytes, count) with a/b indices into the merged records."""
    tm = hb.tasks
    recs = access_records(cols)
    # a device byte is the same copy only within one lifetime (device addresses are reused)
    # a device access outside every copy touched the memory at that address directly (host offloading)
    life = device_copies(cols)
    li = life.of(recs)
    direct = recs["device_part"] & (li < 0) & (cols["kind"][recs["row"]] == int(EventKind.ACCESS))
    recs["space"][direct] = space_key(cols["rank"][recs["row"][direct]], np.full(int(direct.sum()), -1))
    recs["space"] = (recs["space"] << 32) | (li + 1)
    seg = hb.seg[recs["row"]]
    ctx = tm.ctx[recs["row"]]
    target_ctx = tm.target_ctx
    # target operations: a target task's, and a target construct's copies and kernel accesses on any
    # host thread (it may race with another thread); a segment holding one is a target segment
    rec_target = target_ctx[ctx] | (cols["kind"][recs["row"]] == int(EventKind.DATA_OP)) | recs["device_part"]
    # chains listed in idx order, and which of their segments are target-task segments
    seg_target = target_ctx[hb.seg_ctx].copy()
    seg_target[seg[rec_target]] = True
    order = np.lexsort((hb.seg_idx, hb.seg_chain))
    n_chain = hb.vc.shape[1]
    chain_start = np.searchsorted(hb.seg_chain[order], np.arange(n_chain + 1))
    prefix = np.r_[0, np.cumsum(seg_target[order])].astype(np.int64)
    # prefix over chain positions: prefix[base + k] counts targets among the first k of the chain
    interesting = _interesting_segments(hb.vc, hb.seg_chain, hb.seg_idx, seg_target, chain_start, order,
                                        prefix)
    keep = interesting[seg] & (recs["hi"] > recs["lo"])
    mapping_op = _refcounted_device_ops(cols, recs, tm) & ~target_ctx[ctx]
    synchronous_device = recs["device_part"] & ~target_ctx[ctx]
    recs = {k: v[keep] for k, v in recs.items()}
    recs["target"] = rec_target[keep]
    recs["mapping_op"], recs["sync_device"] = mapping_op[keep], synchronous_device[keep]
    seg, ctx = seg[keep], ctx[keep]
    loc = cols["loc"][recs["row"]].astype(np.int64)
    var = variables_of(recs["space"] >> 32, recs["lo"], named_ranges(cols))
    o = np.lexsort((recs["lo"], var, loc, recs["atomic"], recs["write"], seg, recs["space"]))
    kept, m_lo, m_hi, m_row = _merge_ranges(recs["space"], recs["lo"], recs["hi"], recs["write"], recs["atomic"],
                                            seg, loc, var, recs["row"], o)
    merged = {k: v[kept] for k, v in recs.items()}
    merged["lo"], merged["hi"], merged["row"] = m_lo, m_hi, m_row
    merged["seg"], merged["ctx"], merged["loc"], merged["var"] = seg[kept], ctx[kept], loc[kept], var[kept]
    o = np.lexsort((merged["row"], merged["lo"], merged["space"]))
    merged = {k: v[o] for k, v in merged.items()}
    a, b, nbytes, count = _sweep(merged["space"], merged["lo"], merged["hi"], merged["write"], merged["atomic"],
                                 merged["seg"].astype(np.int64), merged["ctx"].astype(np.int64),
                                 merged["target"], merged["mapping_op"], merged["sync_device"], merged["loc"], merged["var"], hb.vc,
                                 hb.seg_chain, hb.seg_idx, _weight(cols, merged))
    return merged, a, b, nbytes, count


def _refcounted_device_ops(cols: dict[str, np.ndarray], recs: dict[str, np.ndarray], tm: TaskModel) -> np.ndarray:
    """Device sides of the copies, allocations and releases a map clause made (not `target update`).

    Why: with reference counting, a construct of another thread that finds the data present uses the
    copy only after its creation (allocation, copy-in) is complete, and the copy is released
    (copy-out, delete) only after the last user's exit: the runtime's mapping table orders them.
    """
    rows = recs["row"]
    dop = recs["device_part"] & (cols["kind"][rows] == int(EventKind.DATA_OP))
    cid = cols["id"][rows]
    ci = lookup(tm.constructs.keys, pack(cols["rank"][rows], np.maximum(cid, 0)), dop & (cid >= 0))
    update = (ci >= 0) & (np.r_[tm.constructs.kind, -1][ci] == int(ConstructKind.TARGET_UPDATE))
    return dop & ~update


def _weight(cols: dict[str, np.ndarray], recs: dict[str, np.ndarray]) -> np.ndarray:
    """How telling a record is as one side of a reported race: 2 write, 1 read, 0 allocate/release."""
    kind, op = cols["kind"][recs["row"]], cols["op"][recs["row"]]
    life = (kind == int(EventKind.DATA_OP)) & ~np.isin(op, [int(DataOpKind.TRANSFER_TO), int(DataOpKind.TRANSFER_FROM)])
    return np.where(life, 0, 1 + recs["write"].astype(np.int64))


def _order_key(tm: TaskModel, ctx: int, row: int) -> int:
    """Which side of a race is "the access": the later one in program terms (task launch for tasks)."""
    t = tm.task_of_ctx(ctx)
    if t >= 0 and tm.task_target[t] and tm.task_create_row[t] >= 0:
        return int(tm.task_create_row[t])
    return row


def _fix(text: RowText, var: str, other: tuple[int, int, bool], access: tuple[int, int, bool]) -> str:
    """The missing synchronisation, in terms of the two constructs' lines."""
    (row_a, ctx_a, _w_a), (row_b, ctx_b, write_b) = other, access
    ca, cb = text.task_construct(ctx_a), text.task_construct(ctx_b)
    v = var or "the variable"
    if ca >= 0 and cb >= 0:
        la, lb = text.construct_line(ca), text.construct_line(cb)
        dep = "inout" if write_b else "in"
        return (f"order the two target tasks: add `depend(out: {v})` to the construct at line {la} and "
                f"`depend({dep}: {v})` to the construct at line {lb}, or put a `#pragma omp taskwait` between them")
    task_ci = ca if ca >= 0 else cb
    host_row = row_b if ca >= 0 else row_a
    lt = text.construct_line(task_ci)
    waits = f"it waits for {text.construct_name(task_ci)}"
    host_ci = text.construct_of_row(host_row)
    host_kind = text.construct_kind(host_ci)
    if host_kind == int(ConstructKind.TARGET_DATA_END):
        return (f"add `#pragma omp taskwait` before the end of the `target data` region of line "
                f"{text.construct_line(host_ci)} ({waits})")
    if host_kind in DEPEND_CONSTRUCTS:
        hl = text.construct_line(host_ci)
        return (f"add `#pragma omp taskwait` before line {hl} ({waits}), or add `depend(out: {v})` to the "
                f"construct at line {lt} and `depend(inout: {v})` to the construct at line {hl}")
    return f"add `#pragma omp taskwait` before line {text.site(host_row).line} ({waits})"


def _threads_fix(text: RowText, site_a: Site, row_a: int, site_b: Site, row_b: int, in_tasks: bool = False) -> str:
    """Two host threads' (or explicit tasks') operations, a target region on one of them, that nothing orders."""
    def where(row: int, site: Site) -> str:
        ci = text.construct_of_row(row)
        line = text.construct_line(ci) if ci >= 0 else site.line
        what = text.construct_name(ci).split(" (line")[0] if ci >= 0 else "the access"
        return f"{what} at line {line} (thread {site.thread})"

    if in_tasks:  # sibling tasks may run on one thread or two: only task synchronisation orders them
        return (f"order {where(row_a, site_a)} and {where(row_b, site_b)}: they run in explicit tasks that "
                "nothing orders; give both task constructs `depend` clauses on the variable (out/in), or put "
                "a `#pragma omp taskwait` (or end a `taskgroup`) between creating the first task and the second")
    return (f"order {where(row_a, site_a)} and {where(row_b, site_b)}: run them on one thread, or put a "
            "barrier between them (a separate worksharing construct, no `nowait`), or make both `critical` "
            "(the same name) or hold the same lock, or make them tasks ordered by `depend`")


def race_findings(log: EventLog, cols: dict[str, np.ndarray], hb: HappensBefore) -> list[Finding]:
    merged, a_idx, b_idx, nbytes, count = find_races(cols, hb)
    tm = hb.tasks
    text = RowText(log, cols, tm)
    table = named_ranges(cols)
    out: list[Finding] = []
    for a, b, nb, cnt in zip(a_idx.tolist(), b_idx.tolist(), nbytes.tolist(), count.tolist()):
        ka = _order_key(tm, int(merged["ctx"][a]), int(merged["row"][a]))
        kb = _order_key(tm, int(merged["ctx"][b]), int(merged["row"][b]))
        if (ka, int(merged["row"][a])) > (kb, int(merged["row"][b])):
            a, b = b, a
        var_id = int(merged["var"][b]) if merged["var"][b] >= 0 else int(merged["var"][a])
        var = log.string(var_id) if var_id >= 0 else None
        sides = []
        for r in (a, b):
            row = int(merged["row"][r])
            dev_part = bool(merged["device_part"][r])
            sides.append((row, text.site(row, side="device" if dev_part else "host"),
                          text.operation(row, bool(merged["write"][r]), dev_part)))
        (row_a, site_a, op_a), (row_b, site_b, op_b) = sides
        space = (int(merged["space"][b]) >> 32) & 0xFFFFF
        copy = "host copy" if space == 0 else f"device copy (device {space - 1})"
        name = f"`{var}`" if var else "unnamed memory"
        message = f"data race on the {copy} of {name}: {op_b} is not ordered with {op_a}"
        if tm.target_ctx[int(merged["ctx"][a])] or tm.target_ctx[int(merged["ctx"][b])]:
            fix = _fix(text, var or "", (row_a, int(merged["ctx"][a]), bool(merged["write"][a])),
                       (row_b, int(merged["ctx"][b]), bool(merged["write"][b])))
        else:
            in_tasks = bool(int(merged["ctx"][a]) >= tm.n_threads or int(merged["ctx"][b]) >= tm.n_threads)
            fix = _threads_fix(text, site_a, row_a, site_b, row_b, in_tasks)
            who = "explicit tasks on host threads" if in_tasks else "host threads"
            message += f" ({who} {site_a.thread} and {site_b.thread})"
        lo = max(int(merged["lo"][a]), int(merged["lo"][b]))
        start = _range_start(table, int(merged["space"][b]) >> 32, lo)
        out.append(Finding(
            kind=FindingKind.DATA_RACE, message=message, access=site_b, variable=var,
            related=[Related("other-access", site_a, op_a)], fix=fix, bytes=int(nb), occurrences=int(cnt),
            details={"copy": "host" if space == 0 else "device", "device": space - 1 if space else -1,
                     "access": op_b, "other_access": op_a,
                     "offset": lo - start if start is not None else None},
        ))
    return merge_findings(out)


def _range_start(table, space: int, addr: int) -> int | None:
    """Start of the innermost named range holding ``addr``, for byte offsets in reports."""
    t_space, t_lo, t_hi, _ = table
    hit = (t_space == space) & (t_lo <= addr) & (t_hi > addr)
    return int(t_lo[hit].max()) if hit.any() else None


def load_columns(log: EventLog) -> dict[str, np.ndarray]:
    return {c: log.col(c) for c in COLUMNS}


def check_races(log: EventLog, options: CheckOptions) -> list[Finding]:
    """Unordered conflicting operations around deferred (`nowait`) target tasks."""
    if not has_target_race_work(log):
        return []
    cols = load_columns(log)
    tm = build_task_model(log, cols)
    if not tm.target_ctx.any() and tm.n_threads < 2:
        return []
    hb = build_happens_before(log, cols, tm)
    return race_findings(log, cols, hb)
