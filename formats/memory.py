"""An EventLog held in memory: the rows of one shard, handed to checkers without touching disk.

Why: a sharded analysis assembles each shard's events from pieces (quiver.replay.shuffle); the
checkers take an ``EventLog``, so the pieces become one uncompressed Arrow IPC buffer that is
read back exactly like a file (zero-copy ``col``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyarrow import ipc

from .reader import EventLog, SourceLocation
from .schema import FORMAT_VERSION, arrow_schema
from .writer import BATCH_ROWS, Location, batch_from_columns, complete_columns, log_metadata


def memory_log(columns: Mapping[str, Any], *, strings: Sequence[str] = (), locations: Sequence[Location] = (),
               run: Mapping[str, Any] | None = None, path: str | os.PathLike = "<memory>") -> EventLog:
    """A log of ``columns`` (schema columns; missing ones take their defaults) that lives in memory."""
    cols = complete_columns(columns)
    schema = arrow_schema(log_metadata(strings, locations, run or {}))
    sink = pa.BufferOutputStream()
    n = len(cols["kind"])
    with ipc.new_file(sink, schema) as writer:
        for start in range(0, max(n, 1), BATCH_ROWS):
            writer.write_batch(batch_from_columns({k: v[start:start + BATCH_ROWS] for k, v in cols.items()}, schema))
    reader = ipc.open_file(pa.BufferReader(sink.getvalue()))
    locs = [SourceLocation(str(f), int(line), int(col), str(fn)) for f, line, col, fn in locations]
    return EventLog(path=Path(path), run=dict(run or {}), strings=list(strings), locations=locs,
                    version=FORMAT_VERSION, num_events=n, num_batches=reader.num_record_batches, _reader=reader)
