"""The one comparison path (:mod:`confeval.verbs.compare`): items aligned by id across models,
missing items counted, the suite's own reading of each file, options agreed across models."""

import numpy as np
import pytest

from confeval.evaluate import evaluate_confidence
from confeval.suites.score import ConfidenceOptions
from confeval.verbs.compare import CompareOptions, compare_records

from ..metrics.test_compare import _models

SCORE = ConfidenceOptions(confidence_col="p", correct_col="y")


def test_records_are_aligned_by_id_and_missing_items_counted(tmp_path):
    """Files in different row orders, one with items missing and one with an unusable row:
    compared on the shared ids only, each value equal to evaluate_confidence on those items,
    and not_shared counting what each model lacks."""
    import pandas as pd

    from confeval.records import RecordSet

    models = _models(n=120)
    sets, frames = {}, {}
    rng = np.random.default_rng(4)
    for name in ("model0", "model1", "model3"):
        conf, correct = models[name]
        frame = pd.DataFrame({"id": [f"q{i}" for i in range(120)], "p": conf, "y": correct})
        frame = frame.sample(frac=1.0, random_state=int(rng.integers(100)))   # own order
        frames[name] = frame
    frames["model1"] = frames["model1"][~frames["model1"]["id"].isin(["q3", "q7"])]
    frames["model3"] = frames["model3"].astype({"p": object})
    frames["model3"].loc[frames["model3"]["id"] == "q5", "p"] = "oops"
    for name, frame in frames.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        sets[name] = RecordSet.read(path)
    out = compare_records(sets, CompareOptions(id_col="id", bootstrap=100), SCORE)
    assert out["n_items_shared"] == 117
    assert out["not_shared"] == {"model0": 0, "model1": 2, "model3": 1}
    assert out["excluded"]["model3"] == {"non_numeric_confidence": 1}
    keep = np.array([i not in (3, 5, 7) for i in range(120)])
    for name in frames:
        conf, correct = models[name]
        expected = evaluate_confidence(conf[keep], correct[keep], n_resamples=0)
        assert out["metrics"]["auroc"]["models"][name]["value"] == pytest.approx(
            expected["auroc"], abs=1e-12)
    with pytest.raises(ValueError, match="no id column 'item'") as caught:
        compare_records(sets, CompareOptions(id_col="item"), SCORE)
    # the file's own columns, not the row numbers kept beside them
    assert str(caught.value).endswith(f"(columns: {', '.join(frames['model0'].columns)})")
    twice = pd.concat([frames["model0"], frames["model0"].head(1)])
    twice.to_csv(tmp_path / "twice.csv", index=False)
    with pytest.raises(ValueError, match="twice.csv: id 'q.*' appears 2 times"):
        compare_records({"a": RecordSet.read(tmp_path / "twice.csv"), "b": sets["model0"]},
                        CompareOptions(id_col="id"), SCORE)


def _random_models(folder, models: int, items: int, seed: int) -> dict:
    """``models`` record files of ``items`` random confidences and 0/1 outcomes, seeded,
    read back as record sets named m0, m1, ..."""
    import pandas as pd

    from confeval.records import RecordSet

    rng = np.random.default_rng(seed)
    sets = {}
    for k in range(models):
        path = folder / f"m{k}.csv"
        pd.DataFrame({"id": range(items), "p": rng.random(items),
                      "y": rng.integers(0, 2, items)}).to_csv(path, index=False)
        sets[f"m{k}"] = RecordSet.read(path)
    return sets


def test_the_options_reported_are_compares_own_bootstrap_and_seed(tmp_path):
    sets = _random_models(tmp_path, 2, 40, seed=0)
    out = compare_records(sets, CompareOptions(id_col="id", bootstrap=7, seed=3), SCORE)
    assert out["options"]["bootstrap"] == 7 and out["options"]["seed"] == 3
    assert out["options"]["confidence_col"] == "p"


def test_integral_float_ids_are_the_integer_ids(tmp_path):
    """One model's CSV has an id column with a gap, which pandas reads as floats (1.0, 2.0,
    ...); the other's ids are integers: the same items, aligned (``1`` and ``1.0`` never
    matched before). Text ids stay as written: ``007`` is no ``7``."""
    import pandas as pd

    from confeval.records import RecordSet

    models = _models(n=60)
    (c0, y0), (c1, y1) = models["model0"], models["model1"]
    ids = np.arange(1, 61)
    gap = pd.DataFrame({"id": ids.astype(object), "p": c0, "y": y0})
    gap.loc[10, "id"] = None                          # the gap: the column reads as floats
    gap.to_csv(tmp_path / "gap.csv", index=False)
    pd.DataFrame({"id": ids, "p": c1, "y": y1}).to_json(tmp_path / "ints.jsonl",
                                                        orient="records", lines=True)
    sets = {"gap": RecordSet.read(tmp_path / "gap.csv"),
            "ints": RecordSet.read(tmp_path / "ints.jsonl")}
    assert sets["gap"].frame["id"].dtype == float
    out = compare_records(sets, CompareOptions(id_col="id", bootstrap=20), SCORE)
    assert out["n_items_shared"] == 59 and out["not_shared"] == {"gap": 1, "ints": 0}
    assert out["excluded"]["gap"] == {"missing_id": 1}
    keep = np.arange(60) != 10
    expected = evaluate_confidence(c1[keep], y1[keep], n_resamples=0)["auroc"]
    assert out["metrics"]["auroc"]["models"]["ints"]["value"] == pytest.approx(expected,
                                                                              abs=1e-12)
    text = pd.DataFrame({"id": [f"{i:03d}" for i in ids], "p": c1, "y": y1})
    text.to_json(tmp_path / "text.jsonl", orient="records", lines=True)
    with pytest.raises(ValueError, match=r"no item id is shared by every model: .*gap.csv "
                                         r"\(59 ids, e.g. '1', '2', '3'\).*text.jsonl \(60 ids, "
                                         r"e.g. '001', '002', '003'\)"):
        compare_records({"gap": RecordSet.read(tmp_path / "gap.csv"),
                         "text": RecordSet.read(tmp_path / "text.jsonl")},
                        CompareOptions(id_col="id"), SCORE)


def test_metrics_keeps_the_named_metrics_in_its_order_with_the_same_numbers(tmp_path):
    sets = _random_models(tmp_path, 3, 80, seed=2)
    every = compare_records(sets, CompareOptions(id_col="id", bootstrap=50), SCORE)
    some = compare_records(sets, CompareOptions(id_col="id", bootstrap=50,
                                                metrics=("ece", "auroc")), SCORE)
    assert list(some["metrics"]) == ["ece", "auroc"]
    # the same values as in the full comparison
    for metric in ("ece", "auroc"):
        assert {n: r["value"] for n, r in some["metrics"][metric]["models"].items()} == {
            n: r["value"] for n, r in every["metrics"][metric]["models"].items()}
    with pytest.raises(ValueError, match="--metrics: no metric 'acc' .* it has accuracy"):
        compare_records(sets, CompareOptions(id_col="id", metrics=("acc",)), SCORE)
    with pytest.raises(ValueError, match=r"several suites \(--suite auto\) are compared on "
                                         "every metric"):
        CompareOptions(suite="auto", metrics=("ece",))
    assert CompareOptions(metrics="ece, auroc,ece").metrics == ("ece", "auroc")
    # an empty list is not "every metric" (leaving the option out is)
    for text in ("", " , "):
        with pytest.raises(ValueError, match="names no metric; leave --metrics out"):
            CompareOptions(metrics=text)
    assert CompareOptions(metrics="all").metrics == () == CompareOptions().metrics
