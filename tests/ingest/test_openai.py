"""OpenAI-compatible responses, on the responses a real server wrote (llama.cpp's server with
the embedded model, tests/fixtures/ingest/make_fixtures.py): every line read, matched to the
data it answers by custom_id (batch output) and by position (a plain list), the letters' and
ratings' log-probabilities equal to a transcription of the server's own numbers; damaged lines
counted under their reasons, a file that cannot be read one error naming it."""

import gzip
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

from confeval.ingest import detect
from tests.ingest.layouts import read_records
from tests.ingest.responses import chat_response, write_lines

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "openai"
MC_DATA = HERE / "mc_data.jsonl"
MC_BATCH = HERE / "mc_batch_output.jsonl"
MC_LIST = HERE / "mc_responses.json"
JUDGE_DATA = HERE / "judge_data.jsonl"
JUDGE_BATCH = HERE / "judge_batch_output.jsonl"
JUDGE_PLAIN = HERE / "judge_responses.jsonl"
FLOOR = math.log(1e-5)


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _letters_by_hand(body, letters):
    """The option letters' log-probabilities at the first generated token that is a letter
    (or whose alternatives list one), transcribed from the response's own fields: the
    server's spellings of a letter (" B", "B.") add up; a letter absent gets ln 1e-5."""
    content = body["choices"][0]["logprobs"]["content"]

    def norm(token):
        return token.strip().rstrip(").:,").lstrip("(").strip()

    at = next((t for t in content if norm(t["token"]) in letters), None) or next(
        (t for t in content if any(norm(a["token"]) in letters for a in t["top_logprobs"])),
        None)
    if at is None:
        return None
    pairs = [(a["token"], a["logprob"]) for a in at["top_logprobs"]]
    if norm(at["token"]) not in {norm(tok) for tok, _ in pairs}:
        pairs.append((at["token"], at["logprob"]))
    return np.array([logsumexp([lp for tok, lp in pairs if norm(tok) == L])
                     if any(norm(tok) == L for tok, _ in pairs) else FLOOR for L in letters])


def test_the_fixture_is_what_a_server_wrote():
    assert detect(MC_BATCH) == detect(MC_LIST) == detect(JUDGE_PLAIN) == "openai"
    body = _jsonl(MC_BATCH)[0]["response"]["body"]
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]


def test_score_is_the_servers_letters_renormalised():
    data = {row["item_id"]: row for row in _jsonl(MC_DATA)}
    rs = read_records(MC_BATCH, "score", data=str(MC_DATA))
    lines = _jsonl(MC_BATCH)
    assert rs.n_read == len(lines) == len(data)
    frame = rs.frame.set_index("item_id")
    n_used = 0
    for line in lines:
        item = data[line["custom_id"]]
        letters = "ABCDEFGH"[:len(item["options"])]
        lp = _letters_by_hand(line["response"]["body"], letters)
        if lp is None:
            continue
        n_used += 1
        row = frame.loc[line["custom_id"]]
        p = np.exp(lp - lp.max())
        p /= p.sum()
        top = int(np.argmax(lp))
        assert row["confidence"] == pytest.approx(p[top], abs=1e-12)
        assert row["letter"] == letters[top] and row["answer"] == item["answer"]
        assert row["correct"] == int(letters[top] == item["answer"])
    assert int(rs.mask.sum()) == n_used > 0
    # at temperature 0 the reply's own letter is the most likely one
    replies = [line["response"]["body"]["choices"][0]["message"]["content"] for line in lines]
    said = [re.match(r"\s*\(?([A-H])\b", text) for text in replies]
    agreed = [frame.loc[line["custom_id"], "letter"] == m.group(1)
              for line, m in zip(lines, said) if m and line["custom_id"] in frame.index
              and isinstance(frame.loc[line["custom_id"], "letter"], str)]
    assert agreed and all(agreed)


def test_a_plain_list_by_position_gives_the_batch_by_custom_id():
    batch = read_records(MC_BATCH, "sets", data=str(MC_DATA))
    plain = read_records(MC_LIST, "sets", data=str(MC_DATA))
    assert batch.n_read == plain.n_read == len(_jsonl(MC_DATA))
    logits = [c for c in batch.frame.columns if c.startswith("logit_")]
    np.testing.assert_array_equal(batch.frame[logits].to_numpy(),
                                  plain.frame[logits].to_numpy())
    np.testing.assert_array_equal(batch.frame["answer"], plain.frame["answer"])
    assert batch.frame["custom_id"].notna().all() and plain.frame["custom_id"].isna().all()


def _rating_by_hand(body, levels=range(1, 6)):
    """The judge's rating as its reply states it after "Score:" (None: it states none)."""
    text = body["choices"][0]["message"]["content"]
    found = re.findall(r"score\s*\**\s*[:：]\**\s*\**(\d+)", text, flags=re.IGNORECASE)
    return int(found[-1]) if found and int(found[-1]) in levels else None


