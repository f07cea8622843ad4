import json
import os
import signal
import subprocess
import sys
import time

import pytest

from confeval.backends import Generation, ScriptedBackend
from confeval.backends.stub_server import StubServer
from confeval.cli import main
from confeval.runner import RunMismatchError, load_run_records, run_suite
from confeval.suites import get_suite
from confeval.tasks import arith_mc


@pytest.fixture
def items():
    return arith_mc(30, seed=0)


def scorer_for(items):
    gold = {it["question"]: it["answer"] for it in items}

    def scorer(messages, letter):
        question = messages[-1]["content"].split("\n\n")[0]
        return -0.1 if letter == gold[question] else -2.0

    return scorer


def test_run_writes_records_and_metrics_with_exact_scoring(tmp_path, items):
    suite = get_suite("sets")
    backend = ScriptedBackend(scorer=scorer_for(items), capabilities={"score"})
    result = run_suite(suite, backend, items, tmp_path / "run", config={"x": 1},
                       options={"bootstrap": 0})
    records = load_run_records(tmp_path / "run" / "records.jsonl")
    assert [r["item_id"] for r in sorted(records, key=lambda r: int(r["item_id"][9:]))] == \
        [it["item_id"] for it in items]
    assert all(r["method"] == "score" and r["correct"] == 1 for r in records)
    assert all(r["calls"][0]["response"] == [-0.1 if L == r["answer"] else -2.0
                                             for L in "ABCDEF"[: r["n_options"]]]
               for r in records)
    res = result.metrics["sections"][0]["results"]["model"]
    assert res["accuracy"] == 1.0 and res["n_used"] == 30


def test_unparseable_outputs_are_kept_and_counted(tmp_path, items):
    def reply(messages, params, i):
        return Generation("I refuse.", (), "stop")

    result = run_suite(get_suite("sets"), ScriptedBackend(reply), items[:5], tmp_path / "r",
                       config={}, options={"bootstrap": 0})
    records = load_run_records(tmp_path / "r" / "records.jsonl")
    assert len(records) == 5 and {r["status"] for r in records} == {"unparseable"}
    assert result.metrics["excluded"] == {"unparseable": 5}


def test_resume_refuses_other_arguments_and_repairs_a_cut_line(tmp_path, items):
    backend = ScriptedBackend(scorer=scorer_for(items), capabilities={"score"})
    suite = get_suite("sets")
    run_suite(suite, backend, items[:10], tmp_path / "r", config={"n": 10},
              options={"bootstrap": 0})
    with pytest.raises(RunMismatchError, match="different arguments"):
        run_suite(suite, backend, items, tmp_path / "r", config={"n": 30})
    path = tmp_path / "r" / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:7]) + lines[7][:25])  # as if killed mid-write
    result = run_suite(suite, backend, items[:10], tmp_path / "r", config={"n": 10},
                       options={"bootstrap": 0})
    assert result.n_resumed == 7 and result.n_new == 3
    records = load_run_records(path)
    assert sorted(r["item_id"] for r in records) == sorted(it["item_id"] for it in items[:10])


def test_cached_rerun_makes_no_call_and_replay_reproduces(tmp_path, items, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written-anywhere")
    with StubServer() as server:
        args = ["run", "sets", "--model", "openai:stub", "--base-url", server.base_url,
                "--n", "20", "--bootstrap", "0", "--cache", str(tmp_path / "c.sqlite")]
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        first = server.requests
        assert main([*args, "--out", str(tmp_path / "b")]) == 0
        assert first == 20 and server.requests == 20
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    # Offline re-scoring from the recorded answers, no server running:
    assert main(["run", "sets", "--model", f"replay:{tmp_path / 'a'}", "--n", "20",
                 "--bootstrap", "0", "--no-cache", "--out", str(tmp_path / "c")]) == 0
    c = json.loads((tmp_path / "c" / "metrics.json").read_text())
    assert a["sections"][0]["results"]["openai:stub"]["ece"] == \
        c["sections"][0]["results"][f"replay:{tmp_path / 'a'}"]["ece"]
    for folder in ("a", "b", "c"):
        for f in (tmp_path / folder).iterdir():
            assert "sk-never-written-anywhere" not in f.read_text(errors="ignore")
    assert "sk-never-written-anywhere" not in (tmp_path / "c.sqlite").read_bytes().decode(
        errors="ignore")
    out = capsys.readouterr().out
    assert "0 model call(s)" in out


def test_sigkill_at_a_random_point_then_resume(tmp_path):
    """Kill -9 mid-run, resume: one record per item and the metrics of an unbroken run."""
    env = {**os.environ, "OPENAI_API_KEY": "x", "CONFEVAL_CACHE": str(tmp_path / "c.sqlite")}
    with StubServer(delay=0.03) as server:
        base = [sys.executable, "-m", "confeval.cli", "run", "sets", "--model", "openai:stub",
                "--base-url", server.base_url, "--n", "80", "--concurrency", "2",
                "--bootstrap", "0"]
        proc = subprocess.Popen([*base, "--out", str(tmp_path / "killed")], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        records = tmp_path / "killed" / "records.jsonl"
        while time.time() < deadline and (not records.exists()
                                          or records.read_text().count("\n") < 15):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        partial = records.read_text().count("\n")
        assert 15 <= partial < 80
        subprocess.run([*base, "--out", str(tmp_path / "killed")], env=env, check=True,
                       capture_output=True)
        requests_with_kill = server.requests
        subprocess.run([*base, "--out", str(tmp_path / "clean"), "--no-cache"], env=env,
                       check=True, capture_output=True)
    recs = load_run_records(records)
    assert len(recs) == 80 and len({r["item_id"] for r in recs}) == 80
    # finished calls were not repeated: at most the calls in flight at the kill
    assert requests_with_kill <= 80 + 2
    m1 = json.loads((tmp_path / "killed" / "metrics.json").read_text())["sections"]
    m2 = json.loads((tmp_path / "clean" / "metrics.json").read_text())["sections"]
    assert m1 == m2
