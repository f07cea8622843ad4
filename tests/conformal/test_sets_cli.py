import json

import numpy as np
import pytest

from confeval.cli import main
from confeval.simulate import simulate


@pytest.fixture
def mcq_file(tmp_path):
    df = simulate("mcq", 600, "overconfident", seed=4, n_options=4)
    df.loc[0, "answer"] = "Z"            # unknown label
    df.loc[1, "logit_B"] = np.nan       # a missing option is fine ...
    df.loc[1, "answer"] = "A"
    df.loc[2, "logit_C"] = np.nan       # ... unless it is the gold one
    df.loc[2, "answer"] = "C"
    path = tmp_path / "mcq.jsonl"
    df.to_json(path, orient="records", lines=True)
    return path


def test_sets_score_json_exclusions_and_seeds(capsys, mcq_file):
    code = main(["sets", "score", str(mcq_file), "--seeds", "1-5", "--group-col", "category",
                 "--scores", "lac,aps,raps,margin,aps_randomized", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(mcq_file)]
    assert res["excluded"] == {"unknown_label": 1, "gold_option_missing": 1}
    assert res["n_used"] == 598 and res["n_splits"] == 5 and res["seeds"] == [1, 2, 3, 4, 5]
    for name in ("lac", "aps", "raps", "margin", "aps_randomized"):
        cov = res["scores"][name]["coverage"]
        assert set(cov) == {"mean", "std"} and cov["mean"] > 0.85
    assert set(res["groups"]) == {"easy", "medium", "hard"}
    assert set(res["accuracy"]) == {"mean", "std"}


def test_sets_score_single_split_table_and_errors(capsys, mcq_file):
    assert main(["sets", "score", str(mcq_file)]) == 0
    out = capsys.readouterr().out
    assert "mcq.jsonl" in out and "lac" in out
    assert main(["sets", "score", str(mcq_file), "--scores", "lac,nope"]) == 2
    assert "unknown score(s) ['nope']" in capsys.readouterr().err
