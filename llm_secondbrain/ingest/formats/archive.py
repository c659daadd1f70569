"""Opening the zip containers DOCX and EPUB are, with the sizes they declare checked first.

A zip bomb (a few KB that inflate to gigabytes) would otherwise exhaust memory in whichever
library reads it. zipfile never inflates a member past the size its header declares (it stops
there and fails the CRC), so checking the declared sizes bounds both memory and time.
"""
from __future__ import annotations

import io
import zipfile

from ..sources import Skip

MAX_MEMBERS = 10_000
MAX_TOTAL = 256 * 1024 * 1024  # inflated bytes a whole document may declare
MAX_RATIO = 100  # real XML inflates about 5-20 times; a bomb, thousands of times
RATIO_FLOOR = 8 * 1024 * 1024  # members smaller than this are never suspected


def open_zip(raw: bytes) -> zipfile.ZipFile:
    """The archive, or Skip("corrupt") / Skip("zip bomb")."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
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
    return archive


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """One member's bytes, or Skip("corrupt") when it is missing or damaged."""
    try:
        return archive.read(name)
    except (KeyError, zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        raise Skip("corrupt") from None
