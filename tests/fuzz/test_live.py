"""Hostile model replies and dataset rows through live runs against the loopback stub server:
a step verdict of 400 digits, NaN and positive log-probabilities, rows that cannot be asked.
Each asserts the exit code, the counts, and that no traceback is printed."""

from __future__ import annotations

import base64
import json
import math

import pandas as pd
import pytest

from confeval.backends.stub_server import StubServer, default_reply
from confeval.cli import main
from confeval.runs import load_run_records

from ..test_images import png_bytes, png_header_only


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))


def run(argv, capsys):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def test_a_400_digit_verdict_is_an_unparseable_step_not_a_dead_run(tmp_path, capsys):
    def reply(body):
        text = "<evaluation>[" + ", ".join(f'["s", 1, {"9" * 400}, ""]' for _ in range(8)) + \
            "]</evaluation>"
        return text, [(text, -0.1)]

    with StubServer(reply=reply) as server:
        argv = ["steps", "run", "--model", "openai:stub", "--base-url", server.base_url,
                "--n", "3", "--bootstrap", "0", "--out", tmp_path / "r"]
        code, out, err = run(argv, capsys)
        assert code == 0, err
        records = load_run_records(tmp_path / "r" / "records.jsonl")
        steps = [s for r in records for s in r["steps"]]
        assert steps and {s["reason"] for s in steps} == {"probability_out_of_range"}
        code, out, _ = run(argv, capsys)  # the cached reply does not kill the rerun either
        assert code == 0 and "3 resumed" in out


