"""Write the fuzz seed corpus (tests/fuzz/corpus/): a small valid log and split log, and the damaged
and crafted inputs the issue-21 attack used (one file each, named after what it is).

    python tests/fuzz/make_corpus.py [REAL_LOG]     # REAL_LOG: a recorded log to add, whole and damaged

Inputs are in fuzz_reader.py's format: one mode byte (0 single file, 1 split directory), the payload.
Deterministic: the same quiver writes the same files.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc
from quiver.formats import (
    COLUMN_NAMES,
    ConstructKind,
    DataOpKind,
    EventKind,
    LogBuilder,
    MapType,
    MessageKind,
    MpiSyncKind,
    RmaOp,
    write_log,
)
from quiver.formats.schema import COLUMNS
from quiver.formats.writer import complete_columns, log_metadata

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_reader import pack_split

CORPUS = Path(__file__).resolve().parent / "corpus"
FILE = b"\0"


def sample() -> LogBuilder:
    b = LogBuilder(program="corpus", ranks=2, devices=1)
    c = b.construct_begin(ConstructKind.TARGET, ("a.c", 4, "main"))
    b.map_clause(c, "a", 0x1000, 64, MapType.TO | MapType.FROM, ("a.c", 4, "main"))
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 64, construct=c)
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 64, construct=c)
    b.kernel(c)
    b.access(0x9000, 8, write=True, device=0, construct=c, stride=16, blocks=4)
    b.data_op(DataOpKind.TRANSFER_FROM, 0x1000, 0x9000, 64, construct=c)
    b.data_op(DataOpKind.DELETE, 0x1000, 0x9000, 64, construct=c)
    b.construct_end(c)
    b.access(0x1000, 4, site=("a.c", 6, "main"))
    b.win_create(0, 1, 0x2000, 64)
    b.win_create(1, 1, 0x2000, 64)
    b.mpi_sync(0, MpiSyncKind.FENCE, 1)
    b.mpi_sync(1, MpiSyncKind.FENCE, 1)
    b.rma(0, RmaOp.PUT, 1, 1, 0, 8)
    b.message(0, MessageKind.BARRIER)
    b.message(1, MessageKind.BARRIER)
    return b


def crafted(cols: dict[str, np.ndarray], row: int, **values: int) -> dict[str, np.ndarray]:
    out = {k: v.copy() for k, v in cols.items()}
    for name, value in values.items():
        out[name][row] = value
    return out


def log_bytes(cols, run, tmp: Path, name: str, strings=(), locations=()) -> bytes:
    path = tmp / name
    write_log(path, cols, strings=strings, locations=locations, run=run, compression=None)
    return path.read_bytes()


def nullable_log(cols, run) -> bytes:
    """A log whose `device` column holds nulls (the schema says nullable)."""
    fields = [pa.field(n, pa.from_numpy_dtype(np.dtype(t)), nullable=True) for n, t in COLUMNS]
    schema = pa.schema(fields, metadata=log_metadata([], [], run))
    arrays = [pa.array(cols[n], mask=np.arange(len(cols[n])) % 2 == 0 if n == "device" else None)
              for n in COLUMN_NAMES]
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, schema) as w:
        w.write_batch(pa.RecordBatch.from_arrays(arrays, schema=schema))
    return sink.getvalue().to_pybytes()


def flips(data: bytes, offsets) -> list[bytes]:
    out = []
    for off in offsets:
        d = bytearray(data)
        d[off % len(d)] ^= 0x10
        out.append(bytes(d))
    return out


def main(argv: list[str]) -> None:
    CORPUS.mkdir(exist_ok=True)
    for old in CORPUS.iterdir():
        old.unlink()
    b = sample()
    cols = b.columns()
    run = dict(b.run, threads=1)
    strings, locs = b.strings, b.locations
    access = int(np.flatnonzero(cols["kind"] == EventKind.ACCESS)[0])
    data_op = int(np.flatnonzero(cols["kind"] == EventKind.DATA_OP)[0])
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        def add(name: str, c, r=run) -> bytes:
            files[name] = FILE + log_bytes(complete_columns(c), r, tmp, name, strings, locs)
            return files[name][1:]

        valid = add("valid.arrow", cols)
        add("huge-stride-count.arrow", crafted(cols, access, aux2=(1 << 62), addr2=16))
        add("strided-overflow.arrow", crafted(cols, access, aux2=(1 << 40), addr2=1 << 40))
        add("rank-near-1e9.arrow", crafted(cols, 0, rank=999_999_937))
        add("size-2-40.arrow", crafted(cols, data_op, size=1 << 40))
        add("size-2-63.arrow", crafted(cols, data_op, size=(1 << 63) + 5))
        add("negative-kind.arrow", crafted(cols, 3, kind=-3))
        add("unknown-kind.arrow", crafted(cols, 3, kind=99))
        add("unknown-data-op.arrow", crafted(cols, data_op, op=9))
        add("unknown-device.arrow", crafted(cols, data_op, device=77))
        add("string-id-out-of-range.arrow", crafted(cols, data_op, name=1 << 30))
        add("location-id-out-of-range.arrow", crafted(cols, access, loc=-7))
        add("damaged-run-ranks.arrow", cols, {**run, "ranks": 10**12})
        files["nulls.arrow"] = FILE + nullable_log(complete_columns(cols), run)
        files["non-utf8-field-name.arrow"] = FILE + valid.replace(b"aux2", b"au\xff2")
        files["truncated-half.arrow"] = FILE + valid[: len(valid) // 2]
        files["truncated-footer.arrow"] = FILE + valid[:-10]
        for i, blob in enumerate(flips(valid, range(97, len(valid), len(valid) // 9))):
            files[f"bitflip-{i}.arrow"] = FILE + blob
        files["empty.arrow"] = FILE
        files["not-arrow.txt"] = FILE + b"hello, this is not a log\n"
        if argv:
            real = Path(argv[0]).read_bytes()
            files["real.arrow"] = FILE + real
            for i, blob in enumerate(flips(real, range(131, len(real), len(real) // 7))):
                files[f"real-bitflip-{i}.arrow"] = FILE + blob
            files["real-truncated.arrow"] = FILE + real[: len(real) * 2 // 3]

        b.write_split(tmp / "split")
        r0 = (tmp / "split" / "rank-00000.arrow").read_bytes()
        r1 = (tmp / "split" / "rank-00001.arrow").read_bytes()
        manifest = json.loads((tmp / "split" / "manifest.json").read_text())

        def split(name: str, m) -> None:
            text = m if isinstance(m, bytes) else json.dumps(m).encode()
            files[name] = pack_split(text, r0, r1)

        split("split-valid", manifest)
        split("split-dotdot", {**manifest, "files": ["../outside/x.arrow", "rank-00001.arrow"]})
        split("split-absolute", {**manifest, "files": ["/etc/passwd", "rank-00001.arrow"]})
        split("split-rank-0-three-times", {**manifest, "ranks": 3, "files": ["rank-00000.arrow"] * 3})
        split("split-ranks-mismatch", {**manifest, "ranks": 7})
        split("split-renamed-rank", {**manifest, "files": ["rank-00000.arrow", "rank-0.arrow"]})
        split("split-not-json", b"{\"format\": \"quiver-split\", ")
        split("split-deep-json", b"[" * 60_000)
        split("split-files-not-list", {**manifest, "files": "rank-00000.arrow"})
    for name, blob in sorted(files.items()):
        (CORPUS / name).write_bytes(blob)
    print(f"wrote {len(files)} inputs to {CORPUS}")


if __name__ == "__main__":
    main(sys.argv[1:])
