"""The scoring commands on OpenAI-compatible responses a real server wrote (llama.cpp's
server on the embedded model, tests/fixtures/ingest/make_fixtures.py), with --data: every line
read, the values those of the records confeval imports, errors one line naming the file."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.ingest.layouts import import_records, read_records
from tests.ingest.responses import chat_response, write_lines

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "openai"
MC_DATA = HERE / "mc_data.jsonl"
MC_BATCH = HERE / "mc_batch_output.jsonl"
JUDGE_DATA = HERE / "judge_data.jsonl"
JUDGE_BATCH = HERE / "judge_batch_output.jsonl"


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture()
def mc_data(tmp_path):
    rows = [{"item_id": "q1", "question": "1+1?", "options": ["1", "2", "3"], "answer": "B"},
            {"item_id": "q2", "question": "2+2?", "options": ["4", "5"], "answer": "A"}]
    return write_lines(tmp_path / "data.jsonl", rows)


def test_sets_score_reads_every_line(capsys):
    from confeval.cli import main

    assert main(["sets", "score", str(MC_BATCH), "--data", str(MC_DATA), "--json"]) == 0
    (res,) = json.loads(capsys.readouterr().out)["results"].values()
    assert res["n_read"] == len(_jsonl(MC_BATCH))


def test_agreement_on_a_judges_responses_is_scipys(capsys):
    from scipy.stats import spearmanr

    from confeval.cli import main

    frame, counts = import_records(JUDGE_BATCH, "intervals", data=str(JUDGE_DATA))
    assert main(["agreement", str(JUDGE_BATCH), "--data", str(JUDGE_DATA), "--bootstrap", "0",
                 "--json"]) == 0
    (res,) = json.loads(capsys.readouterr().out)["results"].values()
    assert res["n_used"] == counts["n_used"] == len(frame)
    expected = spearmanr(frame["parsed_score"], frame["gt_score"]).statistic
    spearman = res["spearman"]
    spearman = spearman["value"] if isinstance(spearman, dict) else spearman
    if np.isnan(expected):
        assert spearman is None or np.isnan(spearman)
    else:
        assert spearman == pytest.approx(expected, abs=1e-12)


def test_what_cannot_be_read_is_one_error_naming_the_file(tmp_path, mc_data, capsys):
    from confeval.cli import main

    batch = write_lines(tmp_path / "out.jsonl", [{"custom_id": "q1", "response": {
        "status_code": 200, "body": chat_response("B", [("B", -0.1)])}, "error": None}])
    assert main(["score", str(batch), "--json"]) == 2           # no --data: no gold answer
    err = capsys.readouterr().err.strip()
    assert str(batch) in err and "--data" in err and len(err.splitlines()) == 1
    assert main(["measures", "score", str(batch), "--data", str(mc_data), "--json"]) == 2
    assert "no measures records" in capsys.readouterr().err
    truncated = tmp_path / "list.json"
    truncated.write_text('[{"object": "chat.completion", "choices": [', encoding="utf-8")
    with pytest.raises(ValueError, match="list.json: not a readable JSON list"):
        read_records(truncated, "score", from_format="openai", data=str(mc_data))
    records = write_lines(tmp_path / "own.jsonl", [{"confidence": 0.5, "correct": 1}])
    with pytest.raises(ValueError, match="--data names the data"):
        read_records(records, "score", data=str(mc_data))
    # no custom_id, and a data file with an unreadable line: positions would shift
    bad_data = tmp_path / "bad.jsonl"
    bad_data.write_text(mc_data.read_text() + "{oops\n", encoding="utf-8")
    plain = write_lines(tmp_path / "plain.jsonl", [chat_response("B", [("B", -0.1)])])
    with pytest.raises(ValueError, match="bad.jsonl: unreadable lines"):
        read_records(plain, "score", data=str(bad_data))


def test_intervals_score_of_a_judges_responses_reads_every_line(capsys):
    from confeval.cli import main

    assert main(["intervals", "score", str(JUDGE_BATCH), "--data", str(JUDGE_DATA),
                 "--methods", "naive,lac", "--seeds", "1-2", "--json"]) == 0
    (res,) = json.loads(capsys.readouterr().out)["results"].values()
    rs = read_records(JUDGE_BATCH, "intervals", data=str(JUDGE_DATA))
    assert res["n_read"] == len(_jsonl(JUDGE_BATCH)) and res["n_used"] == int(rs.mask.sum())
    assert res["excluded"] == rs.excluded


def test_guarantee_of_responses_is_the_guarantee_of_their_imported_records(tmp_path, capsys):
    from confeval.cli import main

    frame, _ = import_records(MC_BATCH, "score", data=str(MC_DATA))
    records = tmp_path / "records.csv"
    frame.to_csv(records, index=False)
    flags = ["--target", "0.7", "--delta", "0.1", "--json"]
    assert main(["guarantee", str(MC_BATCH), "--data", str(MC_DATA), *flags]) == 0
    direct = json.loads(capsys.readouterr().out)["guarantee"]
    assert main(["guarantee", str(records), "-c", "confidence", "-y", "correct", *flags]) == 0
    imported = json.loads(capsys.readouterr().out)["guarantee"]
    assert direct["n_calibration"] == imported["n_calibration"] == len(frame)
    assert direct["threshold"] == imported["threshold"] and direct["bound"] == imported["bound"]
