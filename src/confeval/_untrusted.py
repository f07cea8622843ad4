"""Reading the files a user hands us, which are untrusted: decompression capped, lines bounded,
a byte-order mark ignored.

A compressed file may expand to far more than it weighs (a zip bomb: 168 KB that expand to
940 MB), so every decompressed stream is read in chunks of at most :data:`CHUNK` bytes and
counted, and reading past a cap is one :class:`UntrustedFileError` naming the file and the
cap, never a read of the whole. The caps:

* one stream (a ``.gz`` file, one member of an archive) expands to at most
  ``CONFEVAL_MAX_DECOMPRESSED_MB`` megabytes (default :data:`MAX_DECOMPRESSED_MB`, 512);
* a compressed file's streams together expand to at most ``CONFEVAL_MAX_COMPRESSION_RATIO``
  times its size on disk (default :data:`MAX_RATIO`, 200), or :data:`RATIO_FLOOR` (16 MB),
  whichever is more: a small file of repetitive text may compress far better than 200:1
  without being a bomb, and text compressed by gzip or zstd rarely passes 20:1.

Both are environment variables, so that a real file beyond them can still be read by whoever
trusts it. A truncated or damaged ``.gz`` file is one :class:`UntrustedFileError` naming the
file too (gzip's ``EOFError`` would otherwise end a command as if the user pressed Ctrl-D); a
damaged archive is left to its reader, which names it.

Lines are read with :func:`bounded_lines`: an over-long line is skipped in chunks, never held;
and a line too long to read for recognising a file is recognised by the keys its start holds
(:func:`top_level_fields`).

JSON is read with :func:`loads_unique`: an object naming one key twice is a
:class:`DuplicateKeyError` naming the key. Python's ``json`` keeps the last value and another
reader may keep the first, so such a document means two things; the caller names the file.
Single documents are read so (run.json, policy.json, a results file, an Inspect log); the lines
of large JSONL record files are not, where the check cost 8-12% of the read.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ._validation import RecordsError

__all__ = ["CHUNK", "MAX_DECOMPRESSED_MB", "MAX_RATIO", "RATIO_FLOOR", "UntrustedFileError",
           "DuplicateKeyError", "bounded_lines", "check_archive", "decompression_caps",
           "decompression_errors",
           "is_compressed", "loads_unique", "open_binary", "open_text", "read_small_json",
           "top_level_fields", "unique_keys", "CONFIG_BYTES", "config_count",
           "read_safetensors", "read_tokenizer_file"]

MAX_DECOMPRESSED_MB = 512
"""Default cap of one decompressed stream, in megabytes (``CONFEVAL_MAX_DECOMPRESSED_MB``)."""

MAX_RATIO = 200
"""Default cap of a compressed file's expansion, as a multiple of its size
(``CONFEVAL_MAX_COMPRESSION_RATIO``)."""

RATIO_FLOOR = 16 << 20
"""Bytes any compressed file may expand to whatever its ratio."""

CHUNK = 1 << 20
"""The most one read asks a decompressor for."""

_MB = 1 << 20


class UntrustedFileError(RecordsError):
    """A file that cannot be read safely: past a decompression cap, or its compressed data
    truncated or damaged (the message names the file)."""


def _env_number(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name}={text!r}: expected a positive number")
    return value


def decompression_caps(compressed_size: int) -> tuple[int, int]:
    """(the most one stream may expand to, the most all streams of a file of
    ``compressed_size`` bytes may expand to together), in bytes, from the environment."""
    per_stream = int(_env_number("CONFEVAL_MAX_DECOMPRESSED_MB", MAX_DECOMPRESSED_MB) * _MB)
    ratio = _env_number("CONFEVAL_MAX_COMPRESSION_RATIO", MAX_RATIO)
    return per_stream, max(RATIO_FLOOR, int(ratio * compressed_size))


def _size(n: float) -> str:
    """Bytes in words: 168 KB, 37.5 MB."""
    return f"{n / _MB:,.1f} MB" if n >= _MB else f"{n / 1024:,.0f} KB"


class Budget:
    """Decompressed bytes left for one file: per stream and for the file in all."""

    def __init__(self, path: Path | str, compressed_size: int) -> None:
        self.path = path
        self.compressed_size = compressed_size
        self.per_stream, self.total = decompression_caps(compressed_size)
        self.used = 0

    def spend(self, produced_in_stream: int, n: int, what: str | None = None) -> None:
        """Count ``n`` more bytes of a stream that has produced ``produced_in_stream`` in all
        (those included); past a cap, an :class:`UntrustedFileError` naming the file, the
        stream (``what``: a member of an archive; None: the file's one stream) and the cap."""
        self.used += n
        if produced_in_stream > self.per_stream:
            raise UntrustedFileError(
                f"{self.path}: {what or 'its content'} decompresses to more than "
                f"{_size(self.per_stream)}, the cap of one compressed stream: not read (a "
                "decompression bomb? if you trust the file, raise "
                "CONFEVAL_MAX_DECOMPRESSED_MB)")
        if self.used > self.total:
            at = f" (at {what})" if what else ""
            raise UntrustedFileError(
                f"{self.path}: decompresses to more than {_size(self.total)}{at}, the "
                f"cap of a file of {_size(self.compressed_size)} (its size times "
                f"CONFEVAL_MAX_COMPRESSION_RATIO, default {MAX_RATIO}, and at least "
                f"{_size(RATIO_FLOOR)}): not read (a decompression bomb? if you trust the "
                "file, raise CONFEVAL_MAX_COMPRESSION_RATIO)")


class CappedReader(io.RawIOBase):
    """The decompressed bytes of a stream, read at most :data:`CHUNK` at a time and counted
    against a :class:`Budget`: reading past a cap, or into truncated or damaged compressed
    data, is an :class:`UntrustedFileError` naming the file."""

    def __init__(self, stream: IO[bytes], budget: Budget, *, source: IO[bytes] | None = None
                 ) -> None:
        super().__init__()
        self._stream = stream
        self._source = source   # the file under the decompressor, closed with it
        self._budget = budget
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._stream.read(min(len(view), CHUNK))
        except (EOFError, zlib.error, OSError) as exc:
            raise UntrustedFileError(damaged(self._budget.path, exc)) from None
        n = len(data)
        view[:n] = data
        self.produced += n
        self._budget.spend(self.produced, n)
        return n

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            if self._source is not None:
                self._source.close()
            super().close()


def damaged(path: Path | str, exc: BaseException) -> str:
    """The message of compressed data that ends early or is not what its format says."""
    why = "it ends early (truncated)" if isinstance(exc, EOFError) else str(exc) or \
        type(exc).__name__
    return f"{path}: the compressed data cannot be read: {why}"


def is_compressed(path: Path | str) -> bool:
    """Whether ``path`` is read through gzip (by its name, as every reader decides)."""
    return str(path).lower().endswith(".gz")


def open_binary(path: Path | str) -> IO[bytes]:
    """``path``'s bytes: a ``.gz`` file decompressed under the caps (module docstring), any
    other file as it is."""
    import gzip

    path = Path(path)
    if not is_compressed(path):
        return path.open("rb")
    raw = path.open("rb")
    try:
        budget = Budget(path, os.fstat(raw.fileno()).st_size)
    except BaseException:
        raw.close()
        raise
    return io.BufferedReader(CappedReader(gzip.GzipFile(fileobj=raw, mode="rb"), budget,
                                          source=raw), buffer_size=64 * 1024)


def open_text(path: Path | str, errors: str = "replace") -> IO[str]:
    """``path`` as UTF-8 text (decompressed under the caps for ``.gz``), a byte-order mark
    ignored and CRLF line ends read as LF."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", errors=errors)


def bounded_lines(stream: IO[str], max_chars: int) -> Iterator[str | None]:
    """Every line of ``stream`` (with its line end), or None for one longer than
    ``max_chars``, which is read past in chunks and never held whole: memory stays within
    ``max_chars`` whatever the file."""
    while True:
        line = stream.readline(max_chars + 1)
        if not line:
            return
        if len(line) <= max_chars or line.endswith("\n"):
            yield line if len(line) <= max_chars else None
            continue
        while True:   # the rest of the over-long line
            rest = stream.readline(CHUNK)
            if not rest or rest.endswith("\n"):
                break
        yield None


# ------------------------------------------------------------------ one key, one value
class DuplicateKeyError(ValueError):
    """A JSON object naming one key twice (``key``: that key). A ``ValueError`` like every
    other JSON that cannot be read, so a reader that already skips and counts such lines
    counts this one too; the message names the key and both values, the caller the file."""

    def __init__(self, key: str, first: Any, second: Any) -> None:
        self.key = key
        shown = _cut(repr(key), 60)
        one, two = _as_json(first), _as_json(second)
        if one == two:   # as written (1 and 1.0 differ), not as Python compares them
            super().__init__(f"key {shown} appears twice in one object (both times "
                             f"{_cut(one, 40)}): a JSON object names each key once")
            return
        super().__init__(f"key {shown} appears twice in one object ({_cut(one, 40)}, "
                         f"then {_cut(two, 40)}): a reader may take either value")


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's pairs as a dict, or a :class:`DuplicateKeyError` when a key repeats
    (``json``'s ``object_pairs_hook``). Linear in the pairs: one dict built in C, its size
    compared; the pairs are walked again only to name the repeated key."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(key, seen[key], value)
        seen[key] = value
    raise AssertionError("unreachable: fewer keys than pairs means a repeat")


_UNIQUE = json.JSONDecoder(object_pairs_hook=unique_keys)
"""Built once: ``json.loads`` with a hook builds a decoder per call, which doubled the cost of
a short line."""


def loads_unique(text: str | bytes) -> Any:
    """``json.loads(text)`` (the same errors), with an object naming a key twice a
    :class:`DuplicateKeyError`."""
    if isinstance(text, str) and not text.startswith("\ufeff"):
        return _UNIQUE.decode(text)
    # bytes (their encoding detected) and the byte-order mark json.loads refuses: as it does
    return json.loads(text, object_pairs_hook=unique_keys)


# ------------------------------------------------------------- the start of a long JSON line
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|"')
"""A whole JSON string, a structural character, or a quote whose string the text cuts off
(everything else — numbers, true, false, null, blanks — lies between tokens)."""


def top_level_fields(prefix: str) -> dict[str, str | None]:
    """The fields of the JSON object ``prefix`` starts, as far as the text goes: each key of
    the top level, in order, with its value when that is a string (None otherwise, or when
    the text ends first). For recognising a file by its first line's start when the line is
    too long to read whole; one pass, linear in the text.

    Examples
    --------
    >>> top_level_fields('{"doc_id": 0, "doc": {"q": "x"}, "target": "2", "argu')
    {'doc_id': None, 'doc': None, 'target': '2'}
    """
    text = prefix.lstrip()
    fields: dict[str, str | None] = {}
    if not text.startswith("{"):
        return fields
    depth, key, at_value = 0, None, False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            break   # the text ends inside a string
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                break
        elif depth != 1:
            continue
        elif token == ":":
            at_value = key is not None
            if at_value:
                fields[key] = None
        elif token == ",":
            key, at_value = None, False
        else:
            try:
                text_value = json.loads(token)
            except (ValueError, RecursionError):   # a number past the digit limit too
                break
            if at_value:
                fields[key] = text_value
                at_value = False
            else:
                key = text_value
    return fields


# ---------------------------------------------------------------------------- zip archives
_LOCAL_HEADER = struct.Struct("<4s22xHH")
"""A zip member's local header: its signature, then (after 22 bytes) the lengths of the
name and the extra field that come before the member's data."""

_STORED, _DEFLATED, _ZSTD = 0, 8, 93


class _Slice(io.RawIOBase):
    """``size`` bytes of a file from ``offset``, read in chunks."""

    def __init__(self, handle: IO[bytes], offset: int, size: int) -> None:
        super().__init__()
        self._handle, self._offset, self._left = handle, offset, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        n = min(len(view), self._left, CHUNK)
        if n <= 0:
            return 0
        self._handle.seek(self._offset)
        data = self._handle.read(n)
        if not data:   # the file ends before the member does: what there is, then the end
            self._left = 0
            return 0
        view[:len(data)] = data
        self._offset += len(data)
        self._left -= len(data)
        return len(data)


def _member_data(handle: IO[bytes], info: Any) -> _Slice:
    """The compressed bytes of one member (after its local header)."""
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size:
        raise ValueError(f"member {info.filename!r} lies past the end of the file")
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        raise ValueError(f"member {info.filename!r} has no local header")
    start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
    return _Slice(handle, start, info.compress_size)


def member_chunks(handle: IO[bytes], info: Any) -> Iterator[bytes]:
    """The decompressed bytes of one zip member (stored, deflate or zstd, the methods Inspect
    writes), in chunks of at most :data:`CHUNK` bytes."""
    data = _member_data(handle, info)
    if info.compress_type == _STORED:
        yield from iter(lambda: data.read(CHUNK), b"")
    elif info.compress_type == _DEFLATED:
        inflate = zlib.decompressobj(-15)
        for compressed in iter(lambda: data.read(CHUNK), b""):
            pending = compressed
            while pending:
                out = inflate.decompress(pending, CHUNK)
                pending = inflate.unconsumed_tail
                if out:
                    yield out
    elif info.compress_type == _ZSTD:
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
        yield from iter(lambda: reader.read(CHUNK), b"")
    else:
        raise ValueError(f"member {info.filename!r} uses compression method "
                         f"{info.compress_type}, which confeval does not read")


def check_archive(path: Path | str) -> None:
    """Decompress every member of a zip archive in chunks, counting, without keeping any: an
    :class:`UntrustedFileError` naming the file, the member and the cap when one expands past
    the caps (module docstring). An archive that is no zip at all is left to its reader to
    name; a damaged member (its data cut or overwritten) ends the check of that member only,
    its bytes up to the damage counted: the next members are checked all the same, since a
    reader may skip the damaged member and read the others (a damaged first member once let a
    1.5 GB member through unchecked)."""
    import zipfile

    path = Path(path)
    with path.open("rb") as handle:
        budget = Budget(path, os.fstat(handle.fileno()).st_size)
        try:
            members = zipfile.ZipFile(handle).infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return
        for info in members:
            produced = 0
            try:
                for chunk in member_chunks(handle, info):
                    produced += len(chunk)
                    budget.spend(produced, len(chunk), f"member {info.filename!r}")
            except UntrustedFileError:
                raise
            except ImportError:   # Inspect on Python 3.14 reads zstd without it: never skip
                raise UntrustedFileError(
                    f"{path}: member {info.filename!r} is zstd-compressed, and confeval checks "
                    "such members against its decompression caps with zstandard: pip install "
                    "'confeval[ingest]'") from None
            except decompression_errors():
                continue   # this member's damage is its reader's to name


def decompression_errors() -> tuple[type[BaseException], ...]:
    """What reading damaged compressed data raises (zstandard's own error among them when it
    is installed)."""
    errors: tuple[type[BaseException], ...] = (ValueError, EOFError, OSError, zlib.error)
    try:
        import zstandard
    except ImportError:
        return errors
    return (*errors, zstandard.ZstdError)


CONFIG_BYTES = 4 << 20
"""A model folder's JSON configs are a few kB; one larger than this is not read."""


def read_small_json(path: Path) -> Any:
    """A small JSON file (a model's config) read whole, refused unread past
    :data:`CONFIG_BYTES`, or when it names a key twice (``ValueError`` naming the file)."""
    if path.stat().st_size > CONFIG_BYTES:
        raise ValueError(f"{path}: larger than {CONFIG_BYTES >> 20} MB, not a config")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        return loads_unique(text)
    except DuplicateKeyError as exc:
        raise ValueError(f"{path}: {exc}") from None


def config_count(config: dict, key: str, most: int, default: int | None = None) -> int:
    """A positive whole number of a model's config, at most ``most`` (``default`` where the
    key is absent or null): a hostile config naming 10^9 layers must not make a loader list
    10^9 weight names, nor 0 heads divide by zero (``ValueError`` naming the key)."""
    value = config.get(key)
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ValueError(f"config.json: {key} = {value!r}, not a whole number in 1..{most:,}")
    return value


def read_safetensors(path: Path) -> dict:
    """The tensors of a ``.safetensors`` file (memory-mapped by safetensors, which checks the
    header against the file's size); a damaged file is a ``ValueError`` naming it."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except SafetensorError as exc:
        raise ValueError(f"{path}: {exc}") from None


def read_tokenizer_file(path: Path):
    """A ``tokenizer.json`` as a ``tokenizers.Tokenizer``; a file it cannot read is a
    ``ValueError`` naming it (tokenizers raises a bare ``Exception``)."""
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ValueError(f"{path}: {exc}") from None
