"""A minimal Arrow IPC file reader for the subset formats/ipc_file.py writes, without pyarrow.

Why: importing pyarrow costs ~0.06 s, a good part of what `trace analyze` of a small log takes. A small
run's log is uncompressed fixed-width integer columns without nulls (formats/ipc_file.py); this module
reads exactly that subset, from any writer (flatbuffers are read through their vtables, so pyarrow's
uncompressed files read too), and says ``Unsupported`` for anything else: another type, compression, a
dictionary, nulls, big-endian, an older metadata version, or any offset or length that does not fit.
The caller then reads the file with pyarrow, which gives today's answer or today's error; this reader
never decides a file is damaged.

Every position read is checked against the region it belongs to (the footer, or a message's metadata)
before it is read, every buffer against its message's body, every body against the file; vectors are
bounded by their region's size, so nothing is allocated from a crafted count.
"""

from __future__ import annotations

import struct

import numpy as np

from .ipc_file import (
    BLOCK,
    BUFFER,
    CONTINUATION,
    FIELD,
    FIELD_NODE,
    FOOTER,
    HEADER_RECORD_BATCH,
    INT,
    KEY_VALUE,
    MAGIC,
    MESSAGE,
    RECORD_BATCH,
    SCHEMA,
    TYPE_INT,
    V5,
)

_TAIL = 4 + 6   # footer length (int32), magic without its padding
_I32, _U32, _U16 = struct.Struct("<i"), struct.Struct("<I"), struct.Struct("<H")


_FIELD_READ = ("name", "nullable", "type_type", "type", "children")


class Unsupported(Exception):
    """Not the subset this module reads (or not well formed): read the file with pyarrow instead."""


