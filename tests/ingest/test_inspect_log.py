"""Inspect logs, on the real .eval log Inspect 0.3.285 wrote (tests/fixtures/ingest): every
sample of every epoch read, correctness equal to the scorer's values, the option letters read
from the log-probabilities; damaged samples counted under their reasons, a damaged log one
error naming it."""

from pathlib import Path

import numpy as np
import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai is not installed "
                                 "(pip install 'confeval[ingest]')")

from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402

from confeval.ingest import detect  # noqa: E402
from confeval.ingest.inspect_log import read_log  # noqa: E402
from tests.ingest.layouts import read_records  # noqa: E402

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "inspect" / "arith_mc.eval"


def test_every_sample_and_epoch_with_the_scorers_values():
    log = read_eval_log(str(LOG))
    samples, reasons, model = read_log(LOG)
    assert len(samples) == len(log.samples) == 40 and model == "hf/local"
    assert not any(reasons)
    assert {s.epoch for s in samples} == {1, 2}
    for got, sample in zip(samples, log.samples):
        assert got.doc_id == sample.id and got.target == sample.target
        assert got.correct == {"C": 1.0, "I": 0.0}[sample.scores["choice"].value]
        assert set(got.letter_logprobs) == set("ABCDEFGH"[:len(sample.choices)])
    rs = read_records(LOG, "score")
    assert rs.n_read == 40 and int(rs.mask.sum()) == 40
    np.testing.assert_array_equal(rs.frame["correct"], [s.correct for s in samples])


def test_letters_come_from_the_first_letter_token_and_its_alternatives():
    log = read_eval_log(str(LOG))
    samples, _, _ = read_log(LOG)
    first = log.samples[0].output.choices[0].logprobs.content[0]
    tops = {t.token: t.logprob for t in first.top_logprobs}
    for letter, lp in samples[0].letter_logprobs.items():
        if letter in tops:
            assert lp == pytest.approx(tops[letter], abs=1e-12)
        else:
            assert lp == pytest.approx(np.log(1e-5))   # missing from the top 5: the floor
    sets = read_records(LOG, "sets")
    assert sets.frame.iloc[0]["answer"] == log.samples[0].target