@pytest.mark.parametrize("bad", ["nan", "positive"])
def test_invalid_logprobs_from_a_server_are_unparseable(tmp_path, capsys, bad):
    value = math.nan if bad == "nan" else 0.7

    def reply(body):
        return "4", [("4", value), ("3", -2.0), ("5", -3.0), ("2", -4.0), ("1", -5.0)]

    with StubServer(reply=reply) as server:
        code, _, err = run(["intervals", "run", "--model", "openai:stub", "--base-url",
                              server.base_url, "--n", "25", "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    records = load_run_records(tmp_path / "r" / "records.jsonl")
    assert {r["status"] for r in records} == {"unparseable"}
    assert {r["reason"] for r in records} == {"invalid_logprobs"}
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["records_by_status"] == {"unparseable": 25}
    assert not metrics["sections"][0]["results"]  # no record had a usable rating
    assert "'score_lp*' not found" in metrics["warnings"][0]


def test_rows_that_cannot_be_asked_are_left_out_before_any_call(tmp_path, capsys):
    rows = [{"question": "2+2?", "options": ["3", "4"], "answer": "B"},
            {"question": None, "options": ["3", "4"], "answer": "B"},
            {"question": "1+1?", "options": None, "answer": "A"},
            {"question": "1+1?", "options": ["2", "3"], "answer": None},
            {"question": "1+3?", "options": ["4", "5"], "answer": "Z"},
            {"question": "1+4?", "options": ["5", "6"], "answer": "b"},
            {"question": "2+3?", "options": ["5", "6"], "answer": "A"}]
    data = tmp_path / "mc.jsonl"
    pd.DataFrame(rows).to_json(data, orient="records", lines=True)
    with StubServer(reply=default_reply) as server:
        code, _, err = run(["sets", "run", "--model", "openai:stub", "--base-url",
                              server.base_url, "--data", data, "--bootstrap", "0",
                              "--out", tmp_path / "r"], capsys)
        assert server.requests == 2
    assert code == 0, err
    assert "5 row(s) left out before any model call" in err
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["excluded_at_load"] == {"missing_question": 1, "fewer_than_2_options": 1,
                                           "missing_answer": 1, "answer_not_an_option": 2}


def test_a_second_run_into_the_same_folder_is_refused_and_duplicates_are_ignored(tmp_path,
                                                                                 capsys):
    import os
    import subprocess
    import sys
    import time

    out = tmp_path / "r"
    # the server answers one request and holds the rest until released: the first run is
    # still under way when the second starts, however slow the machine
    with StubServer(hold_after=1) as server:
        argv = ["sets", "run", "--model", "openai:stub", "--base-url", server.base_url,
                "--n", "40", "--concurrency", "1", "--bootstrap", "0", "--out", out]
        env = {**os.environ, "OPENAI_API_KEY": "x"}
        first = subprocess.Popen([sys.executable, "-m", "confeval.cli", *map(str, argv)],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 300  # a wait, not a measure: generous for a loaded machine
        lock = tmp_path / ".r.lock"  # beside the folder, where a swap of it cannot lose it
        while time.time() < deadline and not lock.exists():
            time.sleep(0.02)
        code, _, err = run(argv, capsys)
        assert code == 2 and "being written by another process" in err
        server.release()
        assert first.wait(timeout=300) == 0
        assert not lock.exists()
        # a folder that already holds every record twice (two runs before the lock existed)
        records = out / "records.jsonl"
        records.write_text(records.read_text() * 2)
        code, _, err = run(argv, capsys)
        assert code == 0, err
    metrics = json.loads((out / "metrics.json").read_text())
    assert code == 0 and metrics["duplicate_records_ignored"] == 40
    assert metrics["sections"][0]["results"]["openai:stub"]["n_used"] == 40


def _secret_never_sent(server, secret: bytes) -> None:
    sent = b"".join(server.received)
    for form in (secret, base64.b64encode(secret), base64.b64encode(b"\n" + secret),
                 base64.b64encode(b"\0" + secret)):
        assert form not in sent


def test_hostile_image_paths_of_a_flat_diagnose_file_never_reach_the_server(tmp_path, capsys):
    secret = b"TOP-SECRET-DIAGNOSE-1234567890"
    (tmp_path / "secret.txt").write_bytes(secret)
    data = tmp_path / "data"
    (data / "img").mkdir(parents=True)
    (data / "img" / "card.png").write_bytes(png_bytes())
    (data / "img" / "huge.png").write_bytes(png_header_only(20000, 20000))
    (data / "img" / "cut.png").write_bytes(png_bytes((50, 50))[:60])
    (data / "img" / "link.png").symlink_to(tmp_path / "secret.txt")
    images = {"passwd": "/etc/passwd", "up": "img/../../secret.txt", "abs": str(tmp_path /
              "secret.txt"), "link": "img/link.png", "num": 123, "web": "http://10.0.0.1/x.png",
              "huge": "img/huge.png", "cut": "img/cut.png", "good": "img/card.png", "none": None}
    rows = [{"item_id": k, "question": "How many pens?", "chain": "Step 1: 3 + 4 = 8.",
             "gold_type": "re", "image": v} for k, v in images.items()]
    (data / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with StubServer() as server:
        code, _, err = run(["diagnose", "run", "--model", "openai:stub", "--base-url",
                              server.base_url, "--data", data / "items.jsonl", "--bootstrap",
                              "0", "--answer", "generated", "--out", tmp_path / "r"], capsys)
        assert code == 0, err
        _secret_never_sent(server, secret)
        _secret_never_sent(server, b"root:x:0:0:r")  # /etc/passwd
    for reason, count in {"image_outside_dataset": 4, "invalid_image_ref": 1,
                          "remote_image": 1, "image_too_large": 1, "unreadable_image": 1}.items():
        assert f"{reason}={count}" in err
    records = load_run_records(tmp_path / "r" / "records.jsonl")
    assert sorted(r["item_id"] for r in records) == ["good", "none"]
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["excluded_at_load"]["image_outside_dataset"] == 4
    # the one good image went out whole, as the bytes of the file
    sent = [part["image_url"]["url"] for body in server.bodies
            for m in body["messages"] if isinstance(m["content"], list)
            for part in m["content"] if part["type"] == "image_url"]
    assert sent and {base64.b64decode(u.split(",", 1)[1]) for u in sent} == \
        {(data / "img" / "card.png").read_bytes()}


def test_hostile_image_paths_of_a_steps_file_never_reach_the_server(tmp_path, capsys):
    secret = b"TOP-SECRET-STEPS-0987654321"
    (tmp_path / "secret.txt").write_bytes(secret)
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"item_id": k, "problem": "1+1?", "final_answer": "2", "steps": ["1+1=2"],
             "labels": [1], "images": v}
            for k, v in {"a": ["/etc/passwd"], "b": ["../secret.txt"], "c": None}.items()]
    (data / "steps.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with StubServer() as server:
        code, _, err = run(["steps", "run", "--model", "openai:stub", "--base-url",
                            server.base_url, "--data", data / "steps.jsonl", "--bootstrap", "0",
                            "--out", tmp_path / "r"], capsys)
        assert code == 0, err
        _secret_never_sent(server, secret)
        _secret_never_sent(server, b"root:x:0:0:r")  # /etc/passwd
    assert "image_outside_dataset=2" in err
    assert [r["item_id"] for r in load_run_records(tmp_path / "r" / "records.jsonl")] == \
        ["c::original"]
