"""Zip files that cophe writes and opens: the saved analysis and the aggregate analysis (``.cophe``).

Writing gives the same bytes for the same members (fixed times and attributes). Opening treats the file as
hostile, as any upload: :func:`open_archive` never extracts to disk, bounds the size of the zip's directory,
the number of members and their inflated sizes (whatever the headers claim), and refuses member names that
leave the archive; :func:`read_member` inflates a member no further than its declared size. Every problem
is an :class:`~cophe_core.base.files.InputError` naming the file.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any, cast

from isal import isal_zlib

from ..base.files import InputError

__all__ = ["Archive", "open_archive", "read_member", "zip_member", "write_zip", "show"]

DIRECTORY_PER_MEMBER = 1024  # bytes of the zip's central directory allowed per member
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed member times: the same members give the same bytes


def show(value: Any) -> str:
    """A value for a message, cut short.

    >>> show("x" * 100)[-3:], show(5)
    ('xx…', '5')
    """
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def zip_member(path: str, content: bytes, *, compress: bool = True) -> tuple[zipfile.ZipInfo, bytes]:
    """A member with fixed time and attributes (the same bytes on every platform); ``compress=False`` stores
    it as is (for Parquet, compressed already, which can then be read without inflating).

    >>> info, data = zip_member("a.parquet", b"PAR1", compress=False)
    >>> info.compress_type == zipfile.ZIP_STORED, info.date_time
    (True, (2020, 1, 1, 0, 0, 0))
    """
    info = zipfile.ZipInfo(path, date_time=ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.create_system = 3
    info.external_attr = 0o644 << 16
    return info, content


def write_zip(members: list[tuple[zipfile.ZipInfo, bytes]], target: Any = None) -> bytes | None:
    """The members as a zip: its bytes, or written to ``target`` (a path or a binary file) and None.

    >>> data = write_zip([zip_member("a.txt", b"hello")])
    >>> data[:2], data == write_zip([zip_member("a.txt", b"hello")])
    (b'PK', True)
    """
    out = io.BytesIO() if target is None else target
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info, content in members:
            z.writestr(info, content)
    return out.getvalue() if target is None else None


def _directory_size(data: bytes) -> int | None:
    """The size of the zip's central directory as :mod:`zipfile` will find it (None: no end record; -1: a
    zip64 archive, which cophe never writes), read before :mod:`zipfile` parses the directory."""
    n, signature = len(data), b"PK\x05\x06"
    if n >= 22 and data[-22:-18] == signature and data[-2:] == b"\0\0":
        start = n - 22  # no archive comment
    else:
        start = data.rfind(signature, max(n - 2**16 - 22, 0))
        if start < 0 or n - start < 22:
            return None
    if start >= 20 and data[start - 20 : start - 16] == b"PK\x06\x07":
        return -1
    return int.from_bytes(data[start + 12 : start + 16], "little")


def _unsafe_path(member: str) -> bool:
    return (
        member.startswith("/")
        or "\\" in member
        or ".." in member.split("/")
        or re.match(r"^[A-Za-z]:", member) is not None
    )


@dataclass(frozen=True, eq=False)
class Archive:
    """An opened zip: its members by name, each read through :func:`read_member` within its declared size."""

    name: str
    zip: zipfile.ZipFile
    members: dict[str, zipfile.ZipInfo]

    def read(self, member: str) -> bytes:
        """A member's bytes (``InputError`` if it is missing or damaged)."""
        info = self.members.get(member)
        if info is None:
            raise InputError(f"{self.name}: the member {show(member)} is missing; the file is damaged")
        return read_member(self.zip, info, info.file_size, self.name)


def open_archive(
    data: bytes, *, name: str, not_zip: str, max_members: int, max_bytes: int, not_zip_fix: str = ""
) -> Archive:
    """Open ``data`` as a zip within bounds: at most ``max_members`` members, inflating to ``max_bytes`` in
    all, none of them leaving the archive or appearing twice. ``not_zip`` is the message for bytes that are
    not a zip at all, ``not_zip_fix`` what to do (an :class:`InputError` ``fix``).

    >>> a = open_archive(write_zip([zip_member("m.json", b"{}")]), name="x.cophe", not_zip="no", max_members=4,
    ...                  max_bytes=100)
    >>> a.read("m.json")
    b'{}'
    >>> open_archive(b"doc_id,code", name="x.cophe", not_zip="x.cophe: not a zip", max_members=4, max_bytes=100)
    Traceback (most recent call last):
    cophe_core.base.files.InputError: x.cophe: not a zip
    """
    directory = _directory_size(data)
    if directory is None:
        raise InputError(not_zip, fix=not_zip_fix)
    if directory < 0 or directory > max_members * DIRECTORY_PER_MEMBER:
        raise InputError(
            f"{name}: the zip lists too many members (a cophe file has at most {max_members}); "
            "this file is not a cophe analysis"
        )
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError):
        raise InputError(not_zip, fix=not_zip_fix) from None
    if len(infos) > max_members:
        raise InputError(f"{name}: {len(infos)} members; a cophe file has at most {max_members}")
    by_name: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if _unsafe_path(info.filename):
            raise InputError(
                f"{name}: member {show(info.filename)} has a path outside the archive; the file is refused"
            )
        if info.filename in by_name:
            raise InputError(f"{name}: member {show(info.filename)} appears twice; the file is refused")
        by_name[info.filename] = info
    # each member is read up to its declared size and no further, so the declared total bounds what is inflated
    if sum(i.file_size for i in infos) > max_bytes:
        raise InputError(f"{name}: its members inflate to more than {max_bytes:,} bytes")
    return Archive(name, z, by_name)


