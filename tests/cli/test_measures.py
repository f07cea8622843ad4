"""`confeval measures score`: the JSON contract, the report, one-line errors."""

import json

import numpy as np
import pandas as pd

from confeval.cli import main


def test_score_contract_report_and_errors(tmp_path, capsys):
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(60), 4)
    correct = (np.arange(240) % 4 == 0).astype(int)
    frame = pd.DataFrame({"question_id": q, "correct": correct,
                          "sl": correct + rng.normal(0, 1, 240),
                          "ppl": np.exp(-correct + rng.normal(0, 1, 240))})
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    capsys.readouterr()
    code = main(["measures", "score", str(path), "--measure-cols", "sl", "--uncertainty-cols",
                 "ppl", "--bootstrap", "100", "--json", "--out", str(tmp_path / "run")])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert {"n_rows", "n_questions", "base_rate", "excluded", "measures", "ranking"} <= set(res)
    assert set(res["measures"]["sl"]) == {"auroc", "auarc", "rce", "ece", "ece_levels", "ci"}
    assert set(res["measures"]["sl"]["ci"]) == {"auroc", "auarc"}
    assert [r["rank"] for r in res["ranking"]] == [1, 2]
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Confidence measures (MCQA-Eval)" in html and "p vs next" in html
    for figure in ("ranking of the measures", "ROC curves", "risk-coverage curves",
                   "rank-calibration diagrams"):
        assert figure in html and html.count("data:image/png;base64,") >= 4
    for argv, message in ((["--measure-cols", "nope"], "nope"),
                          (["--correct-col", "nope"], "nope")):
        assert main(["measures", "score", str(path), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
