"""`confeval sets ...`: exit codes, one-line errors, JSON shape, table (the metrics are tested
in tests/suites/sets/)."""

import json

from confeval.cli import main
from confeval.simulate import simulate


def test_score_table_json_and_errors(tmp_path, capsys):
    path = tmp_path / "mcq.jsonl"
    simulate("mcq", 300, seed=4).to_json(path, orient="records", lines=True)
    assert main(["sets", "score", str(path)]) == 0
    out = capsys.readouterr().out
    # the file named by its stem in the title and its verdict, one row per score
    assert out.startswith("Conformal prediction sets: mcq\nmcq: lac, aps, raps and margin cover")
    assert "lac" in out.split("─")[-1]
    assert main(["sets", "score", str(path), "--json", "--seeds", "1-2", "--out",
                 str(tmp_path / "run")]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert {"n_read", "n_used", "excluded", "options", "scores", "alpha", "coverage_target",
            "seeds", "n_splits"} <= set(res)
    assert (tmp_path / "run" / "report.html").is_file()
    for argv, message in ((["--scores", "lac,nope"], "unknown score(s) ['nope']"),
                          (["--seeds", "10-1"], "--seeds '10-1': the range 10-1 runs backwards"),
                          (["--seeds", "a"], "--seeds 'a': use a range like 1-10"),
                          (["--seeds", "1-100000"], "more than 1000 seeds"),
                          (["--seeds", "1,1"], "a seed is repeated"),
                          (["--protocol", "x"], "unknown protocol 'x'"),
                          (["--logit-cols", "nothing_*"], "nothing_*")):
        assert main(["sets", "score", str(path), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