def test_a_judges_ratings_and_their_log_probabilities():
    lines = _jsonl(JUDGE_BATCH)
    rs = read_records(JUDGE_BATCH, "intervals", data=str(JUDGE_DATA))
    assert rs.n_read == len(lines)
    data = {row["item_id"]: row for row in _jsonl(JUDGE_DATA)}
    frame = rs.frame[rs.mask].set_index("item_id")
    assert len(frame) > 0
    lp_cols = [f"s2_lp{k}" for k in range(1, 6)]
    for item_id, row in frame.iterrows():
        assert row["gt_score"] == data[item_id]["gt_score"]        # joined from the data
        assert 1 <= row["parsed_score"] <= 5
        lp = row[lp_cols].to_numpy(float)
        assert np.all(lp <= 0)
        body = next(line for line in lines if line["custom_id"] == item_id)["response"]["body"]
        stated = _rating_by_hand(body)
        if row["rating_stage"] == "anchored" and stated is not None:
            assert row["parsed_score"] == stated
        # at the rating position, each rating's log-prob is the server's for that token
        # among the top alternatives (spelled several ways: their sum), else the floor
        at = body["choices"][0]["logprobs"]["content"][int(row["rating_position"])]
        pairs = [(a["token"], a["logprob"]) for a in at["top_logprobs"]]
        if at["token"] not in {tok for tok, _ in pairs}:
            pairs.append((at["token"], at["logprob"]))
        for k in range(1, 6):
            same = [v for tok, v in pairs if tok.strip().rstrip(".,;:!?)]}/*") == str(k)]
            assert lp[k - 1] == pytest.approx(logsumexp(same) if same else FLOOR, abs=1e-12)
        assert row["parsed_score"] == int(str(at["token"]).strip().rstrip(".,;:!?)]}/*"))
    plain = read_records(JUDGE_PLAIN, "intervals", data=str(JUDGE_DATA))
    np.testing.assert_array_equal(plain.frame[lp_cols].to_numpy(),
                                  rs.frame[lp_cols].to_numpy())


# ---- damaged files: every bad line counted under its reason, never a crash or a drop ----

@pytest.fixture()
def mc_data(tmp_path):
    rows = [{"item_id": "q1", "question": "1+1?", "options": ["1", "2", "3"], "answer": "B"},
            {"item_id": "q2", "question": "2+2?", "options": ["4", "5"], "answer": "A"},
            {"item_id": "q3", "question": "?", "options": ["a", "b"], "answer": "Z"},
            {"item_id": "q4", "question": "3+3?", "options": ["6", "7"], "answer": "A"}]
    return write_lines(tmp_path / "data.jsonl", rows)


def test_damaged_lines_are_counted_under_their_reasons(tmp_path, mc_data):
    good = chat_response("B", [("B", -0.1), (" A", -2.5), ("C", -3.0)])
    lines = [
        {"custom_id": "q1", "response": {"status_code": 200, "body": good}, "error": None},
        {"custom_id": "q2", "response": {"status_code": 200, "body": {**good, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "A"}}]}}, "error": None},
        {"custom_id": "q3", "response": {"status_code": 200, "body": good}, "error": None},
        {"custom_id": "q9", "response": {"status_code": 200, "body": good}, "error": None},
        {"custom_id": "q4", "response": {"status_code": 500, "body": {"error": "x"}},
         "error": None},
        {"custom_id": "q4", "response": None, "error": {"code": "batch_expired"}},
        {"custom_id": "q4", "response": {"status_code": 200, "body": {
            **good, "choices": []}}, "error": None},
        {"custom_id": "q4", "response": {"status_code": 200,
                                         "body": chat_response("x", [("x", -0.1)])},
         "error": None},
        '{"custom_id": "q4", "response": {"status_co',
        "[" * 100_000 + "]" * 100_000,
    ]
    path = write_lines(tmp_path / "out.jsonl", lines)
    rs = read_records(path, "score", data=str(mc_data))
    assert rs.n_read == len(lines) and int(rs.mask.sum()) == 1
    assert rs.excluded == {"openai_no_logprobs": 1, "data_answer_not_an_option": 1,
                           "openai_no_data_row": 1, "openai_error": 2,
                           "openai_no_choices": 1, "openai_no_letter_in_top_logprobs": 1,
                           "openai_not_a_json_object": 2}
    data_note, letters_note, confidence_note = rs.notes.values()
    assert confidence_note.startswith("the probability of the most likely option")
    assert data_note == {"data_rows": 4, "data_rows_without_response": 1}   # q4 unanswered
    assert letters_note["samples_lacking_the_gold_letter"] == 0
    row = rs.frame[rs.mask].iloc[0]
    p = np.exp([-2.5, -0.1, -3.0])
    assert row["confidence"] == pytest.approx(p.max() / p.sum(), abs=1e-15)


