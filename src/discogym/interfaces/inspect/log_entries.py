"""The entries of an Inspect log (a zip file) read for ``discogym report``, one at a time and within bounds, so
that reading any log takes the memory of one sample, at most a few hundred megabytes.

Inspect's own reader is not used for this: it inflates an entry whole whatever size the zip's directory declares
(a log of 40 KB whose directory lies inflates to gigabytes), and its models report every bad item of a list, each
failing every variant of a union (a sample entry of 400 KB made 5.6 million errors, 8 GB). Here an entry is
inflated to at most its declared size (:func:`read_log_entry`), its JSON is bounded before it is parsed
(:func:`read_json_entry`), and it is validated by Inspect's models with a validator that stops each list at its
first bad item (:func:`fail_fast_validator`), which on a valid entry gives what Inspect's reader gives.
"""

import copy
import functools
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

import zstandard
from inspect_ai._util.constants import get_deserializing_context
from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator

from discogym.core import UserError

# Bounds on a log read for a report, checked in the zip's directory before anything is decompressed.
MAX_LOG_ENTRIES = 50_000
MAX_LOG_BYTES = 1024 * 2**20
# Bounds on each entry a report reads (a sample, the header), parsed whole: parsing costs up to 9 times its bytes
# (its text, 4 bytes a character once one emoji is in it), validating up to about 300 bytes a JSON value (a
# model_usage of empty entries, {"1":{},"2":{},...}). At 16 MiB and 400,000 values the worst entry adds about
# 170 MB to the report's own 195 MB, and a log of them peaks at 429 MB (benchmarks/inspect_log_memory.py). The
# largest real sample, of the reference runs of every suite with autumn explored to its step caps, exported by
# discogym: 6.2 MB and 48,800 values (autumn, people), 2.7 and 8 times under the bounds; `inspect eval` logs it
# with its events, 24 MB and 655,000 values, refused (docs/inspect.md). Values are counted as the characters
# [ { , : (each value or key but the first follows one).
MAX_LOG_ENTRY_BYTES = 16 * 2**20
MAX_LOG_ENTRY_VALUES = 400_000
SAMPLES = "samples/"  # where an Inspect log keeps its samples, one entry each
HEADERS = ("header.json", "_journal/start.json")  # a finished log's header, else an unfinished log's start
ZIP_ZSTANDARD = 93  # the zip compression method of zstd, what Inspect writes
LOCAL_SIGNATURE = b"PK\x03\x04"
LOCAL_HEADER = struct.Struct("<26xHH")  # a zip entry's local header: 26 bytes, then its name's and extra's lengths
VALUE_MARKS = b"[{,:"
FAIL_FAST_SCHEMAS = {"list", "tuple", "set", "frozenset", "dict"}  # the pydantic-core schemas that can fail fast
Validated = TypeVar("Validated", bound=BaseModel)


def is_sample(name: str) -> bool:
    """Whether the entry ``name`` is a sample, as Inspect's reader tells."""
    return name.startswith(SAMPLES) and name.endswith(".json")


def is_read(name: str) -> bool:
    """Whether a report reads the entry ``name``: a sample or a header (summaries and the journal are not read)."""
    return is_sample(name) or name in HEADERS


def check_log_archive(path: Path) -> dict[str, zipfile.ZipInfo]:
    """The log's entries by name (the last of a name, as Inspect reads them), from the zip's directory, nothing
    decompressed; a UserError when the log is not a zip file, holds more than :data:`MAX_LOG_ENTRIES` entries,
    decompresses to more than :data:`MAX_LOG_BYTES`, or holds an entry a report reads of more than
    :data:`MAX_LOG_ENTRY_BYTES`."""
    try:
        with zipfile.ZipFile(path) as archive:
            listed = archive.infolist()
    except (zipfile.BadZipFile, OSError) as err:
        raise UserError(f"{path} is not an Inspect log: {err}") from None
    refused = f"{path} is refused unread: it"
    if len(listed) > MAX_LOG_ENTRIES:
        raise UserError(f"{refused} holds {len(listed):,} entries, more than the {MAX_LOG_ENTRIES:,} allowed")
    for entry in listed:
        if entry.file_size > MAX_LOG_ENTRY_BYTES and is_read(entry.filename):
            raise UserError(
                f"{refused}s entry {entry.filename!r} decompresses to {entry.file_size:,} bytes, more than the "
                f"{MAX_LOG_ENTRY_BYTES:,} allowed"
            )
    total = sum(entry.file_size for entry in listed)
    if total > MAX_LOG_BYTES:
        raise UserError(f"{refused} decompresses to {total:,} bytes, more than the {MAX_LOG_BYTES:,} allowed")
    return {entry.filename: entry for entry in listed}


