"""Write RAR archives in the RAR 1.5-4.x format (what the LETOR 3.0 / 4.0 ``.rar`` files are), files stored
uncompressed: the tests' stand-ins of those downloads, made here because no free tool writes RAR.

Layout (RARLAB's technote for the format): the marker block ``Rar!\\x1a\\x07\\x00``, an archive header,
one file header plus data per file, an end-of-archive block. Every header starts with the low 16 bits
of the CRC32 of the header bytes after the CRC; a file header holds the CRC32 of the file's data.
Names use ``\\`` as separator with the host OS set to Win32, as an archive made by WinRAR has them.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

MARKER = b"Rar!\x1a\x07\x00"
_ARCHIVE, _FILE, _END = 0x73, 0x74, 0x7B
_LONG_BLOCK = 0x8000  # the header is followed by data (ADD_SIZE = PACK_SIZE)
_WIN32, _STORE, _DIRECTORY = 2, 0x30, 0x00E0
_DOS_TIME = (2009 - 1980) << 25 | 4 << 21 | 17 << 16  # 17 April 2009, 00:00


def _block(kind: int, flags: int, body: bytes) -> bytes:
    head = struct.pack("<BHH", kind, flags, 7 + len(body)) + body
    return struct.pack("<H", zlib.crc32(head) & 0xFFFF) + head


def _file_header(name: str, data: bytes, directory: bool = False) -> bytes:
    raw = name.replace("/", "\\").encode("ascii")
    body = struct.pack("<IIBIIBBHI", len(data), len(data), _WIN32, zlib.crc32(data), _DOS_TIME, 20, _STORE,
                       len(raw), 0x10 if directory else 0x20) + raw
    return _block(_FILE, _LONG_BLOCK | (_DIRECTORY if directory else 0), body)


def write_rar(path: str | Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` (archive path -> bytes, ``/`` separated) as a RAR 4 archive at ``path``; each
    folder gets its own directory entry first, as WinRAR writes them."""
    out = [MARKER, _block(_ARCHIVE, 0, b"\0" * 6)]
    folders: list[str] = []
    for name in files:
        parts = name.split("/")[:-1]
        for k in range(1, len(parts) + 1):
            d = "/".join(parts[:k])
            if d not in folders:
                folders.append(d)
                out.append(_file_header(d, b"", directory=True))
    for name, data in files.items():
        out.append(_file_header(name, data) + data)
    out.append(_block(_END, 0x4000, b""))
    path = Path(path)
    path.write_bytes(b"".join(out))
    return path