LOCAL_HEADER = 30  # bytes of a zip member's local header before its name and extra field
# what ISA-L's inflater raises for data that are not deflate (its stubs call the class an instance)
_INFLATE_ERRORS = (cast(type[Exception], isal_zlib.error), ValueError, OverflowError)


def _deflated_view(z: Any, info: zipfile.ZipInfo) -> memoryview | None:
    """The deflate stream of a member of a zip held in memory, without copying (None: not in memory, or
    the local header does not lead to ``compress_size`` bytes)."""
    fp = getattr(z, "fp", None)
    if not isinstance(fp, io.BytesIO):
        return None
    whole = memoryview(fp.getvalue())  # the bytes the zip was opened on, not a copy
    start = info.header_offset
    head = bytes(whole[start : start + LOCAL_HEADER])
    if len(head) < LOCAL_HEADER or head[:4] != b"PK\x03\x04":
        return None
    start += LOCAL_HEADER + int.from_bytes(head[26:28], "little") + int.from_bytes(head[28:30], "little")
    deflated = whole[start : start + info.compress_size]
    return deflated if len(deflated) == info.compress_size else None


def _inflate_in_one(z: Any, info: zipfile.ZipInfo) -> bytes | None:
    """A deflated member of a zip held in memory, inflated by ISA-L in one call that stops one byte past its
    declared size, whatever the data hold (None where the result is not exactly its declared size with its CRC,
    or the zip is not in memory: the caller then reads it through :mod:`zipfile`, which says what is wrong).

    A saved analysis of a 26 MB gold standard and a 24 MB run (9.8 MB deflated) cost about 10% more CPU to open
    and score than the two files scored as plain files, most of it inflating them: 98 ms with zlib (Arrow's gzip
    codec, CRC included; zipfile's stream is slower), 32 ms with ISA-L, whose CRC takes 0.3 ms to zlib's 12. The
    deflate stream is read where it lies in the zip's bytes, not copied.

    >>> z = zipfile.ZipFile(io.BytesIO(write_zip([zip_member("a.txt", b"hello " * 100)])))
    >>> _inflate_in_one(z, z.getinfo("a.txt"))[:12]
    b'hello hello '
    """
    deflated = _deflated_view(z, info)
    if deflated is None:
        return None
    inflater = isal_zlib.decompressobj(-15)  # a raw deflate stream, as a zip member is
    try:
        data: bytes = inflater.decompress(deflated, info.file_size + 1)
    except _INFLATE_ERRORS:
        return None
    if not inflater.eof or len(data) != info.file_size or isal_zlib.crc32(data) != info.CRC:
        return None  # longer or shorter than declared, or damaged
    return data


def read_member(z: Any, info: zipfile.ZipInfo, limit: int, name: str) -> bytes:
    """A member's bytes, inflated at most ``limit`` bytes (its declared size) whatever the data hold.

    >>> z = zipfile.ZipFile(io.BytesIO(write_zip([zip_member("a.txt", b"hello")])))
    >>> read_member(z, z.getinfo("a.txt"), 5, "x.cophe")
    b'hello'
    >>> read_member(z, z.getinfo("a.txt"), 3, "x.cophe")
    Traceback (most recent call last):
    cophe_core.base.files.InputError: x.cophe: 'a.txt' inflates beyond the 3 bytes its header declares; the file is damaged or not a cophe analysis
    """
    if info.compress_type == zipfile.ZIP_DEFLATED and limit == info.file_size:
        fast = _inflate_in_one(z, info)
        if fast is not None:
            return fast
    try:
        with z.open(info) as f:
            data: bytes = f.read(limit + 1)
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        NotImplementedError,
        RuntimeError,
        ValueError,
    ) as e:
        raise InputError(
            f"{name}: {show(info.filename)} is damaged ({type(e).__name__}); save the analysis again"
        ) from None
    if len(data) > limit:
        raise InputError(
            f"{name}: {show(info.filename)} inflates beyond the {limit:,} bytes its header declares; "
            "the file is damaged or not a cophe analysis"
        )
    return data
