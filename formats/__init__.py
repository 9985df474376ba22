"""quiver.formats: the event-log schema, its writer, reader, validator and builder.

Nothing outside this package knows the byte layout of a log.
"""

from .builder import LogBuilder
from .errors import LogFormatError
from .logset import LogSet, open_logs, rank_file_name, write_manifest, write_split
from .reader import EventLog, SourceLocation, is_quiver_log, read_log, validate_schema
from .schema import (
    COLUMN_NAMES,
    COLUMNS,
    FAMILIES,
    FORMAT_VERSION,
    AccessFlag,
    AllocKind,
    ConstructFlag,
    ConstructKind,
    DataOpKind,
    DependKind,
    EventKind,
    LockType,
    MapType,
    MessageKind,
    MpiSyncKind,
    OmpMutexKind,
    OmpWorkKind,
    RmaOp,
    SyncKind,
    TaskFlag,
    WinFlavor,
)
from .writer import LogWriter, write_log

__all__ = [
    "COLUMNS", "COLUMN_NAMES", "FAMILIES", "FORMAT_VERSION", "AccessFlag", "AllocKind", "ConstructFlag", "ConstructKind",
    "DataOpKind", "DependKind", "EventKind", "EventLog", "LockType", "LogBuilder", "LogFormatError", "LogSet", "LogWriter",
    "MapType", "MessageKind", "MpiSyncKind", "OmpMutexKind", "OmpWorkKind", "RmaOp", "SourceLocation", "SyncKind", "TaskFlag", "WinFlavor",
    "is_quiver_log", "open_logs", "rank_file_name", "read_log", "validate_schema", "write_log", "write_manifest", "write_split",
]
