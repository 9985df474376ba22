"""The checkers `trace analyze --check` can select, imported lazily.

A checker is a pure function ``check(log: EventLog, options: CheckOptions) -> list[Finding]``:
no I/O, no global state, so it can run on a shard in another process and its findings merge
deterministically.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from quiver.formats import EventLog
from quiver.replay.report.findings import Finding


@dataclass(frozen=True)
class CheckOptions:
    max_schedules: int = 64
    baseline: bool = False          # MPI-RMA: run exactly the paper's epoch algorithm
    extra: dict[str, Any] = field(default_factory=dict)


Checker = Callable[[EventLog, CheckOptions], list[Finding]]

# name -> (module, function, on by default, what it finds)
CHECKERS: dict[str, tuple[str, str, bool, str]] = {
    "mapping": ("quiver.replay.mapping.vsm", "check_mapping", True,
                "use of uninitialised memory / stale data (VSM) and buffer overflows"),
    "race": ("quiver.replay.nowait.races", "check_races", True,
             "unordered conflicting accesses and copies around nowait target tasks"),
    "schedules": ("quiver.replay.nowait.schedules", "check_schedules", True,
                  "mapping issues that only some nowait schedules show"),
    "rma": ("quiver.replay.rma.check", "check_rma", True, "MPI-RMA data races"),
    "transfers": ("quiver.replay.transfers.advice", "check_transfers", False,
                  ("wasted data movement (advisory): unused / duplicate transfers, round trips, repeated / "
                   "unused allocations")),
}
# older names still accepted by --check
ALIASES: dict[str, str] = {"redundant-transfer": "transfers"}


# checker -> scan in quiver.replay.log_scan that says whether a log has anything for it: a log
# without is not given to the checker, whose module (and numba) is then never imported
GATES: dict[str, str] = {"race": "has_target_race_work", "schedules": "has_async_target_work", "rma": "has_rma"}


def available_checkers(names: list[str] | None = None) -> dict[str, Checker]:
    """Checkers (of ``names``, default all) whose module is installed (a checker still being built is
    simply absent). Only those modules are imported (their numba kernels import numba on first compiled
    call, formats/jit.py); a gated one is imported only for a log its scan accepts."""
    out: dict[str, Checker] = {}
    for name, (module, func, _default, _doc) in CHECKERS.items():
        if names is not None and name not in names:
            continue
        if name in GATES:
            if importlib.util.find_spec(module) is not None:
                out[name] = partial(_gated, GATES[name], module, func)
            continue
        try:
            out[name] = getattr(importlib.import_module(module), func)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
    return out


def _gated(gate: str, module: str, func: str, log: EventLog, options: CheckOptions) -> list[Finding]:
    from quiver.replay import log_scan

    if not getattr(log_scan, gate)(log):
        return []
    return getattr(importlib.import_module(module), func)(log, options)


def default_checkers() -> list[str]:
    return [name for name, (_m, _f, default, _d) in CHECKERS.items() if default]
