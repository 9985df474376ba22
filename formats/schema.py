"""The event-log schema: one Arrow table, fixed-width integer columns, codes below.

Everything that knows the byte layout of a quiver log lives in ``quiver.formats``.
FORMAT.md (next to this file) documents every column for every event kind.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from quiver.formats.sniff import FORMAT_NAME, META_FORMAT  # noqa: F401 -- part of the schema's names

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT_VERSION = 6
# Oldest version this quiver still reads: version 1 logs are version 2 logs without strided ACCESS rows,
# version 2 logs are version 3 logs without per-batch checksums (read unchecked), version 3 logs are
# version 4 logs with absolute `addr` values, version 4 logs are version 5 logs without planes of
# strided ACCESS rows (`name` >= 2, formats/blocks.py), version 5 logs are version 6 logs without masked
# ACCESS rows (`op` bit AccessFlag.MASKED).
MIN_FORMAT_VERSION = 1
# From this version on, a record batch stores `addr` delta-coded (formats/addr_delta.py).
DELTA_ADDR_VERSION = 4
# From this version on, an ACCESS row with `name` >= 2 stands for `name` planes of its strided run.
PLANES_VERSION = 5
# From this version on, an ACCESS row with `op` & AccessFlag.MASKED is a masked run (FORMAT.md): `aux2` slots
# of `size` bytes every `addr2` bytes, slot i present iff bit i of `id2` is set.
MASKED_VERSION = 6
MAX_MASK_SLOTS = 64   # slots of a masked row: its bitmap is one int64

# Schema-metadata keys (values are UTF-8 JSON, except the version; META_FORMAT's is FORMAT_NAME, both
# declared in sniff.py, which tells a log from its footer without numpy).
META_VERSION = b"quiver.format_version"
META_RUN = b"quiver.run"
META_STRINGS = b"quiver.strings"
META_LOCATIONS = b"quiver.locations"

# (name, numpy dtype). Order is the on-disk column order.
COLUMNS: list[tuple[str, str]] = [
    ("time_ns", "int64"),   # monotonic ns since the run started
    ("rank", "int32"),      # MPI rank (0 for non-MPI runs)
    ("thread", "int32"),    # tracer thread index within the rank
    ("kind", "int16"),      # EventKind
    ("device", "int32"),    # OpenMP device number, -1 = host side
    ("loc", "int32"),       # index into the location table, -1 = unknown
    ("addr", "uint64"),     # primary address (see FORMAT.md per kind)
    ("addr2", "uint64"),    # secondary address
    ("size", "uint64"),     # bytes
    ("id", "int64"),        # primary object id (construct, task, window, allocation)
    ("id2", "int64"),       # secondary id (target task, peer rank, request)
    ("op", "int32"),        # sub-kind code (map-type bits, data-op kind, RMA op, sync kind, R/W)
    ("name", "int32"),      # string id (variable, clause text), -1 = none
    ("aux", "int64"),       # kind-specific integer
    ("aux2", "int64"),      # kind-specific integer
]
COLUMN_NAMES = [c for c, _ in COLUMNS]
# bytes and signedness of each type of COLUMNS (formats/ipc_file.py writes small logs without numpy)
TYPE_WIDTH = {"int16": (2, True), "int32": (4, True), "int64": (8, True), "uint64": (8, False)}
# array.array typecodes of the same types (a small run's finalize builds its columns with them)
TYPE_CODES = {"int16": "h", "int32": "i", "int64": "q", "uint64": "Q"}
# Value a writer puts in a column the event kind does not use.
COLUMN_DEFAULTS = {
    "time_ns": 0, "rank": 0, "thread": 0, "kind": 0, "device": -1, "loc": -1, "addr": 0,
    "addr2": 0, "size": 0, "id": -1, "id2": -1, "op": 0, "name": -1, "aux": 0, "aux2": 0,
}



def __getattr__(name: str):
    """COLUMN_DTYPES (numpy dtypes by column) on first use: importing the schema must not import numpy."""
    if name == "COLUMN_DTYPES":
        import numpy as np

        globals()[name] = value = {c: np.dtype(t) for c, t in COLUMNS}
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def arrow_fields() -> list[pa.Field]:
    """The columns as Arrow fields (pyarrow is imported here, not with the schema: finalizing a small
    run writes its log without it, formats/ipc_file.py)."""
    import pyarrow as pa

    types = {"int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "uint64": pa.uint64()}
    return [pa.field(name, types[t], nullable=False) for name, t in COLUMNS]


def arrow_schema(metadata: dict[bytes, bytes] | None = None) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(arrow_fields(), metadata=metadata)


class EventKind(IntEnum):
    """Value of the ``kind`` column."""

    # memory
    ALLOC = 10            # heap allocation of memory that may be tracked
    FREE = 11
    # OpenMP offloading
    CONSTRUCT_BEGIN = 20  # a target / target data / enter / exit / update construct begins
    CONSTRUCT_END = 21
    MAP_CLAUSE = 22       # one map clause as written, at construct begin
    DATA_OP = 23          # one data operation as the runtime performed it
    KERNEL = 24           # kernel submitted to a device
    # tasks
    TASK_CREATE = 30
    TASK_DEPEND = 31
    TASK_BEGIN = 32
    TASK_END = 33
    SYNC = 40             # OpenMP synchronisation (SyncKind)
    # accesses
    ACCESS = 50           # a (coalesced) memory access range
    # MPI
    WIN_CREATE = 60
    WIN_FREE = 61
    WIN_ATTACH = 62
    WIN_DETACH = 63
    RMA = 64              # one RMA communication call (RmaOp)
    MPI_SYNC = 65         # RMA synchronisation (MpiSyncKind)
    MPI_REQUEST = 66      # completion of a request (Rput/Rget/...)
    MPI_MESSAGE = 67      # point-to-point / collective used for ordering (MessageKind)


class AllocKind(IntEnum):
    """``op`` of ALLOC: how the memory was obtained."""

    MALLOC = 1
    CALLOC = 2
    REALLOC = 3
    ALIGNED = 4        # aligned_alloc / posix_memalign / memalign
    GLOBAL = 5         # a global object behind a mapped section (symbol table, finalize)
    STACK = 6          # a stack object behind a mapped section (debug info, finalize)
    NEW = 7            # C++ operator new
    NEW_ARRAY = 8      # C++ operator new[]


class ConstructKind(IntEnum):
    """``op`` of CONSTRUCT_BEGIN / CONSTRUCT_END / KERNEL."""

    TARGET = 1
    TARGET_DATA = 2        # a `target data` region (begin and end are separate constructs)
    TARGET_ENTER_DATA = 3
    TARGET_EXIT_DATA = 4
    TARGET_UPDATE = 5
    TARGET_DATA_END = 6    # end of a `target data` region (the mapper call at the closing brace)


class ConstructFlag(IntEnum):
    """Bits of ``aux`` in CONSTRUCT_BEGIN."""

    NOWAIT = 1
    HAS_DEPEND = 2


class MapType(IntEnum):
    """Bits of ``op`` in MAP_CLAUSE: the values libomptarget uses (OMP_TGT_MAPTYPE_*)."""

    TO = 0x001
    FROM = 0x002
    ALWAYS = 0x004
    DELETE = 0x008
    PTR_AND_OBJ = 0x010
    TARGET_PARAM = 0x020
    RETURN_PARAM = 0x040
    PRIVATE = 0x080
    LITERAL = 0x100
    IMPLICIT = 0x200
    CLOSE = 0x400
    PRESENT = 0x1000
    OMPX_HOLD = 0x2000
    NON_CONTIG = 0x100000000000
    MEMBER_OF = 0xFFFF000000000000


class DataOpKind(IntEnum):
    """``op`` of DATA_OP: what the runtime did (OMPT ompt_target_data_op_t, simplified)."""

    ALLOC = 1          # CV allocated: addr = host begin, addr2 = device begin
    TRANSFER_TO = 2    # OV -> CV copy
    TRANSFER_FROM = 3  # CV -> OV copy
    DELETE = 4         # CV released
    ASSOCIATE = 5      # existing device memory associated with host memory
    DISASSOCIATE = 6


class TaskFlag(IntEnum):
    """Bits of ``op`` in TASK_CREATE."""

    EXPLICIT = 1
    TARGET = 2
    UNDEFERRED = 4
    INITIAL = 8
    IMPLICIT = 16


class DependKind(IntEnum):
    """``op`` of TASK_DEPEND."""

    IN = 1
    OUT = 2
    INOUT = 3
    MUTEXINOUTSET = 4
    INOUTSET = 5


class SyncKind(IntEnum):
    """``op`` of SYNC."""

    TASKWAIT = 1
    BARRIER = 2
    TASKGROUP_BEGIN = 3
    TASKGROUP_END = 4
    PARALLEL_BEGIN = 5         # fork: on the encountering thread, ``id`` = parallel region id
    IMPLICIT_TASK_BEGIN = 6    # on each thread of the team as it starts the region, ``id`` = region id
    PARALLEL_END = 7           # join: on the encountering thread after the team's closing barrier, ``id`` = region
    MUTEX_ACQUIRED = 8         # lock / critical / ordered acquired: ``id`` = wait id, ``aux2`` = OmpMutexKind
    MUTEX_RELEASED = 9         # ... released
    FLUSH = 10                 # ``#pragma omp flush`` (orders nothing alone)
    WORK_BEGIN = 11            # worksharing construct: ``aux2`` = OmpWorkKind, ``size`` = count, ``id`` = region
    WORK_END = 12
    MASKED_BEGIN = 13          # master / masked (no ordering of its own)
    MASKED_END = 14
    ATOMIC_WRITE = 15          # an atomic write (store, read-modify-write): ``addr``, ``size``, ``aux2`` = LLVM ordering
    ATOMIC_READ = 16           # an atomic read (load, read-modify-write); a spin loop's reads as one, at the last


class OmpMutexKind(IntEnum):
    """``aux2`` of SYNC MUTEX_ACQUIRED / MUTEX_RELEASED (OMPT ompt_mutex_t)."""

    LOCK = 1
    TEST_LOCK = 2
    NEST_LOCK = 3
    TEST_NEST_LOCK = 4
    CRITICAL = 5
    ATOMIC = 6
    ORDERED = 7


class OmpWorkKind(IntEnum):
    """``aux2`` of SYNC WORK_BEGIN / WORK_END (OMPT ompt_work_t)."""

    LOOP = 1
    SECTIONS = 2
    SINGLE_EXECUTOR = 3
    SINGLE_OTHER = 4
    WORKSHARE = 5
    DISTRIBUTE = 6
    TASKLOOP = 7
    SCOPE = 8
    LOOP_STATIC = 10
    LOOP_DYNAMIC = 11
    LOOP_GUIDED = 12
    LOOP_OTHER = 13


class AccessFlag(IntEnum):
    """Bits of ``op`` in ACCESS."""

    WRITE = 1
    ATOMIC = 2
    MASKED = 4    # format version 6: a masked run (aux2 slots, id2 the bitmap of the present ones)


class WinFlavor(IntEnum):
    """``op`` of WIN_CREATE."""

    CREATE = 1
    ALLOCATE = 2
    DYNAMIC = 3
    SHARED = 4


class RmaOp(IntEnum):
    """``op`` of RMA."""

    PUT = 1
    GET = 2
    ACCUMULATE = 3
    GET_ACCUMULATE = 4
    FETCH_AND_OP = 5
    COMPARE_AND_SWAP = 6
    RPUT = 7
    RGET = 8
    RACCUMULATE = 9
    RGET_ACCUMULATE = 10


class MpiSyncKind(IntEnum):
    """``op`` of MPI_SYNC."""

    FENCE = 1
    LOCK = 2
    UNLOCK = 3
    LOCK_ALL = 4
    UNLOCK_ALL = 5
    FLUSH = 6
    FLUSH_LOCAL = 7
    FLUSH_ALL = 8
    FLUSH_LOCAL_ALL = 9
    POST = 10
    START = 11
    COMPLETE = 12
    WAIT = 13
    SYNC = 14          # MPI_Win_sync


class LockType(IntEnum):
    """``aux`` of MPI_SYNC LOCK."""

    EXCLUSIVE = 1
    SHARED = 2


class MessageKind(IntEnum):
    """``op`` of MPI_MESSAGE."""

    SEND = 1
    RECV = 2
    BARRIER = 3
    COLLECTIVE = 4


FAMILIES: dict[str, tuple[EventKind, ...]] = {
    "allocs": (EventKind.ALLOC, EventKind.FREE),
    "constructs": (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END),
    "maps": (EventKind.MAP_CLAUSE,),
    "data_ops": (EventKind.DATA_OP,),
    "kernels": (EventKind.KERNEL,),
    "tasks": (EventKind.TASK_CREATE, EventKind.TASK_DEPEND, EventKind.TASK_BEGIN, EventKind.TASK_END),
    "sync": (EventKind.SYNC,),
    "accesses": (EventKind.ACCESS,),
    "windows": (EventKind.WIN_CREATE, EventKind.WIN_FREE, EventKind.WIN_ATTACH, EventKind.WIN_DETACH),
    "rma": (EventKind.RMA,),
    "mpi_sync": (EventKind.MPI_SYNC, EventKind.MPI_REQUEST),
    "messages": (EventKind.MPI_MESSAGE,),
}
