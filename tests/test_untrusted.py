"""Reading untrusted files (:mod:`confeval._untrusted`): decompression bombs refused at the cap,
read in chunks (the decompressor is never asked for more than a chunk at a time, nor for more
than the cap and one chunk in all — memory shown bounded through the API, never by a clock),
truncated compressed data one error naming the file, over-long lines skipped unread, and a
long JSON line's start recognised by its keys. Every bomb is built here from highly
compressible bytes, with the caps patched down."""

from __future__ import annotations

import gzip
import io
import struct
import zipfile
import zlib

import pytest

from confeval import _untrusted as U
from confeval.records import RecordsError, RecordSet

MB = 1 << 20


@pytest.fixture()
def small_caps(monkeypatch):
    """Caps of 1 MB a stream and 2 MB for a small file, and a record of every read the
    decompressors were asked for: (bytes asked, bytes given)."""
    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", "1")
    monkeypatch.setattr(U, "RATIO_FLOOR", 2 * MB)
    reads: list[tuple[int, int]] = []
    original = gzip.GzipFile.read

    def spy(self, size=-1):
        data = original(self, size)
        reads.append((size, len(data)))
        return data

    monkeypatch.setattr(gzip.GzipFile, "read", spy)
    return reads


def _bounded(reads: list[tuple[int, int]], cap: int) -> None:
    """Every read asked for at most one chunk, and all of them gave at most the cap and a
    chunk: the whole bomb was never in memory."""
    assert reads and all(0 < asked <= U.CHUNK for asked, _ in reads)
    assert sum(given for _, given in reads) <= cap + U.CHUNK


def test_a_gzip_bomb_is_one_error_at_the_cap_read_in_chunks(tmp_path, small_caps):
    bomb = tmp_path / "records.jsonl.gz"
    bomb.write_bytes(gzip.compress(b'{"p": 0.5, "y": 1}\n' + b" " * (64 * MB), 9))
    assert bomb.stat().st_size < 200_000          # 64 MB in under 200 KB
    with pytest.raises(RecordsError) as err:
        RecordSet.read(bomb)
    message = str(err.value)
    assert message.startswith(f"{bomb}: its content decompresses to more than 1.0 MB")
    assert "CONFEVAL_MAX_DECOMPRESSED_MB" in message and "\n" not in message
    _bounded(small_caps, 1 * MB)


