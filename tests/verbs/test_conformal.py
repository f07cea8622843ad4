"""``NAME calibrate`` / ``NAME apply`` as a library (:mod:`confeval.verbs.conformal`): the sets
suite's stored predictor equals MAPIE's LAC sets and a hand-computed quantile; the intervals
suite's equals the ordinal-APS method fitted in memory; coverage holds over seeds; the promise is
checked on the nonconformity scores when the truth is there and on the label-free confidence
when not; an edited predictor is refused naming the field; the run folders repeat."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from confeval.suites import SUITES
from confeval.verbs._sealed import digest
from confeval.verbs.conformal import (
    apply_conformal,
    apply_result,
    calibrate_input,
    conformal_config,
    conformal_section,
    read_conformal,
    rerun_conformal,
)
from confeval.verbs.promise import ValidityOptions

SETS = SUITES["sets"]
INTERVALS = SUITES["intervals"]
PROBS = {"input": "probs", "logit_cols": "p_*", "precision": "float64"}


def _mc(path, n: int, seed: int, *, concentration: float = 0.7, labels: bool = True):
    """Rows of 5 option probabilities (Dirichlet) and a gold option drawn from them."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(5) * concentration, size=n)
    gold = np.array([rng.choice(5, p=row) for row in probs])
    frame = pd.DataFrame({f"p_{c}": probs[:, k] for k, c in enumerate("ABCDE")})
    if labels:
        frame["answer"] = np.array(list("ABCDE"))[gold]
    frame.to_csv(path, index=False, float_format="%.17g")
    return probs, gold