def test_completions_responses_and_their_top_logprobs(tmp_path, mc_data):
    body = {"object": "text_completion", "model": "m", "choices": [{
        "index": 0, "text": " A", "logprobs": {"tokens": [" A"], "token_logprobs": [-0.2],
                                              "top_logprobs": [{" A": -0.2, " B": -1.9}]}}]}
    path = write_lines(tmp_path / "completions.jsonl", [body, body])
    rs = read_records(path, "sets", data=str(mc_data))   # by position: q1, q2
    assert int(rs.mask.sum()) == 2
    np.testing.assert_allclose(rs.frame.loc[0, ["logit_A", "logit_B", "logit_C"]].to_numpy(
        float), [-0.2, -1.9, FLOOR])
    assert list(rs.frame["item_id"]) == ["q1", "q2"] and rs.frame.loc[0, "n_missing"] == 1


# ---- hostile files (issue #36 item 5) ----

def test_retried_responses_appended_count_once(tmp_path):
    """A batch whose 80 responses were all retried and appended (160 lines): each custom_id
    is one sample, the first usable response kept; an error retried keeps the retry."""
    lines = _jsonl(MC_BATCH)
    path = write_lines(tmp_path / "retried.jsonl", lines + lines)
    rs = read_records(path, "score", data=str(MC_DATA))
    once = read_records(MC_BATCH, "score", data=str(MC_DATA))
    usable = int(once.mask.sum())
    assert rs.n_read == 2 * len(lines) and int(rs.mask.sum()) == usable
    assert rs.excluded == {**{k: 2 * v for k, v in once.excluded.items()},
                           "duplicate_sample": usable}
    np.testing.assert_array_equal(rs.frame["confidence"][rs.mask], once.frame["confidence"][
        once.mask])
    failed = {**lines[0], "response": None, "error": {"code": "server_error"}}
    retried = read_records(write_lines(tmp_path / "error_then_retry.jsonl",
                                       [lines[1], failed, lines[0], lines[0]]), "score",
                           data=str(MC_DATA))
    assert retried.excluded == {"openai_error": 1, "duplicate_sample": 1}
    by_id = once.frame.set_index("custom_id")["confidence"]
    assert retried.frame["confidence"][retried.mask].tolist() == \
        [by_id[lines[1]["custom_id"]], by_id[lines[0]["custom_id"]]]


@pytest.mark.parametrize("value", [5.0, float("inf"), float("nan"), "1e400"])
def test_an_impossible_top_logprob_excludes_the_response(tmp_path, mc_data, value):
    """+5.0 among the top alternatives was renormalised and used; now the response is
    excluded under impossible_logprob, for every layout, and no numpy warning is raised."""
    good = chat_response("B", [("B", -0.1), (" A", -2.5), ("C", -3.0)])
    bad = json.loads(json.dumps(good))
    bad["choices"][0]["logprobs"]["content"][0]["top_logprobs"][1]["logprob"] = 0.0
    literal = value if isinstance(value, str) else json.dumps(value)   # Infinity, NaN
    text = json.dumps(bad).replace('"logprob": 0.0', f'"logprob": {literal}')
    path = write_lines(tmp_path / "out.jsonl", [good, text])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for suite in ("score", "sets"):
            rs = read_records(path, suite, data=str(mc_data))
            assert rs.excluded == {"impossible_logprob": 1} and int(rs.mask.sum()) == 1


def test_a_bom_crlf_and_gzip_are_read_as_the_plain_file(tmp_path):
    raw = MC_BATCH.read_bytes().replace(b"\n", b"\r\n")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + raw)
    gz = tmp_path / "bom.jsonl.gz"
    gz.write_bytes(gzip.compress(bom.read_bytes()))
    plain = read_records(MC_BATCH, "score", data=str(MC_DATA))
    for path in (bom, gz):
        assert detect(path) == "openai"
        rs = read_records(path, "score", data=str(MC_DATA))
        assert rs.excluded == plain.excluded and int(rs.mask.sum()) == int(plain.mask.sum())
        np.testing.assert_array_equal(rs.frame["confidence"], plain.frame["confidence"])


def test_a_first_response_of_megabytes_is_recognised(tmp_path):
    lines = _jsonl(MC_BATCH)
    lines[0]["response"]["body"]["system_fingerprint"] = "x" * 3_000_000
    path = write_lines(tmp_path / "long.jsonl", lines)
    assert detect(path) == "openai"
    assert read_records(path, "score", data=str(MC_DATA)).n_read == len(lines)


def test_a_json_list_naming_a_key_twice_is_one_error_naming_it_and_the_key(tmp_path):
    """A JSON list of responses is one document: a key named twice in it (here a token's
    log-probability) is refused whole, naming the file and the key."""
    path = tmp_path / "responses.json"
    text = MC_LIST.read_text(encoding="utf-8")
    assert '"logprob": -1.1579797267913818,' in text
    path.write_text(text.replace('"logprob": -1.1579797267913818,',
                                 '"logprob": -0.01, "logprob": -1.1579797267913818,', 1),
                    encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: a JSON list of responses in "
                                                   "which key 'logprob' appears twice")):
        read_records(path, "sets", data=str(MC_DATA))