def read_log_entry(file: BinaryIO, entry: zipfile.ZipInfo, path: Path) -> bytes:
    """The entry, from the zip file open as ``file``, decompressed (stored, deflate or zstd), never past its
    declared size: an entry that inflates past it (a directory that lies), falls short of it or fails its
    checksum is a UserError, as is one stored in more bytes than compression can add to its size."""
    name = repr(entry.filename)
    if entry.compress_size > entry.file_size + compression_overhead(entry.file_size):
        raise UserError(
            f"{path} is refused: its entry {name} stores {entry.file_size:,} bytes in {entry.compress_size:,}, more "
            "than compression ever takes"
        )
    raw = _stored_bytes(file, entry, path)
    wanted = entry.file_size + 1  # one byte past the declared size tells an entry that inflates past it
    try:
        if entry.compress_type == zipfile.ZIP_STORED:
            data = raw[:wanted]
        elif entry.compress_type == zipfile.ZIP_DEFLATED:
            data = zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw, wanted)
        elif entry.compress_type == ZIP_ZSTANDARD:
            data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read(wanted)
        else:
            raise UserError(f"{path} is not an Inspect log: its entry {name} is compressed with another method")
    except (zlib.error, zstandard.ZstdError) as err:
        raise UserError(f"{path} is not an Inspect log: its entry {name} does not decompress ({err})") from None
    del raw
    if len(data) != entry.file_size or zlib.crc32(data) != entry.CRC:
        raise UserError(
            f"{path} is refused: its entry {name} does not hold the {entry.file_size:,} bytes the zip's directory "
            "declares (another size, or another checksum)"
        )
    return data


def compression_overhead(size: int) -> int:
    """The most bytes deflate or zstd add to ``size`` bytes they cannot compress: a few bytes a block, far less
    than the 1 % and 1 KiB allowed here."""
    return size // 100 + 1024


def _stored_bytes(file: BinaryIO, entry: zipfile.ZipInfo, path: Path) -> bytes:
    """The entry's data as stored (compressed): the ``compress_size`` bytes after its local header."""
    file.seek(entry.header_offset)
    header = file.read(LOCAL_HEADER.size)
    if len(header) < LOCAL_HEADER.size or not header.startswith(LOCAL_SIGNATURE):
        raise UserError(f"{path} is not an Inspect log: its entry {entry.filename!r} has no local header")
    name_length, extra_length = LOCAL_HEADER.unpack(header)
    file.seek(entry.header_offset + LOCAL_HEADER.size + name_length + extra_length)
    raw = file.read(entry.compress_size)
    if len(raw) < entry.compress_size:
        raise UserError(f"{path} is not an Inspect log: its entry {entry.filename!r} is cut short")
    return raw


def read_json_entry(file: BinaryIO, entry: zipfile.ZipInfo, path: Path) -> Any:
    """The entry's JSON document, parsed as Inspect parses it (``json.loads``); a UserError when it may hold more
    than :data:`MAX_LOG_ENTRY_VALUES` values and keys, or is not JSON."""
    data = read_log_entry(file, entry, path)
    values = sum(data.count(mark) for mark in VALUE_MARKS)  # an upper bound: the marks in strings count too
    if values > MAX_LOG_ENTRY_VALUES:
        raise UserError(
            f"{path} is refused: its entry {entry.filename!r} may hold {values:,} JSON values and keys (its "
            f"characters [ {{ , :), more than the {MAX_LOG_ENTRY_VALUES:,} allowed"
        )
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise UserError(f"{path} is not an Inspect log: its entry {entry.filename!r} is not JSON ({err})") from None


def validated(model: type[Validated], document: Any, where: str) -> Validated:
    """``document`` as ``model``, validated as Inspect's reader validates it (its context) but failing fast
    (:func:`fail_fast_validator`); a one-line UserError naming ``where`` and the first error otherwise."""
    try:
        valid = fail_fast_validator(model).validate_python(document, context=get_deserializing_context())
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        location = "".join(f"{part}." for part in first["loc"])[:-1]
        more = err.error_count() - 1
        others = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
        said = f"{location}: {_first_line(first['msg'])}" if location else _first_line(first["msg"])
        raise UserError(f"{where} is not an Inspect {model.__name__}: {said}{others}") from None
    except Exception as err:  # a validator of Inspect's may raise another kind on an odd document
        raise UserError(f"{where} is not an Inspect {model.__name__}: {_first_line(repr(err))}") from None
    return cast(Validated, valid)


def _first_line(text: str) -> str:
    """The first line of ``text``, at most 200 characters of it."""
    return (text.splitlines() or [""])[0][:200]


@functools.cache
def fail_fast_validator(model: type[BaseModel]) -> SchemaValidator:
    """A validator of ``model``'s own pydantic schema that stops each list, tuple, set and dict at its first bad
    item, where the model's validator goes on to report every one; on a valid document the two give the same."""
    schema = copy.deepcopy(model.__pydantic_core_schema__)
    _fail_fast(schema)
    return SchemaValidator(schema)


def _fail_fast(node: Any) -> None:
    """Set ``fail_fast`` on every collection schema within the core schema ``node``, in place."""
    if isinstance(node, dict):
        if isinstance(node.get("type"), str) and node["type"] in FAIL_FAST_SCHEMAS:  # "type" may also be a field
            node["fail_fast"] = True
        for value in node.values():
            _fail_fast(value)
    elif isinstance(node, list):
        for value in node:
            _fail_fast(value)
