"""The C library of finalize's per-record passes (native/qv_finalize.c), loaded without numpy.

Why apart from finalize_c.py (its numpy wrappers): a small run's finalize (finalize_small.py) calls
the same functions on array.array and bytearray buffers, and must not import numpy.
"""

from __future__ import annotations

import ctypes
import functools

from quiver.formats.schema import AccessFlag, EventKind
from quiver.formats.stats import KINDS
from quiver.tracer.rawread import F_AUX2_STR, F_AUX_STR, F_ID2_STR, F_NAME_INT, F_PC_RET

LIB = "libquiver_finalize.so"


class Consts(ctypes.Structure):
    _fields_ = [(f, ctypes.c_int64) for f in (
        "access", "alloc", "construct_begin", "construct_end", "map_clause", "task_create", "task_depend",
        "win_create", "f_pc_ret", "f_name_int", "f_id2_str", "f_aux_str", "f_aux2_str", "kinds", "masked")]


class Maps(ctypes.Structure):
    _fields_ = [("table", ctypes.c_void_p), ("n_table", ctypes.c_int64), ("by_string", ctypes.c_void_p),
                ("n_by_string", ctypes.c_int64), ("pcs", ctypes.c_void_p), ("by_pc", ctypes.c_void_p),
                ("n_pcs", ctypes.c_int64), ("task_keys", ctypes.c_void_p), ("task_locs", ctypes.c_void_p),
                ("n_tasks", ctypes.c_int64), ("fix_pos", ctypes.c_void_p), ("fix_op", ctypes.c_void_p),
                ("n_fix", ctypes.c_int64)]


CONSTS = Consts(*(int(k) for k in (EventKind.ACCESS, EventKind.ALLOC, EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END,
                                  EventKind.MAP_CLAUSE, EventKind.TASK_CREATE, EventKind.TASK_DEPEND,
                                  EventKind.WIN_CREATE)),
                 F_PC_RET, F_NAME_INT, F_ID2_STR, F_AUX_STR, F_AUX2_STR, KINDS, int(AccessFlag.MASKED))


@functools.cache
def library() -> ctypes.CDLL | None:
    """The library of the current tracer sources, built if need be; None when it cannot be."""
    from quiver.tracer.native import BuildError, ensure_built

    try:
        lib = ctypes.CDLL(str(ensure_built() / LIB))
    except (BuildError, OSError):
        return None
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.qv_fin_scan.argtypes = [p, i64, i64, i64, p, p, p, p, i64, p, p, p, p, p, p]
    lib.qv_fin_scan.restype = None
    lib.qv_fin_group.argtypes = [p, i64, p, i64, p, p, p]
    lib.qv_fin_group.restype = None
    lib.qv_fin_fill.argtypes = [p, p, p, i64, i64, i64, i64, p, p, p, p, p, i64]
    lib.qv_fin_fill.restype = None
    lib.qv_fin_fill_cols.argtypes = [p, p, p, i64, i64, i64, i64, p, p, p, p, p]
    lib.qv_fin_fill_cols.restype = None
    lib.qv_fin_window.argtypes = [p, i64, p, i64, i64, i64, p, p, i64]
    lib.qv_fin_window.restype = i64
    lib.qv_fin_order.argtypes = [p, i64, p, p]
    lib.qv_fin_order.restype = None
    lib.qv_fin_times.argtypes = [p, i64, p]
    lib.qv_fin_times.restype = None
    lib.qv_fin_delta.argtypes = [p, i64, p]
    lib.qv_fin_delta.restype = None
    lib.qv_fin_fixes.argtypes = [p, p, p, p, p, p, i64, p, p, p, p]
    lib.qv_fin_fixes.restype = i64
    lib.qv_fin_select_kind_rank.argtypes = [p, p, i64, i64, i64, p]
    lib.qv_fin_select_kind_rank.restype = i64
    lib.qv_fin_gather.argtypes = [p, i64, p, i64, p]
    lib.qv_fin_gather.restype = None
    return lib
