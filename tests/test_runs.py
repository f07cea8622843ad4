import json

import numpy as np
import pytest

from confeval.runs import RunFolder, dumps, to_jsonable


def test_json_is_strict_and_converts_numpy():
    text = dumps({"a": np.float32(0.5), "b": np.nan, "c": np.arange(3), "d": [np.inf, 1]})
    assert json.loads(text) == {"a": 0.5, "b": None, "c": [0, 1, 2], "d": [None, 1]}
    assert to_jsonable({1: np.bool_(True)}) == {"1": True}


def test_run_folder_round_trip(tmp_path):
    run = RunFolder(tmp_path / "run")
    run.write_run({"suite": "demo", "seed": 0})
    run.write_records([{"id": 1, "p": 0.5}])
    run.append_records([{"id": 2, "p": np.nan}])
    run.write_metrics({"ece": np.float64(0.1)})
    info = run.read_run()
    assert info["config"] == {"suite": "demo", "seed": 0}
    assert info["versions"]["numpy"] == np.__version__
    lines = run.file("records.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == [{"id": 1, "p": 0.5}, {"id": 2, "p": None}]
    assert run.read_metrics() == {"ece": 0.1}
    assert not list(run.path.glob("*.tmp"))


def test_missing_run_folder_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        RunFolder(tmp_path / "nothing", create=False)
    with pytest.raises(FileNotFoundError, match="no metrics.json"):
        RunFolder(tmp_path).read_metrics()


def test_a_start_that_failed_before_its_first_record_does_not_lock_the_folder(tmp_path):
    from confeval.runs import RunFolder, RunMismatchError, check_config

    run = RunFolder(tmp_path / "r")
    check_config(run, {"command": "run", "options": {"similarity": "embedding"}})
    # no record was written (the encoder was missing): the corrected command may start
    check_config(run, {"command": "run", "options": {"similarity": "jaccard"}})
    assert run.read_run()["config"]["options"]["similarity"] == "jaccard"
    run.append_records([{"item_id": "a"}])
    with pytest.raises(RunMismatchError, match="--similarity 'jaccard'"):
        check_config(run, {"command": "run", "options": {"similarity": "embedding"}})