def test_damaged_samples_are_counted_and_a_damaged_log_is_one_error(tmp_path):
    log = read_eval_log(str(LOG))
    for content in log.samples[0].output.choices[0].logprobs.content:   # no letter anywhere
        content.token, content.top_logprobs = "x", []
    log.samples[1].output.choices[0].logprobs = None
    log.samples[2].scores = {}
    log.samples[3].target = "Z"
    damaged = tmp_path / "damaged.eval"
    write_eval_log(log, str(damaged))
    rs = read_records(damaged, "score")
    assert rs.n_read == 40 and int(rs.mask.sum()) == 36
    assert rs.excluded == {"inspect_no_letter_in_top_logprobs": 1, "inspect_no_logprobs": 1,
                           "inspect_no_score": 1, "inspect_target_not_a_choice": 1}
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(LOG.read_bytes()[: LOG.stat().st_size // 2])
    assert detect(truncated) == "inspect"
    with pytest.raises(ValueError, match="truncated.eval: not a readable Inspect log"):
        read_records(truncated, "score")
    with pytest.raises(ValueError, match="no measures records"):
        read_records(LOG, "measures")


def test_correctness_follows_every_scorer_value_by_inspects_rules(tmp_path):
    """The embedded model never writes ``ANSWER: X``, so ``choice()`` scored every sample I in
    the real log; rewrite the values (C, I, P, N, a number) and read them back."""
    from inspect_ai.scorer import value_to_float

    log = read_eval_log(str(LOG))
    values = ["C", "I", "P", "N", 0.25]
    for i, sample in enumerate(log.samples):
        sample.scores["choice"].value = values[i % len(values)]
    rescored = tmp_path / "rescored.eval"
    write_eval_log(log, str(rescored))
    rs = read_records(rescored, "score")
    assert rs.n_read == 40 and int(rs.mask.sum()) == 40
    expected = [value_to_float()(values[i % len(values)]) for i in range(40)]
    np.testing.assert_array_equal(rs.frame["correct"], expected)
    assert expected[:5] == [1.0, 0.0, 0.5, 0.0, 0.25]


def test_a_gold_letter_missing_from_the_top_logprobs_is_counted_not_dropped():
    samples, _, _ = read_log(LOG)
    floor = np.log(1e-5)
    lacking = sum(any(v == pytest.approx(floor) for v in s.letter_logprobs.values())
                  for s in samples)
    gold_missing = [s.letter_logprobs[s.target] == pytest.approx(floor) for s in samples]
    for suite in ("score", "sets"):
        rs = read_records(LOG, suite)
        assert int(rs.mask.sum()) == 40   # kept, with the floor as the gold's log-prob
        assert rs.notes["letters_not_in_top_logprobs"] == {
            "samples_lacking_a_letter": lacking,
            "samples_lacking_the_gold_letter": sum(gold_missing),
            "given_log_probability": "log(1e-5)"}
        np.testing.assert_array_equal(rs.frame["gold_in_top_logprobs"],
                                      [0 if g else 1 for g in gold_missing])
    assert 0 < sum(gold_missing) < 40    # the real log has both kinds (12 lack the gold)


# ---- hostile logs (issue #36 item 5) ----

def test_a_sample_logged_twice_in_one_epoch_counts_once(tmp_path):
    log = read_eval_log(str(LOG))
    log.samples.append(log.samples[0].model_copy(deep=True))
    twice = tmp_path / "twice.json"          # a JSON log holds its samples as a list
    write_eval_log(log, str(twice))
    rs = read_records(twice, "score")
    assert rs.n_read == 41 and int(rs.mask.sum()) == 40
    assert rs.excluded == {"duplicate_sample": 1}


@pytest.mark.parametrize("value", [5.0, float("inf"), float("nan")])
def test_an_impossible_log_probability_excludes_the_sample(tmp_path, value):
    log = read_eval_log(str(LOG))
    log.samples[5].output.choices[0].logprobs.content[0].top_logprobs[0].logprob = value
    path = tmp_path / "impossible.eval"
    write_eval_log(log, str(path))
    for suite in ("score", "sets"):
        rs = read_records(path, suite)
        assert rs.excluded == {"impossible_logprob": 1} and int(rs.mask.sum()) == 39


def test_an_eval_archive_bomb_is_refused_before_inspect_reads_it(tmp_path, monkeypatch):
    import zipfile

    import inspect_ai.log

    monkeypatch.setenv("CONFEVAL_MAX_DECOMPRESSED_MB", "2")

    def never(*args, **kwargs):
        raise AssertionError("Inspect was asked to read a bomb whole")

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", never)
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(LOG) as real, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("header.json", real.read("header.json"))
        out.writestr("samples/1_epoch_1.json", b" " * (64 << 20))
    assert bomb.stat().st_size < 200_000 and detect(bomb) == "inspect"
    with pytest.raises(ValueError, match=f"{bomb}: member 'samples/1_epoch_1.json' "
                                         "decompresses to more than 2.0 MB"):
        read_records(bomb, "score")


def _log_with(tmp_path, member: str, old: bytes, new: bytes) -> Path:
    """The fixture log re-archived (deflate) with ``old`` replaced by ``new`` in ``member``."""
    import zipfile

    from confeval._untrusted import member_chunks

    path = tmp_path / "edited.eval"
    with open(LOG, "rb") as handle, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in zipfile.ZipFile(handle).infolist():
            data = b"".join(member_chunks(handle, info))
            out.writestr(info.filename, data.replace(old, new, 1) if info.filename == member
                         else data)
    return path


@pytest.mark.parametrize("member, old, new, key", [
    ("samples/arith-mc-3_epoch_1.json", b'"epoch":1,', b'"epoch":1,"epoch":2,', "epoch"),
    ("header.json", b'"status":"success",', b'"status":"success","status":"error",',
     "status"),
])
def test_a_key_named_twice_in_an_eval_log_is_one_error_naming_file_member_and_key(
        tmp_path, monkeypatch, member, old, new, key):
    """Inspect keeps one of the two values silently (another reader may keep the other):
    refused before Inspect reads the log."""
    import inspect_ai.log

    assert read_log(_log_with(tmp_path, member, b"", b""))[1] == read_log(LOG)[1]   # as is
    path = _log_with(tmp_path, member, old, new)

    def never(*args, **kwargs):
        raise AssertionError("Inspect was asked to read a log of two meanings")

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", never)
    with pytest.raises(ValueError, match=f"{path}: member '{member}': key '{key}' appears "
                                         "twice in one object"):
        read_records(path, "score")


def test_a_key_named_twice_in_a_json_log_is_one_error_naming_file_and_key(tmp_path):
    path = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(LOG)), str(path))
    text = path.read_text(encoding="utf-8")
    assert read_log(path)[0]                                   # read as written
    path.write_text(text.replace('"scorer": "', '"scorer": "x", "scorer": "', 1),
                    encoding="utf-8")
    with pytest.raises(ValueError, match=f"{path}: key 'scorer' appears twice in one "
                                         "object"):
        read_log(path)