class _Table:
    """A flatbuffer table at ``pos`` of ``data``, inside the region [lo, hi) every read is checked against,
    holding no field but those named in ``read`` (what pyarrow would verify and this module does not read
    is not accepted). Positions are aligned as flatbuffers' verifier wants them, relative to ``lo``."""

    def __init__(self, data: memoryview, pos: int, lo: int, hi: int, layout: tuple[str, ...],
                 read: tuple[str, ...]) -> None:
        self.data, self.lo, self.hi, self.layout = data, lo, hi, layout
        self.pos = pos
        self._aligned(pos, 4)
        vt = pos - self._unpack(_I32, pos)
        self._aligned(vt, 2)
        self.vt_size, self.size = self._unpack(_U16, vt), self._unpack(_U16, vt + 2)
        if self.vt_size < 4 or self.vt_size % 2 or self.size < 4:
            raise Unsupported("bad vtable")
        self._check(vt, self.vt_size)
        self._check(pos, self.size)
        self.vt = vt
        for k in range((self.vt_size - 4) // 2):
            off = self._unpack(_U16, vt + 4 + 2 * k)
            if off and (k >= len(layout) or layout[k] not in read or not 4 <= off < self.size):
                raise Unsupported("a field this reader does not read, or outside its table")

    def _aligned(self, pos: int, n: int) -> None:
        if (pos - self.lo) % n:
            raise Unsupported("misaligned")

    def _check(self, pos: int, n: int) -> None:
        if not (self.lo <= pos and n >= 0 and pos + n <= self.hi):
            raise Unsupported("offset out of bounds")

    def _unpack(self, s: struct.Struct, pos: int) -> int:
        self._check(pos, s.size)
        return s.unpack_from(self.data, pos)[0]

    def _field(self, name: str, size: int) -> int | None:
        """Position of field ``name`` (``size`` bytes, inside the table), or None when absent."""
        at = 4 + 2 * self.layout.index(name)
        if at >= self.vt_size:
            return None
        off = self._unpack(_U16, self.vt + at)
        if off == 0:
            return None
        if off < 4 or off + size > self.size:
            raise Unsupported("field outside its table")
        self._aligned(self.pos + off, size)
        return self.pos + off

    def scalar(self, name: str, fmt: str, default: int) -> int:
        s = struct.Struct("<" + fmt)
        at = self._field(name, s.size)
        return default if at is None else s.unpack_from(self.data, at)[0]

    def _target(self, name: str) -> int | None:
        at = self._field(name, 4)
        if at is None:
            return None
        off = self._unpack(_U32, at)
        if not 0 < off < 1 << 31:   # as flatbuffers' verifier: never to itself, never wrapping
            raise Unsupported("bad offset")
        return at + off

    def has(self, name: str) -> bool:
        return self._field(name, 4) is not None

    def table(self, name: str, layout: tuple[str, ...], read: tuple[str, ...]) -> _Table | None:
        at = self._target(name)
        return None if at is None else _Table(self.data, at, self.lo, self.hi, layout, read)

    def _vector(self, name: str, item: int) -> tuple[int, int]:
        """(first item's position, length) of a vector of ``item``-byte items; (0, 0) when absent.
        Only its length is aligned (4), as flatbuffers' verifier checks; struct items are unpacked."""
        at = self._target(name)
        if at is None:
            return 0, 0
        self._aligned(at, 4)
        n = self._unpack(_U32, at)
        self._check(at + 4, n * item)
        return at + 4, n

    def string(self, name: str) -> bytes | None:
        if not self.has(name):
            return None
        start, n = self._vector(name, 1)
        self._check(start + n, 1)
        if self.data[start + n] != 0:
            raise Unsupported("string without its terminator")
        return bytes(self.data[start:start + n])

    def tables(self, name: str, layout: tuple[str, ...], read: tuple[str, ...]) -> list[_Table]:
        start, n = self._vector(name, 4)
        return [_Table(self.data, p + self._unpack(_U32, p), self.lo, self.hi, layout, read)
                for p in range(start, start + 4 * n, 4)]

    def structs(self, name: str, s: struct.Struct) -> list[tuple[int, ...]]:
        start, n = self._vector(name, s.size)
        return [s.unpack_from(self.data, p) for p in range(start, start + s.size * n, s.size)]

    def key_values(self) -> dict[bytes, bytes]:
        out = {}
        for kv in self.tables("custom_metadata", KEY_VALUE, KEY_VALUE):
            key, value = kv.string("key"), kv.string("value")
            if key is None or value is None or key in out:
                raise Unsupported("odd metadata")
            out[key] = value
        return out


def _root(data: memoryview, lo: int, hi: int, layout: tuple[str, ...], read: tuple[str, ...]) -> _Table:
    if hi - lo < 8:
        raise Unsupported("flatbuffer too short")
    return _Table(data, lo + _U32.unpack_from(data, lo)[0], lo, hi, layout, read)


class PlainIpcFile:
    """The schema, metadata and record batches of an Arrow IPC file in ``data`` (a read-only uint8 array
    of the whole file): names and numpy dtypes of the fields, schema metadata, and per batch its rows,
    custom metadata and each column's values as a view into ``data``. Unsupported otherwise."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        buf = memoryview(data)
        size = len(buf)
        if size < len(MAGIC) + _TAIL or bytes(buf[:6]) != MAGIC[:6] or bytes(buf[size - 6:]) != MAGIC[:6]:
            raise Unsupported("no Arrow file magic")
        n = _I32.unpack_from(buf, size - _TAIL)[0]
        end = size - _TAIL
        if not 0 < n <= end - len(MAGIC):
            raise Unsupported("bad footer length")
        footer = _root(buf, end - n, end, FOOTER, ("version", "schema", "dictionaries", "record_batches"))
        if footer.scalar("version", "h", 0) != V5 or footer.structs("dictionaries", BLOCK):
            raise Unsupported("not metadata version 5, or dictionaries")
        schema = footer.table("schema", SCHEMA, ("endianness", "fields", "custom_metadata"))
        if schema is None or schema.scalar("endianness", "h", 0) != 0:
            raise Unsupported("no schema, or big-endian")
        self.fields = [self._field(f) for f in schema.tables("fields", FIELD, _FIELD_READ)]
        self.metadata = schema.key_values()
        self.batches = [self._batch(buf, block, end - n) for block in footer.structs("record_batches", BLOCK)]
        self.num_rows = sum(b[0] for b in self.batches)

    @staticmethod
    def _field(f: _Table) -> tuple[str, np.dtype]:
        name = f.string("name")
        if f.scalar("type_type", "B", 0) != TYPE_INT:
            raise Unsupported("not an integer field")
        int_type = f.table("type", INT, INT)
        if name is None or int_type is None or f.tables("children", FIELD, _FIELD_READ):
            raise Unsupported("not a plain integer field")
        bits = int_type.scalar("bit_width", "i", 0)
        if bits not in (8, 16, 32, 64):
            raise Unsupported("odd integer width")
        try:
            return name.decode(), np.dtype(f"<{'i' if int_type.scalar('is_signed', '?', False) else 'u'}{bits // 8}")
        except UnicodeDecodeError:
            raise Unsupported("field name not UTF-8") from None

    def _batch(self, buf: memoryview, block: tuple[int, ...], limit: int) -> tuple[int, dict[bytes, bytes],
                                                                                  list[tuple[int, int]]]:
        """(rows, custom metadata, (start, end) of each column's values in the file) of one block."""
        offset, meta_len, body_len = block
        if (offset < len(MAGIC) or offset % 8 or meta_len < 8 or meta_len % 8 or body_len < 0
                or offset + meta_len + body_len > limit or bytes(buf[offset:offset + 4]) != CONTINUATION):
            raise Unsupported("bad block")
        fb_len = _I32.unpack_from(buf, offset + 4)[0]
        if not 0 < fb_len <= meta_len - 8:
            raise Unsupported("bad message length")
        message = _root(buf, offset + 8, offset + 8 + fb_len, MESSAGE, MESSAGE)
        if message.scalar("version", "h", 0) != V5 or message.scalar("header_type", "B", 0) != HEADER_RECORD_BATCH:
            raise Unsupported("not a record batch")
        header = message.table("header", RECORD_BATCH, ("length", "nodes", "buffers"))   # no compression
        if message.scalar("body_length", "q", -1) != body_len or header is None:
            raise Unsupported("not a record batch of this body")
        rows = header.scalar("length", "q", 0)
        nodes, buffers = header.structs("nodes", FIELD_NODE), header.structs("buffers", BUFFER)
        if rows < 0 or len(nodes) != len(self.fields) or len(buffers) != 2 * len(self.fields):
            raise Unsupported("fields and buffers do not match the schema")
        body, columns = offset + meta_len, []
        for (length, nulls), (_, dtype), validity, values in zip(nodes, self.fields, buffers[::2], buffers[1::2],
                                                                  strict=True):
            if length != rows or nulls != 0:
                raise Unsupported("a column of another length, or nulls")
            for at, n in (validity, values):
                if at < 0 or n < 0 or at + n > body_len:
                    raise Unsupported("buffer outside its body")
            if values[0] % 8 or values[1] < rows * dtype.itemsize:
                raise Unsupported("values misaligned or short")
            columns.append((body + values[0], body + values[0] + rows * dtype.itemsize))
        return rows, message.key_values(), columns

    @property
    def num_batches(self) -> int:
        return len(self.batches)

    def batch(self, i: int, names: list[str]) -> tuple[dict[str, np.ndarray], dict[bytes, bytes]]:
        """The columns ``names`` of batch ``i`` (read-only views of the file's bytes), its custom metadata."""
        _, meta, spans = self.batches[i]
        index = {name: j for j, (name, _) in enumerate(self.fields)}
        return {name: self._values(index[name], spans[index[name]]) for name in names}, meta

    def _values(self, j: int, span: tuple[int, int]) -> np.ndarray:
        return self.data[span[0]:span[1]].view(self.fields[j][1])
