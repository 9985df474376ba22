"""The layout the VSM kernel (vsm_kernel.c) and its Python side share: key shifts, shadow bits, event
codes and the columns of the kernel's state tables.

The one definition: ``vsm_native`` passes these values to the C compiler as ``-D`` flags, and
``quiver.replay.mapping.vsm`` sizes and reads the tables with them.

Keys: a host address is keyed as ``rank << 48 | addr``; a device address as
``(rank * ndev + dense_device) << 48 | addr``, so one sorted array serves all ranks and devices.
Shadow bits per tracked host byte: ``OVV`` (OV valid) 1, ``OVI`` (OV initialised) 2, and per dense
device d: CV valid ``4 << 2d`` and CV initialised ``8 << 2d``.
"""

from __future__ import annotations

import numpy as np
from quiver.formats import AccessFlag, DataOpKind, EventKind, MapType

SHIFT = 48
ADDR_MASK = (1 << SHIFT) - 1
CKEY_SHIFT = 40
BIG = np.int64(1) << np.int64(62)

OVV = 1
OVI = 2

K_ALLOC = int(EventKind.ALLOC)
K_FREE = int(EventKind.FREE)
K_MAP = int(EventKind.MAP_CLAUSE)
K_DATA = int(EventKind.DATA_OP)
K_ACCESS = int(EventKind.ACCESS)
D_ALLOC = int(DataOpKind.ALLOC)
D_TO = int(DataOpKind.TRANSFER_TO)
D_FROM = int(DataOpKind.TRANSFER_FROM)
D_DELETE = int(DataOpKind.DELETE)
D_ASSOC = int(DataOpKind.ASSOCIATE)
D_DISASSOC = int(DataOpKind.DISASSOCIATE)
A_WRITE = int(AccessFlag.WRITE)
A_MASKED = int(AccessFlag.MASKED)   # a masked run (format version 6): id2 is its slots' bitmap
M_NO_DATA = int(MapType.LITERAL) | int(MapType.PRIVATE)
M_MOTION = int(MapType.TO) | int(MapType.FROM)

# finding kinds (codes of mapping_events.DETECTION_KINDS, 1-based)
FK_UUM, FK_STALE, FK_OVERFLOW, FK_SECTION, FK_UNMAPPED = 1, 2, 3, 4, 5
# dedup key part of an unmapped-memory finding: this plus the host object's key (below every clause key)
KX_OBJECT = -(1 << 61)

# control table columns
(CT_KIND, CT_RANK, CT_DI, CT_LOC, CT_ADDR, CT_ADDR2, CT_SIZE, CT_ID, CT_OP, CT_NAME, CT_CLROW, CT_AUX,
 CT_N) = range(13)
# clause table columns (CL_OBJLO / CL_OBJHI are written by the kernel when the clause is applied)
CL_EVENT, CL_CKEY, CL_HOST, CL_SIZE, CL_NAME, CL_TYPE, CL_LOC, CL_OBJLO, CL_OBJHI, CL_N = range(10)
# mapping-entry table columns (one row per CV mapping ever created, in creation order)
(EN_HOST, EN_DEV, EN_SIZE, EN_SHADOW, EN_DI, EN_RANK, EN_CLAUSE, EN_CREATE, EN_RELEASE, EN_NAME,
 EN_N) = range(11)
# counters (C_EPOCH: the event index of the last control event applied; accesses between two control
# events are one epoch, e.g. the threads of one kernel, and a finding shows its lowest bad byte of
# its first epoch, so that the thread that happened to run first does not change the report)
# C_NMEMO, C_MEMO_NEXT: entries of the strided memo (below) and the slot it overwrites next when full;
# C_STRIDED_FAST: strided rows settled without a pass over their blocks (their span's block bounds or the
# memo decided them); C_STRIDED_ROWS: blocks of strided rows applied one by one (tests read both)
(C_NLIVE, C_NENT, C_NALLOC, C_NFIND, C_GEN, C_DROPPED, C_LE_N, C_LE_LO, C_LE_HI, C_LE_E,
 C_WIN_KEY, C_WIN_DEV, C_WIN_GEN, C_NWIN, C_STOP, C_EPOCH, C_NMEMO, C_MEMO_NEXT, C_STRIDED_FAST,
 C_STRIDED_ROWS, C_N) = range(21)
# finding table columns
(F_KIND, F_RANK, F_DI, F_LOC, F_KX, F_ENTRY, F_CLAUSE, F_EVENT, F_HOST, F_DEV, F_SHADOW, F_BYTES, F_OCC,
 F_LASTEV, F_LASTHOST, F_WIDTH, F_ASIZE, F_RELEASE, F_NAME, F_OBJLO, F_OBJHI, F_EPOCH, F_N) = range(23)


# ---------------------------------------------------------------------------------------------
# The shadow in blocks. Every 2**lgb consecutive shadow bytes (``LOG_BLOCK`` unless a test asks for
# smaller blocks) form a block with two bounds:
# ``blo[b]`` (bits set in every byte of the block) and ``bhi[b]`` (bits set in some byte). When they
# are equal the block is *uniform*: each byte holds that value and the bytes in ``shadow`` are not
# kept (they are written only when a partial operation splits the block). Every operation is a
# per-byte bit map (``fmap`` in vsm_kernel.c), so uniform blocks are updated in O(1), a read of a block whose
# lower bound has the valid bit needs no byte scan, and what remains are vectorised slice loops.
LOG_BLOCK = 12
# bit maps: v -> (v & keep) | set, plus a copy of the OV bits into a CV (TO) or back (FROM)
MAP_PLAIN, MAP_TO, MAP_FROM = 0, 1, 2

# The strided memo: what the kernel knows of the shadow bytes under the strided rows it applied last.
# An entry (SM_S0, SM_STEP, SM_SZ, SM_ROWS, SM_PSTEP, SM_PLANES, SM_MASK, SM_WANT) says that every shadow
# byte v of the rows [s0 + j * pstep + i * step, + sz), i < rows, j < planes, has (v & mask) == want
# (planes: the same run of rows every pstep bytes, e.g. the interior rows of a 3-D grid's planes): a
# strided write whose bit map changes no such byte, or a strided read of bits such bytes have, needs no
# pass over its rows. Every change of shadow bytes drops the rows (or planes) it touches from the entries
# (vsm_kernel.c memo_drop), so an entry stays true; it is a cache: an empty memo only costs time.
SM_S0, SM_STEP, SM_SZ, SM_ROWS, SM_PSTEP, SM_PLANES, SM_MASK, SM_WANT, SM_COLS = range(9)
SM_CAP = 32
# Strided rows of fewer blocks neither ask nor feed the memo: their own blocks cost less than a look at
# every entry, and a stream of them (the tracer's short strided runs of a conditional store's scattered
# elements: 2-4 blocks) filled the memo with entries nothing reuses, so every row then paid for 32 (the
# VSM at 1.7 M events/s on bench/unseen3/masked.c). Loop nests' records have a row per iteration of a loop.
SM_MIN_ROWS = 5