def _write(tmp_path, document, name="conformal.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _lac_qhat(probs, gold, alpha):
    scores = np.sort(1.0 - probs[np.arange(gold.size), gold])
    return scores[math.ceil((gold.size + 1) * (1 - alpha)) - 1]


def test_sets_equal_a_hand_computed_quantile_and_mapie(tmp_path):
    mapie = pytest.importorskip("mapie.classification", reason="mapie is a test-only extra")
    from sklearn.base import BaseEstimator, ClassifierMixin

    cal_path, new_path = tmp_path / "cal.csv", tmp_path / "new.csv"
    probs, gold = _mc(cal_path, 800, seed=1)
    new_probs, new_gold = _mc(new_path, 400, seed=2)
    done = calibrate_input(SETS, cal_path, {**PROBS, "allow_empty": True, "alpha": 0.1})
    state = done.document["state"]
    assert state["qhat"] == pytest.approx(_lac_qhat(probs, gold, 0.1), abs=1e-15)
    assert done.result["n_calibration"] == 800 and state["letters"] == list("ABCDE")
    predictor = _write(tmp_path, done.document)
    predicted = apply_conformal(predictor, [new_path])
    ours = np.array([[c in s for c in "ABCDE"] for s in predicted.frame["set"]])
    np.testing.assert_array_equal(ours, 1.0 - new_probs <= state["qhat"])
    everything = np.vstack([probs, new_probs])

    class Fixed(ClassifierMixin, BaseEstimator):
        """The stored probabilities of the rows whose index is X[:, 0]."""

        def fit(self, X, y):
            self.classes_ = np.arange(5)
            return self

        def predict_proba(self, X):
            return everything[X[:, 0].astype(int)]

        def predict(self, X):
            return self.predict_proba(X).argmax(1)

    X = np.arange(1200)[:, None]
    clf = mapie.SplitConformalClassifier(Fixed().fit(X, np.r_[gold, new_gold]),
                                         confidence_level=0.9, conformity_score="lac",
                                         prefit=True)
    clf.conformalize(X[:800], gold)
    _, theirs = clf.predict_set(X[800:])
    np.testing.assert_array_equal(ours, theirs[:, :, 0])
    # the truth is there: the coverage and the scores' test
    covered = ours[np.arange(400), new_gold]
    v = predicted.validity
    assert v["quantity"] == "nonconformity score of the true label"
    assert v["risk"]["n_labelled"] == 400
    assert v["risk"]["selective_error"] == pytest.approx(1 - covered.mean())


def test_coverage_holds_over_seeds(tmp_path):
    """The promise itself: over 200 seeded calibration/new draws, the mean coverage of the
    stored LAC sets is at least 1 - alpha (split conformal: in expectation over the draw),
    within 3 SE."""
    rng = np.random.default_rng(0)
    cov = []
    for _ in range(200):
        n_cal, n_new = 150, 100
        probs = rng.dirichlet(np.ones(4), size=n_cal + n_new)
        gold = np.array([rng.choice(4, p=row) for row in probs])
        q = _lac_qhat(probs[:n_cal], gold[:n_cal], 0.2)
        cov.append(float((1 - probs[n_cal:][np.arange(n_new), gold[n_cal:]] <= q).mean()))
    assert np.mean(cov) >= 0.8 - 3 * np.std(cov) / np.sqrt(200)
    # and the command's sets are those sets, on one such draw
    cal_path, new_path = tmp_path / "cal.csv", tmp_path / "new.csv"
    probs, gold = _mc(cal_path, 150, seed=3, concentration=1.0)
    new_probs, new_gold = _mc(new_path, 100, seed=4, concentration=1.0)
    done = calibrate_input(SETS, cal_path, {**PROBS, "alpha": 0.2, "allow_empty": True})
    predicted = apply_conformal(_write(tmp_path, done.document), [new_path])
    q = _lac_qhat(probs, gold, 0.2)
    assert predicted.validity["risk"]["selective_error"] == pytest.approx(
        1 - float((1 - new_probs[np.arange(100), new_gold] <= q).mean()))


def test_unlabelled_records_are_checked_on_their_confidence(tmp_path):
    cal_path, same, shifted = tmp_path / "cal.csv", tmp_path / "same.csv", tmp_path / "s.csv"
    probs, _ = _mc(cal_path, 1000, seed=5)
    new_probs, _ = _mc(same, 300, seed=6, labels=False)
    _mc(shifted, 300, seed=7, concentration=3.0, labels=False)  # flatter: less sure
    done = calibrate_input(SETS, cal_path, PROBS)
    # the probabilities are renormalised as read (each row's sum to 1): equal to rounding
    np.testing.assert_allclose(done.document["validity"]["confidence"]["values"],
                               np.sort(probs.max(1)), rtol=1e-15)
    predictor = _write(tmp_path, done.document)
    v = apply_conformal(predictor, [same]).validity
    from scipy import stats

    reference = stats.ks_2samp(probs.max(1), new_probs.max(1), method="exact")
    assert v["quantity"].startswith("label-free confidence")
    assert v["p_value"] == pytest.approx(reference.pvalue, rel=1e-9) and v["risk"] is None
    assert "no 'answer' column" in v["note"]
    void = apply_conformal(predictor, [shifted]).validity
    assert void["holds"] is False and void["sentence"].startswith("promise void")


def test_a_stream_of_files_names_where_the_scores_changed(tmp_path):
    cal_path = tmp_path / "cal.csv"
    _mc(cal_path, 1000, seed=8)
    predictor = _write(tmp_path, calibrate_input(SETS, cal_path, PROBS).document)
    folder = tmp_path / "stream"
    folder.mkdir()
    for k in range(1, 7):   # the model's probabilities stop matching the truth from file 4
        path = folder / f"b{k}.csv"
        _mc(path, 100, seed=30 + k)
        if k >= 4:
            frame = pd.read_csv(path)
            frame["answer"] = np.array(list("ABCDE"))[np.random.default_rng(k).integers(0, 5,
                                                                                       100)]
            frame.to_csv(path, index=False, float_format="%.17g")
    predicted = apply_conformal(predictor, [folder], ValidityOptions(alpha=0.05))
    v = predicted.validity
    assert v["checked_by"] == "stream" and v["holds"] is False
    assert v["stream"]["alarm"] >= 300 and v["stream"]["alarm_at"]["file"].endswith(
        tuple(f"b{k}.csv" for k in (4, 5, 6)))
    assert v["risk"]["holds"] is False         # the miscoverage is far above alpha
    assert len(predicted.batches) == 6 and predicted.counts["labelled"] == 600


def test_mondrian_sets_per_group(tmp_path):
    cal_path = tmp_path / "cal.csv"
    probs, gold = _mc(cal_path, 600, seed=9)
    frame = pd.read_csv(cal_path)
    frame["topic"] = np.where(np.arange(600) % 3 == 0, "hard", "easy")
    frame.to_csv(cal_path, index=False, float_format="%.17g")
    done = calibrate_input(SETS, cal_path, {**PROBS, "group_col": "topic"})
    state = done.document["state"]
    hard = np.arange(600) % 3 == 0
    assert state["qhat_by_group"]["hard"] == pytest.approx(
        _lac_qhat(probs[hard], gold[hard], 0.1), abs=1e-15)
    assert state["qhat_by_group"]["easy"] == pytest.approx(
        _lac_qhat(probs[~hard], gold[~hard], 0.1), abs=1e-15)
    new = tmp_path / "new.csv"
    frame.assign(topic=np.where(np.arange(600) % 2 == 0, "hard", "unseen")).to_csv(
        new, index=False, float_format="%.17g")
    with pytest.warns(UserWarning, match="unseen"):
        predicted = apply_conformal(_write(tmp_path, done.document), [new])
    sizes = predicted.frame["set_size"].to_numpy()
    assert (sizes[1::2] == 5).all()           # an unseen group: every option


def _judge(path, n: int, seed: int, *, truth: bool = True):
    """A judge's rating log-probabilities over 1-5 and the human score drawn near its mode."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 5)) * 2
    lp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    human = np.clip(lp.argmax(1) + 1 + rng.integers(-1, 2, n), 1, 5)
    frame = pd.DataFrame({f"s2_lp{k + 1}": lp[:, k] for k in range(5)})
    if truth:
        frame["gt_score"] = human
    frame.to_csv(path, index=False, float_format="%.17g")
    return lp, human.astype(float)


def test_intervals_equal_ordinal_aps_fitted_in_memory(tmp_path):
    from confeval.conformal import make_method

    cal_path, new_path = tmp_path / "cal.csv", tmp_path / "new.csv"
    lp, human = _judge(cal_path, 700, seed=1)
    new_lp, new_human = _judge(new_path, 300, seed=2)
    done = calibrate_input(INTERVALS, cal_path, {"alpha": 0.2})
    method = make_method("ordinal_aps", alpha=0.2, low=1.0, high=5.0).fit(lp, human)
    assert done.document["state"]["qhat"] == method.thresholds[0]
    predicted = apply_conformal(_write(tmp_path, done.document), [new_path])
    lo, hi = method.predict(new_lp)
    np.testing.assert_array_equal(predicted.frame["interval_low"].to_numpy(float), lo)
    np.testing.assert_array_equal(predicted.frame["interval_high"].to_numpy(float), hi)
    covered = (lo <= new_human) & (new_human <= hi)
    assert predicted.validity["risk"]["selective_error"] == pytest.approx(1 - covered.mean())
    with pytest.raises(ValueError, match="--method 'cqr': a stored predictor holds numbers"):
        calibrate_input(INTERVALS, cal_path, {"method": "cqr"})


@pytest.mark.parametrize("edit, field", [
    ({"state": {"score": "zzz"}}, "state"),
    ({"n_calibration": 3}, "digest"),
    ({"suite": "steps"}, "suite"),
])
def test_an_edited_predictor_is_refused_naming_the_field(tmp_path, edit, field):
    cal_path = tmp_path / "cal.csv"
    _mc(cal_path, 200, seed=11)
    document = calibrate_input(SETS, cal_path, PROBS).document
    edited = {**document, **edit}
    if field != "digest":
        edited["digest"] = digest(edited)     # re-sealed: the field itself is checked
    path = _write(tmp_path, edited)
    with pytest.raises(ValueError) as info:
        read_conformal(path)
    assert str(info.value).startswith(f"{path}: field {field!r}")
    with pytest.raises(ValueError, match="not a confeval conformal predictor"):
        read_conformal(_write(tmp_path, {"policy_version": 2}, "other.json"))


def test_too_few_calibration_items_give_full_sets(tmp_path):
    cal_path, new_path = tmp_path / "cal.csv", tmp_path / "new.csv"
    _mc(cal_path, 5, seed=12)
    _mc(new_path, 20, seed=13)
    with pytest.warns(UserWarning, match="too few"):
        done = calibrate_input(SETS, cal_path, {**PROBS, "alpha": 0.05})
    assert done.document["state"]["qhat"] is None
    predicted = apply_conformal(_write(tmp_path, done.document), [new_path])
    assert (predicted.frame["set_size"] == 5).all()


def test_the_folders_repeat(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cal_path, new_path = tmp_path / "cal.csv", tmp_path / "new.csv"
    _mc(cal_path, 300, seed=14)
    _mc(new_path, 100, seed=15)
    done = calibrate_input(SETS, cal_path, PROBS, frozenset(PROBS))
    config = conformal_config("sets calibrate", [cal_path], None, PROBS)
    metrics = {"title": "confeval sets calibrate", "simulated": False,
               "sections": [conformal_section("sets", "conformal", {str(cal_path):
                                                                    done.result})]}
    assert rerun_conformal(json.loads(json.dumps(config))) == json.loads(json.dumps(metrics))
    predictor = _write(tmp_path, done.document)
    options = ValidityOptions(permutations=99, seed=3)
    predicted = apply_conformal(predictor, [new_path], options)
    config = conformal_config("sets apply", [new_path], options, policy=predictor)
    again = rerun_conformal(json.loads(json.dumps(config)))
    from confeval.runs import dumps

    assert json.loads(dumps(again["sections"][0]["results"][str(predictor)])) == \
        json.loads(dumps(apply_result(predicted)))
