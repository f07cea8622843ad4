"""Live runs from the command line: `confeval SUITE run` and its alias `confeval run SUITE`,
options written whole into run.json, resuming refused with another option (one line naming
it), cache and replay, kill -9 and resume."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from confeval.backends.stub_server import StubServer
from confeval.cli import main
from confeval.runs import load_run_records


@pytest.fixture
def stub(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written-anywhere")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    with StubServer() as server:
        yield server


def _run(argv, capsys):
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr()


def test_sets_run_records_alpha_and_refuses_another(tmp_path, capsys, stub):
    out = tmp_path / "r"
    base = ["sets", "run", "--model", "openai:stub", "--base-url", stub.base_url, "--n", "12",
            "--bootstrap", "0", "--out", str(out)]
    code, _ = _run([*base, "--alpha", "0.05"], capsys)
    assert code == 0
    options = json.loads((out / "run.json").read_text())["config"]["options"]
    assert options["alpha"] == 0.05 and options["idk"] is False
    metrics = json.loads((out / "metrics.json").read_text())
    sets = metrics["sections"][1]["results"]["openai:stub"]
    assert sets["alpha"] == 0.05 and sets["coverage_target"] == 0.95
    code, captured = _run([*base, "--alpha", "0.1"], capsys)
    assert code == 2
    assert captured.err.count("\n") == 1 and "--alpha 0.05; this one has --alpha 0.1" \
        in captured.err
    requests = stub.requests
    code, captured = _run([*base, "--alpha", "0.05"], capsys)  # identical: resumes
    assert code == 0 and "12 resumed" in captured.out and stub.requests == requests
    # the alias is the same command: it resumes the same folder
    code, captured = _run(["run", "sets", *base[2:], "--alpha", "0.05"], capsys)
    assert code == 0 and "12 resumed" in captured.out


@pytest.mark.parametrize("changed, message", [
    (["--consistency", "mirror"], "--consistency 'flag'; this one has --consistency 'mirror'"),
    (["--max-tokens", "64"], "--max-tokens 1024; this one has --max-tokens 64"),
    (["--bootstrap", "10"], "--bootstrap 0; this one has --bootstrap 10"),
])
def test_steps_run_refuses_other_options(tmp_path, capsys, stub, changed, message):
    out = tmp_path / "s"
    base = ["steps", "run", "--model", "openai:stub", "--base-url", stub.base_url, "--n", "2",
            "--out", str(out)]
    code, _ = _run([*base, "--bootstrap", "0"], capsys)
    assert code == 0
    argv = [*base, "--bootstrap", "0", *changed] if changed[0] != "--bootstrap" else \
        [*base, *changed]
    code, captured = _run(argv, capsys)
    assert code == 2 and message in captured.err and captured.err.count("\n") == 1


def test_bad_options_fail_before_any_model_call(tmp_path, capsys, stub):
    for argv, message in (
            (["run", "steps", "--consistency", "bogus"], "--consistency must be one of"),
            (["sets", "run", "--alpha", "0"], "--alpha must be in (0, 1)"),
            (["intervals", "run", "--methods", "naive,nope"], "unknown method(s) ['nope']"),
            (["run", "intervals", "--idk"], "No such option: --idk"),
            (["measures", "run", "--samples", "1"], "--samples must be at least 2")):
        code, captured = _run([*argv, "--model", "openai:stub", "--base-url", stub.base_url,
                               "--out", str(tmp_path / "x")], capsys)
        assert code == 2 and message in captured.err, captured.err
    assert stub.requests == 0


def test_cached_rerun_makes_no_call_and_replay_reproduces(tmp_path, capsys, monkeypatch):
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
    assert main(["sets", "run", "--model", f"replay:{tmp_path / 'a'}", "--n", "20",
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
    """Kill -9 mid-run, resume: one record per item and the metrics of an unbroken run.
    The server answers 20 requests and holds the rest until the kill, so the run is caught
    mid-way however slow the machine (no race between the run and this test's polling)."""
    env = {**os.environ, "OPENAI_API_KEY": "x", "CONFEVAL_CACHE": str(tmp_path / "c.sqlite")}
    with StubServer(hold_after=20) as server:
        base = [sys.executable, "-m", "confeval.cli", "sets", "run", "--model", "openai:stub",
                "--base-url", server.base_url, "--n", "80", "--concurrency", "2",
                "--bootstrap", "0"]
        proc = subprocess.Popen([*base, "--out", str(tmp_path / "killed")], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 300  # a wait, not a measure: generous for a loaded machine
        records = tmp_path / "killed" / "records.jsonl"
        while time.time() < deadline and (not records.exists()
                                          or records.read_text().count("\n") < 15):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        server.release()
        partial = records.read_text().count("\n")
        assert 15 <= partial <= 20
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


def test_measures_run_on_a_server_reads_prompt_logprobs_and_says_what_it_cannot_give(
        tmp_path, capsys, stub):
    code, captured = _run(["measures", "run", "--model", "openai:stub", "--base-url",
                           stub.base_url, "--n", "6", "--samples", "3", "--bootstrap", "0",
                           "--similarity", "jaccard", "--out", str(tmp_path / "m")], capsys)
    assert code == 0, captured.err
    rows = [json.loads(line) for line in open(tmp_path / "m" / "options.jsonl")]
    from confeval.backends.stub_server import stub_tokens, token_logprob

    first = rows[0]
    expected = sum(token_logprob(t) for t in stub_tokens(" " + first["text"]))
    assert first["sl"] == pytest.approx(expected)  # from the server's echoed prompt log-probs
    assert all(0 < r["p_true"] < 1 for r in rows)  # from the top log-probs of "A"/"B"
    result = json.loads((tmp_path / "m" / "metrics.json").read_text())["sections"][0][
        "results"]["openai:stub"]
    assert {"csl", "csl_next"} <= set(result["unavailable"])
    assert "SL" in result["measures"] and "Deg(J)" in result["measures"]
