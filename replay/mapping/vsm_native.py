"""The C VSM kernel (vsm_kernel.c): built on first use, called through ctypes.

Why C and not numba: `trace analyze` of a small log would spend most of its time starting numba
(~0.3 s CPU: its import, its CPU target, loading cached code); this library loads in a millisecond.
It is compiled on first use (and by ``make setup``) into the user's cache (formats/native_build.py),
for this machine, with the layout constants of ``vsm_layout`` passed as ``-D`` flags (one source).

The ctypes structs below mirror vsm_kernel.h field by field: change both.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
from quiver.formats.native_build import build_library
from quiver.replay.mapping import vsm_layout as K

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "vsm_kernel.c"
HEADERS = [HERE / "vsm_kernel.h", HERE / "vsm_shadow.h"]
# -fwrapv: int64 arithmetic wraps, as it did in numba (see vsm_kernel.c)
# -O3: gcc's -O2 vectorises only loops of known trip count, and the shadow byte scans (a write into a
# block half halo, half interior rescans its bytes every sweep) must be vectorised
# build_library adds the CPU's vector level (native_build.cpu_level): those scans then run 32 or 64 bytes at a time
CFLAGS = ["-O3", "-std=gnu11", "-fwrapv", "-fno-strict-aliasing", "-Wall"]
# the constants of vsm_layout the C code uses (names as in vsm_layout)
LAYOUT_NAMES = ("SHIFT", "ADDR_MASK", "BIG", "CKEY_SHIFT", "OVV", "OVI", "K_ALLOC", "K_FREE", "K_MAP", "K_DATA", "K_ACCESS", "D_ALLOC",
                "D_TO", "D_FROM", "D_DELETE", "D_ASSOC", "D_DISASSOC", "A_WRITE", "A_MASKED", "M_NO_DATA", "M_MOTION",
                "FK_UUM", "FK_STALE", "FK_OVERFLOW", "FK_SECTION", "FK_UNMAPPED", "KX_OBJECT", "MAP_PLAIN", "MAP_TO",
                "MAP_FROM")
TABLE_PREFIXES = ("CT_", "CL_", "EN_", "C_", "F_", "SM_")

_P = ctypes.c_void_p
_I = ctypes.c_int64


class Columns(ctypes.Structure):
    _fields_ = [(n, _P) for n in ("kind", "rank", "device", "loc", "addr", "size", "eid", "op", "aux", "stride",
                                  "blocks", "planes", "pstride")] + [("lazy", _I)]


class Selection(ctypes.Structure):
    _fields_ = [("rows", _P), ("first", _I), ("n_rows", _I), ("base", _I)]


class Tables(ctypes.Structure):
    _fields_ = [("ct_event", _P), ("ct", _P), ("n_ct", _I), ("clk_keys", _P), ("clk_rows", _P), ("n_clk", _I),
                ("devmap", _P), ("n_devmap", _I), ("ndev", _I), ("all_cvv", _I), ("tr_lo", _P), ("tr_hi", _P),
                ("tr_base", _P), ("n_tr", _I)]


class State(ctypes.Structure):
    _fields_ = [("cl", _P), ("shadow", _P), ("blo", _P), ("bhi", _P), ("bcnt", _P), ("nblocks", _I), ("lgb", _I),
                ("en", _P), ("lv_key", _P), ("lv_en", _P), ("al_lo", _P), ("al_hi", _P), ("ctr", _P), ("win", _P),
                ("n_win", _I), ("fd", _P), ("fd_cap", _I), ("fd_hash", _P), ("fd_hash_len", _I), ("memo", _P)]


class Watch(ctypes.Structure):
    _fields_ = [("wa_sh", _P), ("wa_id", _P), ("wa_done", _P), ("wh", _P), ("wn", _P), ("n_wa", _I), ("hmax", _I),
                ("st_ev", _P), ("st_w", _P), ("n_st", _I)]


def layout_flags() -> list[str]:
    """``-DNAME=value`` for every constant of vsm_layout the kernel uses."""
    names = [n for n in dir(K) if n.startswith(TABLE_PREFIXES) and n.isupper()] + list(LAYOUT_NAMES)
    return [f"-D{n}={int(getattr(K, n))}LL" for n in sorted(set(names))]


_LIB: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """The kernel's library, compiled first if this machine has not built these sources yet (BuildError
    when it cannot be: no C compiler, or the build failed)."""
    global _LIB
    if _LIB is None:
        lib = ctypes.CDLL(str(build_library("quiver_vsm", [SOURCE], [*CFLAGS, *layout_flags()], HEADERS)))
        lib.qv_vsm_apply.argtypes = [ctypes.POINTER(Columns), ctypes.POINTER(Selection), ctypes.POINTER(Tables),
                                     ctypes.POINTER(State), ctypes.POINTER(Watch), _I]
        lib.qv_vsm_apply.restype = None
        lib.qv_vsm_copy_split_blocks.argtypes = [_P, _P, _P, _P, _I, _I, _I]
        lib.qv_vsm_copy_split_blocks.restype = None
        _LIB = lib
    return _LIB


def ptr(a: np.ndarray | None) -> int | None:
    """The data pointer of a C-contiguous array (None for None or an empty array)."""
    if a is None or not a.size:
        return None
    if not a.flags.c_contiguous:   # the kernel indexes it as one block of memory
        raise ValueError("the VSM kernel needs C-contiguous arrays")
    return a.ctypes.data
