"""quiver.formats: the event-log schema, its writer, reader, validator and builder.

Nothing outside this package knows the byte layout of a log.

The names below are imported on first use (PEP 562): the schema and its codes need numpy (~0.05-0.1 s),
the reader, writer and builder pyarrow (~0.05 s). Importing this package pulls in neither: `trace record`
starts the program after importing only the standard-library modules it needs (formats/native_build.py)
and imports numpy while the program runs; it finalizes a small run without pyarrow (formats/ipc_file.py).
"""

from __future__ import annotations

import importlib

from .errors import LogFormatError

TYPE_CHECKING = False   # typing's import (~2 ms) is not on `trace record`'s path before the program starts
if TYPE_CHECKING:
    from typing import Any

    from .builder import LogBuilder
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

# name -> the submodule defining it, imported when the name is first read
_LAZY = {
    **dict.fromkeys(("COLUMN_NAMES", "COLUMNS", "FAMILIES", "FORMAT_VERSION", "AccessFlag", "AllocKind",
                     "ConstructFlag", "ConstructKind", "DataOpKind", "DependKind", "EventKind", "LockType",
                     "MapType", "MessageKind", "MpiSyncKind", "OmpMutexKind", "OmpWorkKind", "RmaOp", "SyncKind",
                     "TaskFlag", "WinFlavor"), "schema"),
    "LogBuilder": "builder",
    **dict.fromkeys(("LogSet", "open_logs", "rank_file_name", "write_manifest", "write_split"), "logset"),
    **dict.fromkeys(("EventLog", "SourceLocation", "is_quiver_log", "read_log", "validate_schema"), "reader"),
    **dict.fromkeys(("LogWriter", "write_log"), "writer"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "COLUMNS", "COLUMN_NAMES", "FAMILIES", "FORMAT_VERSION", "AccessFlag", "AllocKind", "ConstructFlag", "ConstructKind",
    "DataOpKind", "DependKind", "EventKind", "EventLog", "LockType", "LogBuilder", "LogFormatError", "LogSet", "LogWriter",
    "MapType", "MessageKind", "MpiSyncKind", "OmpMutexKind", "OmpWorkKind", "RmaOp", "SourceLocation", "SyncKind", "TaskFlag", "WinFlavor",
    "is_quiver_log", "open_logs", "rank_file_name", "read_log", "validate_schema", "write_log", "write_manifest", "write_split",
]
