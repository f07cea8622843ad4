"""The JSON Schemas the documentation publishes (docs/schemas/) hold for real run folders:
run.json and metrics.json of the demo and of every scoring command's --out, and policy.json of
a guarantee (a live run of every suite: tests/cli/test_one_path.py); the schema's section
kinds are exactly the report's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from confeval.cli import main
from confeval.simulate import simulate
from tests.cli.schema_check import assert_holds_schemas, validator

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed "
                                 "(pip install '.[dev]')")

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory) -> list[Path]:
    from confeval.verbs.demo import run_demo

    tmp = tmp_path_factory.mktemp("runs")
    simulate("confidence", 300, "overconfident", seed=1).to_csv(tmp / "judge.csv", index=False)
    simulate("confidence", 300, "calibrated", seed=1).to_csv(tmp / "other.csv", index=False)
    simulate("mcq", 400, seed=2).to_csv(tmp / "mcq.csv", index=False)
    simulate("scores", 400, "compressing", seed=3).to_csv(tmp / "scores.csv", index=False)
    simulate("steps", 40, seed=4).to_csv(tmp / "steps.csv", index=False)
    commands = {
        "score": ["score", "judge.csv", "-c", "confidence", "-y", "correct", "--bootstrap",
                  "50"],
        "sets": ["sets", "score", "mcq.csv", "--seeds", "1-2"],
        "intervals": ["intervals", "score", "scores.csv", "--logprob-cols", "score_lp*",
                      "--pred-col", "parsed_score", "--methods", "naive,lac", "--seeds", "1"],
        "agreement": ["agreement", "scores.csv", "-p", "parsed_score", "-g", "gt_score",
                      "--logprob-cols", "score_lp*", "--bootstrap", "0"],
        "steps": ["steps", "score", "steps.csv", "--bootstrap", "20"],
        "compare": ["compare", "judge.csv", "other.csv", "-c", "confidence", "-y", "correct",
                    "--id-col", "item_id", "--bootstrap", "50"],
        "guarantee": ["guarantee", "judge.csv", "-c", "confidence", "-y", "correct",
                      "--target", "0.2"],
        "sets-calibrate": ["sets", "calibrate", "mcq.csv"],
    }
    folders = []
    for name, argv in commands.items():
        out = tmp / f"run-{name}"
        argv = [a if not a.endswith(".csv") else str(tmp / a) for a in argv]
        assert main([*argv, "--out", str(out)]) == 0, name
        folders.append(out)
    out = tmp / "run-sets-apply"
    assert main(["sets", "apply", str(tmp / "run-sets-calibrate" / "conformal.json"),
                 str(tmp / "mcq.csv"), "--report", str(out)]) == 0
    folders.append(out)
    run_demo(tmp / "demo", n=200, n_resamples=20, live=False)
    folders.append(tmp / "demo")
    return folders


def test_run_and_metrics_of_real_run_folders_hold_their_schemas(run_folders):
    kinds = set()
    for folder in run_folders:
        kinds |= assert_holds_schemas(folder)
    assert {"confidence", "sets", "intervals", "agreement", "steps", "compare",
            "guarantee", "conformal", "validity"} <= kinds


def test_a_policy_holds_its_schema_and_a_broken_one_does_not(run_folders):
    policy = validator("policy")
    (folder,) = [f for f in run_folders if f.name == "run-guarantee"]
    doc = json.loads((folder / "policy.json").read_text())
    assert not list(policy.iter_errors(doc))
    assert list(policy.iter_errors({**doc, "answer_if": "confidence > threshold"}))
    assert list(policy.iter_errors({**doc, "calibration_data": {"file": "x", "sha256": "0"}}))


def test_a_conformal_predictor_holds_its_schema_and_a_broken_one_does_not(run_folders):
    schema = validator("conformal")
    (folder,) = [f for f in run_folders if f.name == "run-sets-calibrate"]
    doc = json.loads((folder / "conformal.json").read_text())
    assert not list(schema.iter_errors(doc))
    assert list(schema.iter_errors({**doc, "suite": "steps"}))
    assert list(schema.iter_errors({**doc, "validity": {"confidence": {"format": "x"}}}))


def test_the_schemas_section_kinds_are_the_reports():
    import confeval.report.sections  # noqa: F401 — registers every section kind
    from confeval.report import SECTION_RENDERERS

    schema = json.loads((SCHEMAS / "metrics.schema.json").read_text())
    assert set(schema["$defs"]["section"]["properties"]["kind"]["enum"]) == \
        set(SECTION_RENDERERS)
