"""Golden outputs: the README's scoring commands give the same JSON as before the move to one
package per suite (issue 10). The documents in ``golden/`` were written by this file at the
commit before the restructuring (``CONFEVAL_REGEN_GOLDEN=1 pytest tests/cli/test_golden.py``)
and are never edited by hand. A key the current output has and the golden lacks is allowed (new
keys may be added); every golden key must be there with the same value. Floats are compared to
1e-12 relative: the same machine gives identical bytes, another BLAS may differ in the last ulp.

Paths are written relative to their root (``DATA/`` for ../shared/data, ``TMP/`` for files
the test makes), so the documents do not depend on where the checkout is.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.simulate import simulate

GOLDEN = Path(__file__).parent / "golden"
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
REGEN = os.environ.get("CONFEVAL_REGEN_GOLDEN") == "1"
JUDGE = "vlm-judge-uncertainty/results"
BENCH = "vlm-uncertainty-bench/per_sample"

_MMBENCH = sorted(p.name for p in (DATA / BENCH / "mmbench").glob("*.csv.gz")) \
    if DATA.is_dir() else []

# name -> (argv with {DATA}/{TMP} placeholders, needs shared data)
COMMANDS: dict[str, tuple[list[str], bool]] = {
    "score": (["score", "{TMP}/conf.jsonl", "{TMP}/verbal.csv", "-c", "confidence", "-y",
               "correct", "--bootstrap", "200", "--json"], False),
    "score_any": (["score", "{TMP}/conf.jsonl", "-c", "confidence", "-y", "correct",
                   "--any-confidence", "--bootstrap", "0", "--json"], False),
    "agreement": (["agreement", f"{{DATA}}/{JUDGE}/v2/features_s2.csv", "--pred-col",
                   "parsed_score", "--gt-col", "gt_score", "--logprob-cols", "s2_lp*",
                   "--bootstrap", "100", "--json"], True),
    "sets_mmbench": (["sets", "score", *[f"{{DATA}}/{BENCH}/mmbench/{n}" for n in _MMBENCH],
                      "--label-col", "answer", "--logit-cols", "logit_*", "--alpha", "0.1",
                      "--split-seed", "42", "--json"], True),
    "sets_vlm_bench": (["sets", "score", *[f"{{DATA}}/{BENCH}/oodcv/{n}" for n in _MMBENCH[:4]],
                        "--protocol", "vlm-bench", "--json"], True),
    "sets_seeds_groups": (["sets", "score", *[f"{{DATA}}/{BENCH}/mmbench/{n}"
                                              for n in _MMBENCH[:2]],
                           "--seeds", "1-3", "--group-col", "category", "--scores",
                           "lac,aps,aps_randomized,raps,raps_randomized,margin", "--json"], True),
    "sets_sim": (["sets", "score", "{TMP}/mcq.jsonl", "--seeds", "1-4", "--group-col",
                  "category", "--json"], False),
    "intervals": (["intervals", "score", f"{{DATA}}/{JUDGE}/v2/features_s2.csv",
                   "--logprob-cols", "s2_lp*", "--label-col", "gt_score", "--pred-col",
                   "parsed_score", "--seeds", "1-2", "--methods",
                   "naive,cqr,asym_cqr,lvd,ordinal_aps,lac,aps,raps_randomized", "--json"], True),
    "intervals_separately": (["intervals", "score", f"{{DATA}}/{JUDGE}/v2/features_s2.csv",
                              "--pred-col", "parsed_score", "--join",
                              f"{{DATA}}/{JUDGE}/v2/error_analysis.csv:sample_id",
                              "--group-col", "orig_dataset", "--separately", "--methods",
                              "naive,lac", "--seeds", "1-2", "--json"], True),
    "intervals_mondrian": (["intervals", "score", f"{{DATA}}/{JUDGE}/v2/features_s2.csv",
                            "--pred-col", "parsed_score", "--join",
                            f"{{DATA}}/{JUDGE}/v2/error_analysis.csv:sample_id",
                            "--group-col", "orig_dataset", "--group-map", "paper-difficulty",
                            "--mondrian", "--methods", "naive,lvd,aps", "--seeds", "1-2",
                            "--seed-sweep", "1,2", "--json"], True),
    "intervals_fusion": (["intervals", "score", f"{{DATA}}/{JUDGE}/v2/features_s2.csv",
                          "--logprob-cols", "s2_lp*,gem_s2_lp*", "--join",
                          f"{{DATA}}/{JUDGE}/v2_gemini/features_s2.csv:sample_id:gem_",
                          "--methods", "naive,cqr", "--seeds", "1-2", "--json"], True),
    "steps_score": (["steps", "score", "{TMP}/steps.jsonl", "--group-col", "difficulty",
                     "--bootstrap", "200", "--json"], False),
    "steps_parse": (["steps", "parse", "{TMP}/replies.jsonl", "--out", "{TMP}/parsed.jsonl",
                     "--consistency", "mirror", "--json"], False),
    "steps_consistency": (["steps", "consistency",
                           "--pair", "a={TMP}/s1.jsonl,{TMP}/s2.jsonl",
                           "--pair", "b={TMP}/s3.jsonl,{TMP}/s4.jsonl",
                           "--pair", "c={TMP}/s5.jsonl,{TMP}/s6.jsonl", "--json"], False),
}


def _inputs(tmp: Path) -> None:
    """The simulated input files (seeded, so the same on every machine)."""
    simulate("confidence", 800, "overconfident", seed=3).to_json(
        tmp / "conf.jsonl", orient="records", lines=True)
    simulate("confidence", 500, "calibrated", seed=4, step=0.1).to_csv(tmp / "verbal.csv",
                                                                        index=False)
    simulate("mcq", 400, "overconfident", seed=5, n_options=4).to_json(
        tmp / "mcq.jsonl", orient="records", lines=True)
    simulate("steps", 120, "typical", seed=6).to_json(tmp / "steps.jsonl", orient="records",
                                                      lines=True)
    for k in range(1, 7):
        simulate("steps", 40, "typical" if k % 2 else "overconfident", seed=10 + k).to_json(
            tmp / f"s{k}.jsonl", orient="records", lines=True)
    replies = [
        {"item_id": "p1", "raw_output": '<evaluation>[["Step 1", 1, 0.9, ""], '
         '["Step 2", 0, 0.8, "calculation_error"]]</evaluation>', "labels": [1, 0],
         "error_types": ["", "calculation_error"], "variant": "original", "difficulty": "easy"},
        {"item_id": "p1", "raw_output": '[["Step 1", 1, 0.85, ""], ["Step 2", 1, 0.7, ""]]',
         "labels": [1, 0], "error_types": ["", "calculation_error"], "variant": "lexical",
         "difficulty": "easy"},
        {"item_id": "p2", "raw_output": "I cannot tell.", "labels": [1, 1, 0],
         "error_types": ["", "", "logical_error"], "difficulty": "hard"},
    ]
    pd.DataFrame(replies).to_json(tmp / "replies.jsonl", orient="records", lines=True)


def _normalise(doc, tmp: Path):
    """Replace the roots of paths in keys and values by DATA/ and TMP/."""
    roots = ((str(tmp), "TMP"), (str(DATA), "DATA"))

    def text(s: str) -> str:
        for root, name in roots:
            s = s.replace(root, name)
        return s

    if isinstance(doc, dict):
        return {text(k): _normalise(v, tmp) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_normalise(v, tmp) for v in doc]
    return text(doc) if isinstance(doc, str) else doc


def _run(argv: list[str], tmp: Path, capsys) -> dict:
    args = [a.replace("{DATA}", str(DATA)).replace("{TMP}", str(tmp)) for a in argv]
    capsys.readouterr()
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return _normalise(json.loads(captured.out), tmp)


def _same(golden, now, where: str = "") -> list[str]:
    """Differences: golden keys missing or changed in ``now`` (extra keys allowed)."""
    if isinstance(golden, dict):
        if not isinstance(now, dict):
            return [f"{where}: {type(now).__name__} instead of an object"]
        out = []
        for k, v in golden.items():
            if k not in now:
                out.append(f"{where}/{k}: missing")
            else:
                out.extend(_same(v, now[k], f"{where}/{k}"))
        return out
    if isinstance(golden, list):
        if not isinstance(now, list) or len(now) != len(golden):
            return [f"{where}: list differs"]
        return [d for i, (g, n) in enumerate(zip(golden, now)) for d in _same(g, n,
                                                                               f"{where}[{i}]")]
    if isinstance(golden, float) and isinstance(now, (int, float)) and not isinstance(now, bool):
        if math.isclose(golden, now, rel_tol=1e-12, abs_tol=1e-15):
            return []
    return [] if golden == now and type(golden) is type(now) else [
        f"{where}: {golden!r} -> {now!r}"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("golden")
    _inputs(tmp)
    return tmp


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_output_unchanged(name, inputs, capsys):
    argv, needs_data = COMMANDS[name]
    if needs_data and not DATA.is_dir():
        pytest.skip(f"needs the shared data at {DATA}")
    doc = _run(argv, inputs, capsys)
    if name == "steps_parse":  # the records it writes are part of its output
        records = pd.read_json(inputs / "parsed.jsonl", lines=True)
        doc["written"] = json.loads(records.to_json(orient="records"))
    path = GOLDEN / f"{name}.json"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    golden = json.loads(path.read_text(encoding="utf-8"))
    diffs = _same(golden, doc)
    assert not diffs, f"{len(diffs)} difference(s), first: {diffs[:5]}"


def test_demo_metrics_unchanged(tmp_path, capsys):
    """The demo (simulated part, small n) writes the same metrics.json."""
    out = tmp_path / "demo"
    assert main(["demo", "--no-live", "--n", "300", "--bootstrap", "50", "--out", str(out)]) == 0
    doc = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    doc = _normalise(doc, tmp_path)
    path = GOLDEN / "demo.json"
    if REGEN:
        path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    diffs = _same(json.loads(path.read_text(encoding="utf-8")), doc)
    assert not diffs, f"{len(diffs)} difference(s), first: {diffs[:5]}"


def test_golden_documents_are_not_data():
    """The goldens hold results, never rows of the shared data (they must not be copies)."""
    for path in GOLDEN.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert "s2_lp1\": -" not in text and "logit_A\": " not in text
        assert np.isfinite(len(text))
