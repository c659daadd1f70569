"""Opening the zip containers DOCX and EPUB are, with the sizes they declare checked first, and
reading their members within what a document may inflate.

A zip bomb (a few KB that inflate to gigabytes) would otherwise exhaust memory in whichever
library reads it. zipfile never inflates a member past the size its header declares (it stops
there and fails the CRC), so checking the declared sizes bounds both memory and time; a
`Members` reader also counts what it really inflates, against `Limits.inflated`.
"""
from __future__ import annotations

import io
import zipfile
import zlib

from ..sources import Skip

MAX_MEMBERS = 10_000
MAX_TOTAL = 256 * 1024 * 1024  # inflated bytes a whole document may declare
MAX_RATIO = 100  # real XML inflates about 5-20 times; a bomb, thousands of times
RATIO_FLOOR = 8 * 1024 * 1024  # members smaller than this are never suspected
# What a damaged archive makes zipfile raise: a bad header, a broken deflate stream, a
# method it does not know, a CRC that does not match, a truncated member.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, NotImplementedError,
              KeyError, IndexError, OverflowError, UnicodeDecodeError)


def open_zip(raw: bytes, max_total: int = MAX_TOTAL) -> zipfile.ZipFile:
    """The archive, or Skip("corrupt") / Skip("zip bomb") / Skip("too large to read") when
    its members declare more than `max_total` inflated bytes in all."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        members = archive.infolist()
    except ZIP_ERRORS:
        raise Skip("corrupt") from None
    if len(members) > MAX_MEMBERS:
        raise Skip("zip bomb")
    total = 0
    for info in members:
        total += info.file_size
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise Skip("zip bomb")
    if total > MAX_TOTAL:
        raise Skip("zip bomb")
    if total > max_total:
        raise Skip("too large to read")
    return archive


class Members:
    """Reads members of one archive, counting the bytes inflated against a budget: a book
    whose chapters are each small but together inflate past it stops being read there."""

    def __init__(self, archive: zipfile.ZipFile, budget: int):
        self.archive = archive
        self.left = budget

    def fits(self, name: str) -> bool:
        """Whether the member, by the size it declares, fits in what is left to inflate."""
        try:
            return self.archive.getinfo(name).file_size <= self.left
        except KeyError:
            return True  # read() says it is missing

    def read(self, name: str) -> bytes:
        """One member's bytes, or Skip("corrupt") when it is missing or damaged."""
        data = read_member(self.archive, name)
        self.left -= len(data)
        return data


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """One member's bytes, or Skip("corrupt") when it is missing or damaged."""
    try:
        return archive.read(name)
    except ZIP_ERRORS:
        raise Skip("corrupt") from None
