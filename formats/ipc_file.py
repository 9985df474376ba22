"""A minimal Arrow IPC file writer for fixed-width, non-null integer columns, without pyarrow.

Why: importing pyarrow costs ~0.05 s of CPU, a third of what `trace record` may add to a small
program; a small run's log is a few record batches of the 15 integer columns of the schema, which
this module writes (Arrow IPC format version V5: the file magic, a schema message, one message per
record batch with its custom metadata, the end-of-stream marker and the footer), uncompressed or, with
``compression="zstd"``, each buffer as one zstd frame behind its uncompressed length (Arrow's
BodyCompression, method BUFFER) through formats/zstd.py: what `trace record` writes for runs too big
to leave uncompressed, without importing pyarrow. The result reads like the one pyarrow writes
(tests/formats/test_ipc_file.py compares them byte for byte).

The flatbuffers are laid out front to back: a table's vtable, then the table, then what its offset
fields point to (uoffsets only point forward, which flatbuffers allows anywhere in the buffer).
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Mapping, Sequence
from typing import IO, Any

from .schema import TYPE_WIDTH

MAGIC = b"ARROW1\0\0"
CONTINUATION = b"\xff\xff\xff\xff"
V5 = 4                          # MetadataVersion.V5
HEADER_SCHEMA, HEADER_RECORD_BATCH = 1, 3
TYPE_INT = 2                    # Type union: Int
END_OF_STREAM = CONTINUATION + b"\0\0\0\0"

# The flatbuffer tables this subset uses (Arrow's File.fbs, Schema.fbs, Message.fbs): slot names in vtable
# order. The writer fills them by name; formats/ipc_read.py reads them by the same names.
FOOTER = ("version", "schema", "dictionaries", "record_batches", "custom_metadata")
SCHEMA = ("endianness", "fields", "custom_metadata", "features")
FIELD = ("name", "nullable", "type_type", "type", "dictionary", "children", "custom_metadata")
INT = ("bit_width", "is_signed")
MESSAGE = ("version", "header_type", "header", "body_length", "custom_metadata")
RECORD_BATCH = ("length", "nodes", "buffers", "compression", "variadic_buffer_counts")
BODY_COMPRESSION = ("codec", "method")
CODEC_ZSTD = 1                  # CompressionType.ZSTD (method: BUFFER, the default)
KEY_VALUE = ("key", "value")
# structs: Block (offset, metadata length incl. its prefix, body length), FieldNode (length, null count),
# Buffer (offset in the body, length)
BLOCK, FIELD_NODE, BUFFER = struct.Struct("<qi4xq"), struct.Struct("<qq"), struct.Struct("<qq")


class _Struct:
    """Inline bytes of a flatbuffer struct (Block, FieldNode, Buffer) with its alignment."""

    def __init__(self, data: bytes, align: int = 8) -> None:
        self.data, self.align = data, align


class _Table:
    """Fields by slot: (struct format, value) for scalars, or a child object for offsets."""

    def __init__(self, fields: Sequence[tuple[str, object] | object | None]) -> None:
        self.fields = list(fields)

    @classmethod
    def of(cls, layout: tuple[str, ...], **values: tuple[str, object] | object | None) -> _Table:
        """The table of `layout` with `values` by slot name; its vtable ends at the last slot named."""
        n = max(layout.index(k) for k in values) + 1
        return cls([values.get(k) for k in layout[:n]])


class _Vector:
    def __init__(self, items: Sequence[object], structs: bool = False) -> None:
        self.items, self.structs = list(items), structs


_Child = _Table | _Vector | bytes  # bytes: a string


class _Builder:
    def __init__(self) -> None:
        self.buf = bytearray()

    def _pad_to(self, align: int, plus: int = 0) -> None:
        """Pad so that the next write + `plus` bytes lands on `align`."""
        self.buf += b"\0" * (-(len(self.buf) + plus) % align)

    def _offset_field(self) -> int:
        """Reserve a 4-byte uoffset at the end; returns its position."""
        self._pad_to(4)
        pos = len(self.buf)
        self.buf += b"\0\0\0\0"
        return pos

    def _patch(self, at: int, target: int) -> None:
        struct.pack_into("<I", self.buf, at, target - at)

    def place(self, obj: _Child) -> int:
        """Write `obj` and what it points to; returns its position."""
        if isinstance(obj, bytes):
            self._pad_to(4)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(obj)) + obj + b"\0"
            return pos
        if isinstance(obj, _Vector):
            return self._vector(obj)
        return self._table(obj)

    def _vector(self, v: _Vector) -> int:
        if v.structs:
            align = max([s.align for s in v.items] or [4])
            self._pad_to(align, 4)
            pos = len(self.buf)
            self.buf += struct.pack("<I", len(v.items)) + b"".join(s.data for s in v.items)
            return pos
        self._pad_to(4)
        pos = len(self.buf)
        self.buf += struct.pack("<I", len(v.items))
        slots = [len(self.buf) + 4 * i for i in range(len(v.items))]
        self.buf += b"\0" * (4 * len(v.items))
        for slot, item in zip(slots, v.items, strict=True):
            self._patch(slot, self.place(item))
        return pos

    def _table(self, t: _Table) -> int:
        n = len(t.fields)
        vtable_size = 4 + 2 * n
        # the table after its vtable: soffset at a 4-aligned position, 8-byte fields 8-aligned
        self._pad_to(4)
        vt = len(self.buf)
        self.buf += b"\0" * vtable_size
        self._pad_to(4)
        start = len(self.buf)
        self.buf += struct.pack("<i", start - vt)
        slots: list[int] = [0] * n
        children: list[tuple[int, _Child]] = []
        for i, f in enumerate(t.fields):
            if f is None:
                continue
            if isinstance(f, tuple):
                fmt, value = f
                size = struct.calcsize("<" + fmt)
                self._pad_to(size)
                slots[i] = len(self.buf) - start
                self.buf += struct.pack("<" + fmt, value)
            else:
                at = self._offset_field()
                slots[i] = at - start
                children.append((at, f))
        struct.pack_into(f"<HH{n}H", self.buf, vt, vtable_size, len(self.buf) - start, *slots)
        for at, child in children:
            self._patch(at, self.place(child))
        return start

    def finish(self, root: _Table) -> bytes:
        self.buf += b"\0" * 4
        self._patch(0, self.place(root))
        self._pad_to(8)
        return bytes(self.buf)


def _key_values(meta: Mapping[bytes, bytes]) -> _Vector:
    return _Vector([_Table.of(KEY_VALUE, key=k, value=v) for k, v in meta.items()])


def _width(dtype: Any) -> tuple[int, bool]:
    """(bytes, signed) of a column type: a name of formats/schema.TYPE_WIDTH or a numpy dtype."""
    if isinstance(dtype, str) and dtype in TYPE_WIDTH:
        return TYPE_WIDTH[dtype]
    import numpy as np

    dt = np.dtype(dtype)
    return dt.itemsize, dt.kind == "i"


def _values(column: Any, dtype: Any) -> memoryview:
    """The column's bytes, little-endian: an array.array of the type's width as it is (this machine
    is little-endian: x86-64, aarch64), anything else through numpy."""
    if isinstance(column, array) and column.itemsize == _width(dtype)[0] and column.typecode.isupper() != _width(dtype)[1]:
        return memoryview(column).cast("B")
    import numpy as np

    return memoryview(np.ascontiguousarray(column, dtype=np.dtype(dtype).newbyteorder("<"))).cast("B")


def _schema(fields: Sequence[tuple[str, Any]], meta: Mapping[bytes, bytes]) -> _Table:
    def field(name: str, dtype: Any) -> _Table:
        width, signed = _width(dtype)
        int_type = _Table.of(INT, bit_width=("i", width * 8), is_signed=("?", signed))
        return _Table.of(FIELD, name=name.encode(), nullable=None, type_type=("B", TYPE_INT), type=int_type,
                         dictionary=None, children=_Vector([]))

    return _Table.of(SCHEMA, endianness=None, fields=_Vector([field(n, d) for n, d in fields]),
                     custom_metadata=_key_values(meta))


def _message(header_type: int, header: _Table, body_length: int, meta: Mapping[bytes, bytes] | None) -> bytes:
    """The encapsulated message: continuation, length, flatbuffer (padded to 8 bytes)."""
    fb = _Builder().finish(_Table.of(MESSAGE, version=("h", V5), header_type=("B", header_type), header=header,
                                     body_length=("q", body_length),
                                     custom_metadata=_key_values(meta) if meta else None))
    return CONTINUATION + struct.pack("<i", len(fb)) + fb


def _nbytes(v: bytes | memoryview) -> int:
    return len(v) if isinstance(v, bytes) else v.nbytes


class IpcFileWriter:
    """Writes record batches of the given fixed-width columns to an open binary file, uncompressed or
    (``compression="zstd"``) zstd-compressed buffer by buffer, the columns of a batch compressed on
    ``threads`` threads."""

    def __init__(self, sink: IO[bytes], fields: Sequence[tuple[str, Any]], meta: Mapping[bytes, bytes],
                 compression: str | None = None, threads: int = 2) -> None:
        if compression not in (None, "zstd"):
            raise ValueError(f"the plain IPC writer compresses with zstd only, not {compression!r}")
        self.sink, self.fields, self.meta = sink, list(fields), dict(meta)
        self.compression, self.threads = compression, threads
        self.blocks: list[bytes] = []
        self.pos = 0
        self._write(MAGIC)
        self._write(_message(HEADER_SCHEMA, _schema(self.fields, self.meta), 0, None))

    def _write(self, data: bytes | memoryview) -> None:
        self.sink.write(data)
        self.pos += len(data)

    def write_batch(self, columns: Mapping[str, Any], custom_metadata: Mapping[bytes, bytes] | None = None) -> None:
        """One record batch: numpy arrays, or array.array columns of the fields' widths."""
        values: list[bytes | memoryview] = [_values(columns[n], d) for n, d in self.fields]
        rows = len(columns[self.fields[0][0]]) if values else 0
        if self.compression is not None:
            values = self._compressed(values)
        buffers, offset = [], 0
        for v in values:  # validity (none: all valid), then the values padded to 8 bytes
            n = _nbytes(v)
            buffers.append(BUFFER.pack(offset, 0))
            buffers.append(BUFFER.pack(offset, n))
            offset += n + (-n % 8)
        compression = _Table.of(BODY_COMPRESSION, codec=("b", CODEC_ZSTD)) if self.compression else None
        header = _Table.of(RECORD_BATCH, length=("q", rows),
                           nodes=_Vector([_Struct(FIELD_NODE.pack(rows, 0)) for _ in values], structs=True),
                           buffers=_Vector([_Struct(b) for b in buffers], structs=True), compression=compression)
        message = _message(HEADER_RECORD_BATCH, header, offset, custom_metadata)
        start = self.pos
        self._write(message)
        for v in values:
            self._write(v)
            self._write(b"\0" * (-_nbytes(v) % 8))
        self.blocks.append(BLOCK.pack(start, len(message), offset))

    def _compressed(self, values: list[bytes | memoryview]) -> list[bytes | memoryview]:
        """Each non-empty buffer as Arrow's IPC writer compresses it: its uncompressed length (int64),
        then one zstd frame (an empty buffer stays empty)."""
        from . import zstd

        def one(v: bytes | memoryview) -> bytes | memoryview:
            n = _nbytes(v)
            return struct.pack("<q", n) + zstd.compress(v) if n else v

        out: list[bytes | memoryview] = list(values)
        if self.threads < 2 or sum(_nbytes(v) for v in values) <= 1 << 16:   # threads pay off for big batches
            return [one(v) for v in values]
        import threading  # (concurrent.futures would import logging: ~5 ms)

        errors: list[BaseException] = []

        def work(first: int) -> None:   # every threads-th buffer, from `first`
            try:
                for i in range(first, len(values), self.threads):
                    out[i] = one(values[i])
            except BaseException as e:  # noqa: BLE001 -- re-raised on the calling thread below
                errors.append(e)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(1, self.threads)]
        for w in workers:
            w.start()
        work(0)
        for w in workers:
            w.join()
        if errors:
            raise errors[0]
        return out

    def close(self) -> None:
        self._write(END_OF_STREAM)
        footer = _Builder().finish(_Table.of(FOOTER, version=("h", V5), schema=_schema(self.fields, self.meta),
                                             dictionaries=_Vector([], structs=True),
                                             record_batches=_Vector([_Struct(b) for b in self.blocks], structs=True)))
        self._write(footer)
        self._write(struct.pack("<i", len(footer)) + MAGIC[:6])
        self.sink.flush()


def fd_sink(fd: int) -> IO[bytes]:
    """A buffered binary file over `fd` that does not close it."""
    return os.fdopen(os.dup(fd), "wb")