def test_a_csv_gz_bomb_read_by_pandas_stops_at_the_cap(tmp_path, small_caps):
    bomb = tmp_path / "records.csv.gz"
    bomb.write_bytes(gzip.compress(b"p,y\n" + b"0.5,1\n" * (8 * MB // 6), 9))
    with pytest.raises(RecordsError, match="records.csv.gz: its content decompresses to more "
                                           "than 1.0 MB"):
        RecordSet.read(bomb)
    _bounded(small_caps, 1 * MB)


def test_the_ratio_cap_of_a_file_of_its_size(tmp_path, monkeypatch, small_caps):
    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", "512")   # only the ratio caps it
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b" " * (32 * MB) + b"\n", 9))    # one blank line
    cap = 200 * path.stat().st_size                     # the default ratio, 200:1
    assert 2 * MB < cap < 32 * MB
    with pytest.raises(RecordsError) as err:
        RecordSet.read(path)
    assert f"decompresses to more than {cap / MB:.1f} MB, the cap of a " \
        f"file of {path.stat().st_size / 1024:.0f} KB" in str(err.value)
    assert "CONFEVAL_MAX_COMPRESSION_RATIO" in str(err.value)
    _bounded(small_caps, cap)
    # the same bytes under a ratio the user raised for a file they trust: read whole
    monkeypatch.setenv("CONFEVAL_MAX_COMPRESSION_RATIO", "1000000")
    assert RecordSet.read(path).n_read == 0


def test_a_file_within_the_caps_is_read_whole(tmp_path, small_caps):
    path = tmp_path / "ok.jsonl.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + b'{"p": 0.25, "y": 1}\r\n' * 1000))
    rs = RecordSet.read(path)
    assert rs.n_read == 1000 and rs.frame["p"].tolist() == [0.25] * 1000


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_truncated_gzip_is_one_error_naming_the_file(tmp_path, cut):
    data = gzip.compress(b'{"p": 0.5, "y": 1}\n' * 20_000)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(RecordsError, match=r"cut.jsonl.gz: the compressed data cannot be "
                                           r"read: it ends early \(truncated\)"):
        RecordSet.read(path)


@pytest.mark.parametrize("value", ["0", "-3", "many", "inf"])
def test_a_cap_set_to_no_positive_number_is_named(tmp_path, monkeypatch, value):
    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", value)
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n"))
    with pytest.raises(ValueError, match=f"CONFEVAL_MAX_DECOMPRESSED_MB='{value}': expected "
                                         "a positive number"):
        RecordSet.read(path)


# ------------------------------------------------------------------------- zip archives
def _archive(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.fixture()
def member_reads(monkeypatch):
    """Caps of 1 MB a member and 2 MB for a small archive, and the size of every chunk the
    members were decompressed in."""
    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", "1")
    monkeypatch.setattr(U, "RATIO_FLOOR", 2 * MB)
    chunks: list[int] = []
    original = U.member_chunks

    def spy(handle, info):
        for chunk in original(handle, info):
            chunks.append(len(chunk))
            yield chunk

    monkeypatch.setattr(U, "member_chunks", spy)
    return chunks


def test_a_zip_member_bomb_is_refused_at_the_cap(tmp_path, member_reads):
    path = _archive(tmp_path / "log.eval", {"header.json": b"{}",
                                            "samples/1_epoch_1.json": b" " * (64 * MB)})
    assert path.stat().st_size < 200_000
    with pytest.raises(U.UntrustedFileError) as err:
        U.check_archive(path)
    assert str(err.value).startswith(f"{path}: member 'samples/1_epoch_1.json' decompresses "
                                     "to more than 1.0 MB, the cap of one compressed stream")
    assert max(member_reads) <= U.CHUNK and sum(member_reads) <= 1 * MB + U.CHUNK + 2


def test_many_members_each_under_the_cap_are_refused_in_all(tmp_path, member_reads):
    members = {f"samples/{i}_epoch_1.json": b" " * (900 * 1024) for i in range(4)}
    path = _archive(tmp_path / "log.eval", members)
    with pytest.raises(U.UntrustedFileError, match=r"log.eval: decompresses to more than "
                                                   r"2.0 MB \(at member 'samples/2_epoch_1"):
        U.check_archive(path)
    assert sum(member_reads) <= 2 * MB + U.CHUNK


def test_a_zstd_member_bomb_is_refused_at_the_cap(tmp_path, member_reads):
    pytest.importorskip("zipfile_zstd", reason="zstd members need inspect-ai's zipfile_zstd")
    pytest.importorskip("zstandard", reason="zstd members need zstandard")
    path = _archive(tmp_path / "log.eval", {"samples/1_epoch_1.json": b" " * (64 * MB)},
                    compression=93)
    with pytest.raises(U.UntrustedFileError, match="member 'samples/1_epoch_1.json' "
                                                   "decompresses to more than 1.0 MB"):
        U.check_archive(path)
    assert max(member_reads) <= U.CHUNK and sum(member_reads) <= 1 * MB + U.CHUNK


def test_an_archive_within_the_caps_passes_and_a_damaged_one_is_left_to_its_reader(tmp_path):
    path = _archive(tmp_path / "ok.eval", {"a.json": b'{"x": 1}' * 1000, "b.json": b"[]"},
                    compression=zipfile.ZIP_STORED)
    U.check_archive(path)
    cut = tmp_path / "cut.eval"
    cut.write_bytes(path.read_bytes()[:100])
    U.check_archive(cut)          # no zip at all: Inspect's reader names what is wrong


def test_a_damaged_member_does_not_end_the_check_of_the_others(tmp_path, member_reads):
    """A first member whose compressed data is overwritten (a reader skips it, or stops
    there) used to end the whole check: the bomb after it went unchecked."""
    path = _archive(tmp_path / "log.eval", {"aaa.bin": b"hello world " * 1000,
                                            "samples/1_epoch_1.json": b" " * (64 * MB)})
    with zipfile.ZipFile(path) as archive:
        first = archive.getinfo("aaa.bin")
    with open(path, "r+b") as handle:   # the deflate data's first bytes: an invalid block
        handle.seek(first.header_offset + 26)
        name_length, extra_length = struct.unpack("<HH", handle.read(4))
        handle.seek(first.header_offset + 30 + name_length + extra_length)
        handle.write(b"\xff\xff\xff\xff")
    with pytest.raises(zlib.error):   # the damage is real: the first member cannot be read
        list(U.member_chunks(open(path, "rb"), first))
    with pytest.raises(U.UntrustedFileError, match=r"member 'samples/1_epoch_1.json' "
                                                   r"decompresses to more than 1.0 MB"):
        U.check_archive(path)


# ------------------------------------------------------------------------- lines and keys
def test_bounded_lines_skip_an_over_long_line_without_holding_it():
    text = io.StringIO("short\n" + "x" * 10_000 + "\n" + "y" * 50 + "\nlast")
    assert list(U.bounded_lines(text, 100)) == ["short\n", None, "y" * 50 + "\n", "last"]
    assert list(U.bounded_lines(io.StringIO("z" * 101), 100)) == [None]


def test_top_level_fields_of_a_cut_line():
    start = ('{"doc_id": 7, "doc": {"q": "a } tricky \\" value", "n": [1, {"k": "v"}]}, '
             '"target": "2", "arguments": {"gen_args_0": {"arg_0": "Question: ')
    assert U.top_level_fields(start) == {"doc_id": None, "doc": None, "target": "2",
                                         "arguments": None}
    assert U.top_level_fields('  [{"a": 1}]') == {}
    assert U.top_level_fields('{"custom_id": "q1", "response": {"status_code": 200, "bo') == {
        "custom_id": "q1", "response": None}


# ---------------------------------------------------------------------- one key, one value
@pytest.mark.parametrize("text", ['{"a": 1, "b": [1, {"c": null}], "d": {}}', "[]", '"x"',
                                  "3.5", b'{"a": {"a": 1}}', '{"a": 1, "A": 2}'])
def test_loads_unique_reads_what_json_reads(text):
    import json

    assert U.loads_unique(text) == json.loads(text)


@pytest.mark.parametrize("text, key", [
    ('{"sha256": "ab", "sha256": "cd"}', "sha256"),
    ('{"x": [1, {"threshold": 0.1, "k": 0, "threshold": 0.2}]}', "threshold"),   # nested
    (b'{"a": {}, "a": {}}', "a"),                                                 # bytes
    ('{"": 1, "": 2}', ""),
    ('{"\\u00e9": 1, "\\u00e9": 2}', "\u00e9"),   # the same key spelt escaped
])
def test_a_key_named_twice_is_an_error_naming_it(text, key):
    with pytest.raises(U.DuplicateKeyError) as caught:
        U.loads_unique(text)
    assert caught.value.key == key and f"key {key!r} appears twice" in str(caught.value)
    assert isinstance(caught.value, ValueError)   # readers that count bad lines count it too


def test_a_duplicate_keys_values_are_shown_cut_short():
    with pytest.raises(U.DuplicateKeyError, match=r'\("v", then \["x{35}\.\.\.\)'):
        U.loads_unique('{"k": "v", "k": ["' + "x" * 1000 + '"]}')
    # a long key is cut as well: a message, not a copy of the document
    with pytest.raises(U.DuplicateKeyError) as caught:
        U.loads_unique('{"' + "y" * 100_000 + '": 1, "' + "y" * 100_000 + '": 2}')
    assert str(caught.value).startswith("key '" + "y" * 56 + "... appears twice")
    assert len(str(caught.value)) < 200 and caught.value.key == "y" * 100_000


def test_a_key_named_twice_with_one_value_says_so_rather_than_either_value():
    with pytest.raises(U.DuplicateKeyError, match=r"key 'a' appears twice in one object "
                                                  r"\(both times 1\): a JSON object names "
                                                  "each key once"):
        U.loads_unique('{"a": 1, "a": 1}')
    # 1 and 1.0, or 1 and true, are different values in a file
    with pytest.raises(U.DuplicateKeyError, match=r"\(1, then 1.0\): a reader may take"):
        U.loads_unique('{"a": 1, "a": 1.0}')


def test_loads_unique_keeps_json_s_own_errors():
    import json

    with pytest.raises(json.JSONDecodeError, match="BOM"):
        U.loads_unique('\ufeff{"a": 1}')
    with pytest.raises(json.JSONDecodeError):
        U.loads_unique('{"a": 1')
    with pytest.raises(RecursionError):
        U.loads_unique("[" * 100_000 + "]" * 100_000)


def test_an_object_of_many_keys_is_read_whole():
    """The hook builds one dict per object (no per-key search): a 200,000-key object and a
    list of 100,000 small objects read as json reads them (linear; no clock asserted)."""
    import json

    wide = json.dumps({f"k{i}": i for i in range(200_000)})
    assert len(U.loads_unique(wide)) == 200_000
    many = json.dumps([{"a": i, "b": [i]} for i in range(100_000)])
    assert U.loads_unique(many) == json.loads(many)
    with pytest.raises(U.DuplicateKeyError, match="'k0' appears twice"):
        U.loads_unique(wide[:-1] + ', "k0": 1}')


def test_a_model_config_naming_a_key_twice_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"num_hidden_layers": 2, "hidden_size": 8, "num_hidden_layers": 200}')
    with pytest.raises(ValueError, match=r"config.json: key 'num_hidden_layers' appears "
                                         r"twice in one object \(2, then 200\)"):
        U.read_small_json(path)
