"""What an analysis could not check, and why: the report never says "clean" when it could not see.

A blind spot is one reason (no memory accesses in the log, no OpenMP offloading or MPI-RMA events
where a requested check needs them, a truncated log, ...) with the checks it blinds. Every report
format renders the list (text warnings, JSON ``blind_spots``, SARIF tool notifications), and
``trace analyze --fail-on-blind`` exits 4 when it is not empty and nothing worse was found. Other
producers (e.g. a finer truncation statement) append their own ``BlindSpot`` to the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from quiver.formats import EventKind

# Events each family of checks needs besides memory accesses.
OFFLOAD_KINDS = (EventKind.CONSTRUCT_BEGIN, EventKind.MAP_CLAUSE, EventKind.DATA_OP, EventKind.KERNEL)
RMA_KINDS = (EventKind.WIN_CREATE, EventKind.RMA)
OFFLOAD_CHECKS = ("mapping", "race", "schedules", "transfers", "redundant-transfer")
RMA_CHECKS = ("rma",)
ACCESS_CHECKS = (*OFFLOAD_CHECKS, *RMA_CHECKS)


@dataclass(frozen=True)
class BlindSpot:
    reason: str                              # stable code: no-accesses, no-offload, no-rma, nothing-recorded, truncated
    message: str                             # one line for people: what could not be checked and why
    checks: tuple[str, ...] = field(default=())  # the checks it blinds (empty: all of them)

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "checks": list(self.checks), "message": self.message}


def kinds_present(batches: Iterable[dict[str, np.ndarray]]) -> set[int]:
    """The event kinds that occur, from ``kind``-column batches (a projected scan)."""
    seen = np.zeros(256, dtype=bool)
    for b in batches:
        seen[b["kind"].astype(np.int64) & 0xFF] = True
    return {int(k) for k in np.flatnonzero(seen)}


def find_blind_spots(run: dict[str, Any], kinds: set[int], checks: list[str], explicit: bool,
                     truncation_note: str = "") -> list[BlindSpot]:
    """Blind spots of running ``checks`` over a log with ``run`` metadata and these event ``kinds``.

    ``explicit``: the user named the checks (--check); then a check whose events are absent is a
    blind spot. With the default selection only a log with nothing to check at all is one (an
    MPI-only program is not "blind" because it has no OpenMP constructs)."""
    out: list[BlindSpot] = []
    if truncation_note:
        out.append(BlindSpot("truncated", truncation_note))
    offload = any(int(k) in kinds for k in OFFLOAD_KINDS)
    rma = any(int(k) in kinds for k in RMA_KINDS)
    if not offload and not rma:
        if truncation_note and not kinds:
            return out   # a truncated log without events: its truncation statement says it all
        out.append(BlindSpot("nothing-recorded", "no OpenMP target constructs and no MPI-RMA windows were "
                             "recorded: nothing could be checked (was the program built with OpenMP offloading "
                             "or MPI-RMA and run under `trace record`?)", tuple(checks)))
        return out
    if explicit:
        missing = [c for c in checks if (c in OFFLOAD_CHECKS and not offload)]
        if missing:
            out.append(BlindSpot("no-offload", f"could not check {', '.join(missing)}: the log has no OpenMP "
                                 "target constructs", tuple(missing)))
        missing = [c for c in checks if (c in RMA_CHECKS and not rma)]
        if missing:
            out.append(BlindSpot("no-rma", f"could not check {', '.join(missing)}: the log has no MPI-RMA "
                                 "windows", tuple(missing)))
    if not run.get("has_accesses", True):
        blinded = [c for c in checks if (c in OFFLOAD_CHECKS and offload) or (c in RMA_CHECKS and rma)]
        if blinded:
            out.append(BlindSpot("no-accesses", f"could not check {', '.join(blinded)}: no memory accesses were "
                                 "recorded (the program was not built with `trace cc` / `trace mpicc`), so reads "
                                 "of stale or uninitialised data, overflows and races with loads and stores "
                                 "cannot be seen", tuple(blinded)))
    return out
