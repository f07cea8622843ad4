"""``confeval guarantee``: the JSON contract, the split, no threshold said as such, one-line
errors."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.guarantee import crc_threshold, ltt_threshold, sgr_threshold


def _file(tmp_path, n=1500, informative=True, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.beta(4, 2, n)
    conf = q if informative else rng.random(n)
    frame = pd.DataFrame({"p": np.round(conf, 3), "y": (rng.random(n) < q).astype(int)})
    path = tmp_path / "judge.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_contract_and_values_equal_the_library(tmp_path, capsys):
    path, frame = _file(tmp_path)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15", "--delta",
                 "0.1", "--method", "ltt", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert {"threshold", "answer_if", "bound", "method", "n_calibration", "test"} <= set(g)
    assert g["answer_if"] == "confidence >= threshold" and g["method"] == "ltt"
    assert g["n_calibration"] == 1500 and g["test"] is None
    expected = ltt_threshold(frame["p"], frame["y"], target=0.15, delta=0.1)
    assert g["threshold"] == expected.threshold and g["bound"] == pytest.approx(expected.bound)
    assert g["bound"] <= 0.15 and "at most 0.15" in g["guarantee"]
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2",
                 "--split-seed", "3", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["n_calibration"] == 750 and g["test"]["n"] == 750
    assert 0 < g["test"]["coverage"] <= 1 and 0 <= g["test"]["risk"] <= 1


def test_nothing_certified_and_errors(tmp_path, capsys):
    path, _ = _file(tmp_path, n=200, informative=False)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.05",
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["threshold"] is None and g["bound"] is None
    assert g["guarantee"].startswith("No threshold is certified")
    for argv, message in [
        (["--target", "0.1", "--method", "rcps"], "--method 'rcps': so far ltt, crc, sgr"),
        (["--target", "0.1", "--seeds", "5-1"], "runs backwards"),
        (["--target", "1.5"], "--target must be in (0, 1)"),
        (["--target", "0.1", "--fwer", "bh"], "--fwer 'bh'"),
    ]:
        assert main(["guarantee", str(path), "-c", "p", "-y", "y", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_the_sets_decision_is_the_top_option(tmp_path, capsys):
    from confeval.simulate import simulate

    frame = simulate("mcq", 2000, seed=4)
    path = tmp_path / "mcq.csv"
    frame.to_csv(path, index=False)
    assert main(["guarantee", str(path), "--suite", "sets", "--target", "0.2",
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    logits = frame[[c for c in frame.columns if c.startswith("logit_")]].to_numpy(np.float32)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    gold = frame["answer"].map("ABCD".index).to_numpy()
    expected = ltt_threshold(probs.max(axis=1).astype(np.float64),
                             (probs.argmax(axis=1) == gold).astype(float), target=0.2,
                             delta=0.1)
    assert g["threshold"] == pytest.approx(expected.threshold, rel=1e-6)
    assert g["calibration"]["answered"] == int(expected.to_dict()["calibration"]["answered"])
    assert "warnings" not in g
    # tied top options: said in --json and on the terminal, as `sets score` says them
    frame.loc[:2, [c for c in frame.columns if c.startswith("logit_")]] = 0.5
    frame.to_csv(path, index=False)
    assert main(["guarantee", str(path), "--suite", "sets", "--target", "0.2",
                 "--json"]) == 0
    tied = ("3 of 2,000 rows have a tied top option: their prediction is the first tied "
            "option in column order (as argmax takes it)")
    assert json.loads(capsys.readouterr().out)["guarantee"]["warnings"] == [tied]
    assert main(["guarantee", str(path), "--suite", "sets", "--target", "0.2"]) == 0
    assert capsys.readouterr().err == f"warning: {path}: {tied}\n"


@pytest.mark.parametrize(("method", "target"), [("crc", 0.05), ("sgr", 0.15)])
def test_crc_and_sgr_equal_the_library(tmp_path, capsys, method, target):
    path, frame = _file(tmp_path)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", str(target),
                 "--method", method, "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    expected = (crc_threshold(frame["p"], frame["y"], target=target) if method == "crc" else
                sgr_threshold(frame["p"], frame["y"], target=target, delta=0.1))
    assert g["threshold"] == expected.threshold and g["bound"] == expected.bound
    assert g["risk_controlled"] == ("joint" if method == "crc" else "selective")
    assert g["method"] == method and (g["delta"] is None) == (method == "crc")
    assert ("on average" in g["guarantee"]) == (method == "crc")


def test_seeds_repeat_the_split(tmp_path, capsys):
    from sklearn.model_selection import train_test_split

    path, frame = _file(tmp_path, n=2000, seed=5)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2",
                 "--seeds", "1-12", "--json"]) == 0
    sp = json.loads(capsys.readouterr().out)["guarantee"]["splits"]
    assert sp["n_splits"] == len(sp["per_split"]) == 12
    conf, y = frame["p"].to_numpy(), frame["y"].to_numpy()
    exceeded = 0
    for split in sp["per_split"]:
        cal, test = train_test_split(np.arange(2000), train_size=0.5,
                                     random_state=split["seed"])
        res = ltt_threshold(conf[cal], y[cal], target=0.2, delta=0.1)
        assert split["threshold"] == res.threshold
        answered = conf[test] >= res.threshold if res.threshold is not None else \
            np.zeros(test.size, bool)
        assert split["coverage"] == answered.mean()
        if answered.any():
            assert split["risk"] == pytest.approx(1 - y[test][answered].mean(), abs=1e-12)
            exceeded += split["risk"] > 0.2
    assert sp["share_exceeding_target"] == exceeded / 12
    assert sp["n_certified"] == sum(s["threshold"] is not None for s in sp["per_split"])


def test_policy_written_and_applied(tmp_path, capsys):
    path, frame = _file(tmp_path)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15",
                 "--out", str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    policy = json.loads((run / "policy.json").read_text())
    assert policy["threshold"] == g["threshold"] is not None
    assert policy["applies_to"]["confidence"] == "p" and policy["method"] == "ltt"
    assert (policy["target"], policy["delta"], policy["n_calibration"]) == (0.15, 0.1, 1500)
    assert len(policy["calibration_data"]["sha256"]) == 64
    assert policy["guarantee"] == g["guarantee"]
    # new records: the confidence only, one unreadable
    new = tmp_path / "new.csv"
    pd.DataFrame({"p": [*frame["p"].iloc[:50], "high"]}).to_csv(new, index=False)
    decisions = tmp_path / "decisions.jsonl"
    assert main(["guarantee", "apply", str(run / "policy.json"), str(new), "--out",
                 str(decisions), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["apply"]
    expected = int((frame["p"].iloc[:50] >= g["threshold"]).sum())
    assert (counts["answer"], counts["abstain"]) == (expected, 50 - expected)
    assert counts["excluded"] == {"non_numeric_confidence": 1}
    rows = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert [r["decision"] for r in rows[:50]] == [
        "answer" if v >= g["threshold"] else "abstain" for v in frame["p"].iloc[:50]]
    assert rows[50]["decision"] == "excluded"
    assert rows[50]["excluded_reason"] == "non_numeric_confidence"
    # the calibration file itself: exactly the calibration's answered items
    assert main(["guarantee", "apply", str(run / "policy.json"), str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["apply"]["answer"] == \
        g["calibration"]["answered"]
    for argv, message in [
        (["guarantee", "apply", str(path), str(new)], "not a policy file"),
        (["guarantee", "apply", str(run / "run.json"), str(new)], "not a confeval policy"),
        (["guarantee", "apply", str(run / "policy.json"), str(new), "--out", str(decisions)],
         "exists; use --force"),
        # the folder holds the input itself: refused for that first (even --force would not
        # replace it)
        (["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.1", "--out",
          str(tmp_path)], f"holds {path}, read by this command"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_a_policy_naming_its_threshold_twice_is_refused_in_one_line(tmp_path, capsys):
    """A first threshold put before the sealed one: json keeps the last, so the digest
    agrees, and another tool reading the first would answer by another threshold."""
    path, _ = _file(tmp_path)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15",
                 "--out", str(run), "--json"]) == 0
    capsys.readouterr()
    policy = run / "policy.json"
    text = policy.read_text()
    policy.write_text(text.replace('"threshold": ', '"threshold": 0.0, "threshold": ', 1))
    assert main(["guarantee", "apply", str(policy), str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"{policy}: not a policy file: key 'threshold' appears twice in one object (0.0, " \
        "then " in err and err.count("\n") == 1, err


def test_a_sets_policy_applies_to_unlabelled_records(tmp_path, capsys):
    from confeval.simulate import simulate

    frame = simulate("mcq", 2000, seed=4)
    path = tmp_path / "mcq.csv"
    frame.to_csv(path, index=False)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "--suite", "sets", "--target", "0.2", "--out",
                 str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    unlabelled = tmp_path / "new.csv"
    frame.drop(columns=["answer"]).to_csv(unlabelled, index=False)
    assert main(["guarantee", "apply", str(run / "policy.json"), str(unlabelled),
                 "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["apply"]
    assert counts["answer"] == g["calibration"]["answered"] and counts["excluded"] == {}


@pytest.mark.parametrize("tolerance", [0, 1])
def test_the_judge_decision_accepts_scores_near_the_humans(tmp_path, capsys, tolerance):
    """Accept the judge's score: right when within the tolerance of the human's; confidence
    the judge's own (renormalised) probability of a score that close to the one it gave."""
    from confeval.simulate import simulate

    frame = simulate("scores", 3000, "overconfident", seed=5)
    path = tmp_path / "judge.csv"
    frame.to_csv(path, index=False)
    run = tmp_path / "run"
    target = 0.35 if tolerance == 0 else 0.06
    assert main(["guarantee", str(path), "--suite", "agreement", "-p", "parsed_score", "-g",
                 "gt_score", "--logprob-cols", "score_lp*", "--tolerance", str(tolerance),
                 "--target", str(target), "--out", str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    probs = np.exp(frame[[f"score_lp{k}" for k in range(1, 6)]].to_numpy())
    probs /= probs.sum(axis=1, keepdims=True)
    pred = frame["parsed_score"].to_numpy()
    conf = sum(probs[:, k - 1] * (np.abs(k - pred) <= tolerance) for k in range(1, 6))
    right = (np.abs(pred - frame["gt_score"]) <= tolerance).astype(float)
    expected = ltt_threshold(conf, right, target=target, delta=0.1)
    assert expected.threshold is not None
    assert g["threshold"] == pytest.approx(expected.threshold, rel=1e-12)
    assert g["calibration"] == expected.to_dict()["calibration"]
    assert f"more than {tolerance} from the human's" in g["guarantee"]
    # new items: the judge's scores only
    new = tmp_path / "new.csv"
    frame.drop(columns=["gt_score"]).to_csv(new, index=False)
    assert main(["guarantee", "apply", str(run / "policy.json"), str(new), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["apply"]
    assert counts["answer"] == g["calibration"]["answered"]
    assert main(["guarantee", str(path), "--suite", "agreement", "-p", "parsed_score", "-g",
                 "gt_score", "--target", "0.1"]) == 2
    assert "needs its score probabilities" in capsys.readouterr().err


def test_the_report_section(tmp_path, capsys):
    """report.html: the sentence, the numbers, the risk-coverage figure with the certified
    point and, over splits, the histogram; nothing certified said with the best bound."""
    path, _ = _file(tmp_path)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15",
                 "--split-seed", "2", "--seeds", "1-20", "--out", str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    html = (run / "report.html").read_text()
    assert g["guarantee"] in html and html.count("data:image/png;base64,") == 2
    assert "certified bound" in html and "Over 20 random 50/50 splits" in html
    metrics = json.loads((run / "metrics.json").read_text())
    (section,) = metrics["sections"]
    assert section["kind"] == "guarantee" and section["results"][str(path)] == g
    curve = g["curve"]
    assert curve["coverage"][-1] == 1.0 and len(curve["coverage"]) <= 200
    i = curve["threshold"].index(g["threshold"]) if g["threshold"] in curve["threshold"] \
        else None
    if i is not None:   # the certified threshold's own bound is the certified bound
        assert curve["bound"][i] == pytest.approx(g["bound"], abs=1e-9)
    (tmp_path / "weak").mkdir()
    weak, _ = _file(tmp_path / "weak", n=200, informative=False)
    assert main(["guarantee", str(weak), "-c", "p", "-y", "y", "--target", "0.05", "--out",
                 str(tmp_path / "none"), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    html = (tmp_path / "none" / "report.html").read_text()
    assert "No threshold is certified" in html and f"{g['best_achievable_bound']:.3f}" in html


def test_the_steps_decision_accepts_step_verdicts_of_original_chains(tmp_path, capsys):
    from confeval.simulate import simulate

    frame = simulate("steps", 400, "overconfident", seed=2)
    path = tmp_path / "steps.csv"
    frame.to_csv(path, index=False)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "--suite", "steps", "--target", "0.1", "--out",
                 str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    orig = frame[frame["variant"] == "original"]
    p = orig["p_correct"].to_numpy()
    conf = np.maximum(p, 1 - p)
    right = ((p >= 0.5).astype(int) == orig["label"].to_numpy()).astype(float)
    expected = ltt_threshold(conf, right, target=0.1, delta=0.1, groups=orig["item_id"])
    assert expected.threshold is not None and g["threshold"] == expected.threshold
    assert g["n_clusters"] == orig["item_id"].nunique()   # chains, the independent draws
    assert g["excluded"] == {"perturbed_variant": int((frame["variant"] != "original").sum())}
    assert g["guarantee"].startswith("Accept the step verdict")
    new = tmp_path / "new.csv"
    orig.drop(columns=["label"]).to_csv(new, index=False)
    assert main(["guarantee", "apply", str(run / "policy.json"), str(new), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["apply"]["answer"] == \
        g["calibration"]["answered"]
    # a split keeps every chain on one side; crc and sgr would treat steps as independent
    assert main(["guarantee", str(path), "--suite", "steps", "--target", "0.1",
                 "--split-seed", "3", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["n_clusters"] == 200   # half the 400 chains, whole
    assert main(["guarantee", str(path), "--suite", "steps", "--target", "0.1", "--method",
                 "crc"]) == 2
    assert "--method ltt tests the chains" in capsys.readouterr().err


def test_the_diagnose_decision_accepts_the_named_error_type(tmp_path, capsys):
    rng = np.random.default_rng(3)
    types = np.array(["vpe", "re", "qce", "kde", "no_error"])
    n = 1200
    gold = rng.choice(types, n)
    conf = rng.uniform(0.2, 1.0, n).round(3)
    right = rng.random(n) < conf
    next_type = {t: types[(i + 1) % 5] for i, t in enumerate(types)}
    pred = np.where(right, gold, [next_type[t] for t in gold])
    pred = pred.astype(object)
    pred[:30] = ""                         # unparseable: no type, no confidence
    conf_col = conf.astype(object)
    conf_col[:30] = ""
    frame = pd.DataFrame({"item_id": range(n), "gold_type": gold, "pred_type": pred,
                          "confidence": conf_col})
    path = tmp_path / "diagnoses.csv"
    frame.to_csv(path, index=False)
    assert main(["guarantee", str(path), "--suite", "diagnose", "--target", "0.1",
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    keep = slice(30, None)
    expected = ltt_threshold(conf[keep], (pred[keep] == gold[keep]).astype(float),
                             target=0.1, delta=0.1)
    assert expected.threshold is not None and g["threshold"] == expected.threshold
    assert g["n_used"] == n - 30 and sum(g["excluded"].values()) == 30
    assert g["guarantee"].startswith("Accept the diagnosed error type")


@pytest.mark.parametrize("suite", ["intervals", "compare"])
def test_a_run_folder_names_its_suites_decision(tmp_path, capsys, suite):
    """A run folder of a suite is certified on that suite's decision with the columns its
    records hold (its run.json's options, as a live run writes them); a folder of no suite
    says so. (Real live runs of every suite: tests/cli/test_every_run_folder.py.)"""
    from confeval.runs import RunFolder
    from confeval.simulate import simulate
    from confeval.verbs.run import live_part

    run = RunFolder(tmp_path / "run")
    if suite == "compare":
        run.write_run({"command": "compare", "suite": "score", "inputs": []})
        assert main(["guarantee", str(run.path), "--target", "0.1"]) == 2
        assert "a compare run folder has no natural decision" in capsys.readouterr().err
        return
    live = live_part(suite)
    run.write_run({"command": "run", "suite": suite, "model": "m",
                   "options": live.for_records(live.default_options()).to_dict()})
    run.write_records(simulate("scores", 600, seed=1).to_dict("records"))
    target = 0.06
    assert main(["guarantee", str(run.path), "--target", str(target), "--out",
                 str(tmp_path / "g"), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    # the file inside the folder, named with the suite's own column options
    named = ["--suite", suite, "-p", "parsed_score", "--label-col", "gt_score",
             "--logprob-cols", "score_lp*"]
    assert main(["guarantee", str(run.path / "records.jsonl"), "--target", str(target),
                 *named, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["guarantee"]["threshold"] == g["threshold"]
    policy = json.loads((tmp_path / "g" / "policy.json").read_text())
    assert policy["applies_to"]["suite"] == suite
    assert policy["calibration_data"]["file"] == "run/records.jsonl"


def test_a_batch_promise(tmp_path, capsys):
    """--batch M (or test: the test half's size) promises a new batch's error: the library's
    threshold with batch=M, a later (higher) threshold than the population promise, the
    sentence and policy.json say so; what it cannot do is one line."""
    path, frame = _file(tmp_path, n=3000, seed=2)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2",
                 "--split-seed", "4", "--batch", "test", "--seeds", "1-3", "--out", str(run),
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    from sklearn.model_selection import train_test_split

    cal, _ = train_test_split(np.arange(3000), train_size=0.5, random_state=4)
    expected = ltt_threshold(frame["p"].to_numpy()[cal], frame["y"].to_numpy()[cal],
                             target=0.2, delta=0.1, batch=1500)
    population = ltt_threshold(frame["p"].to_numpy()[cal], frame["y"].to_numpy()[cal],
                               target=0.2, delta=0.1)
    assert g["batch"] == 1500 and g["threshold"] == expected.threshold is not None
    assert g["bound"] == pytest.approx(expected.bound) and g["bound"] <= 0.2
    assert expected.threshold > population.threshold
    assert "a new batch of 1500 items" in g["guarantee"]
    assert json.loads((run / "policy.json").read_text())["batch"] == 1500
    report = (run / "report.html").read_text()
    assert "certified bound (a batch of 1,500)" in report
    assert "The promise is on a batch of 1,500 items" in report   # how to read the splits
    assert all(s["threshold"] is not None for s in g["splits"]["per_split"])
    # a fixed batch size, no split
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2", "--batch",
                 "400", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["guarantee"]["batch"] == 400
    for argv, message in [
        (["--batch", "test"], "--batch test is the test half's size"),
        (["--batch", "0"], "--batch must be a number of items or 'test'"),
        (["--batch", "50", "--method", "crc"], "--batch promises a batch's error with "
                                               "--method ltt"),
        (["--batch", "50", "--fwer", "holm"], "holm"),
    ]:
        assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2",
                     *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_risk_accuracy_and_a_loss_column(tmp_path, capsys):
    """--risk accuracy --target 0.9 certifies what --target 0.1 does, said as accuracy;
    --risk loss reads -y as a 0/1 column of bad answers (its share among the answered)."""
    path, frame = _file(tmp_path, n=2000, seed=3)
    argv = ["guarantee", str(path), "-c", "p", "-y", "y", "--json"]
    assert main([*argv, "--target", "0.1"]) == 0
    as_error = json.loads(capsys.readouterr().out)["guarantee"]
    assert main([*argv, "--target", "0.9", "--risk", "accuracy"]) == 0
    as_accuracy = json.loads(capsys.readouterr().out)["guarantee"]
    assert as_accuracy["threshold"] == as_error["threshold"] is not None
    assert as_accuracy["target"] == pytest.approx(0.1) and as_accuracy["accuracy_target"] == 0.9
    assert "at least 0.9 of answered items are right" in as_accuracy["guarantee"]
    # a loss column: 1 marks a bad answer (here: unsafe), whatever the correctness
    rng = np.random.default_rng(1)
    frame["unsafe"] = (rng.random(len(frame)) < 0.3 * (1 - frame["p"])).astype(int)
    frame.to_csv(path, index=False)
    assert main(["guarantee", str(path), "-c", "p", "-y", "unsafe", "--risk", "loss",
                 "--target", "0.05", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    expected = ltt_threshold(frame["p"], 1 - frame["unsafe"], target=0.05, delta=0.1)
    assert g["threshold"] == expected.threshold is not None
    assert "marked bad (unsafe = 1)" in g["guarantee"] and g["risk_measure"] == "loss"
    for extra, message in [(["-y", "p", "--risk", "loss"], "needs a 0/1 column"),
                           (["-y", "y", "--risk", "harm"], "--risk 'harm': choose from"),
                           (["-y", "y", "--risk", "loss", "--suite", "sets"],
                            "--risk loss reads a 0/1 column")]:
        assert main(["guarantee", str(path), "-c", "p", "--target", "0.1", *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_the_measures_decision_is_the_first_ranked_option(tmp_path, capsys):
    """--suite measures: per question the option the measure ranks first, its value the
    confidence; the threshold equals the library's on those; apply decides one option per
    question (the rest not_chosen)."""
    rng = np.random.default_rng(4)
    rows = []
    for q in range(600):
        gold = int(rng.integers(4))
        skill = rng.random()
        for k in range(4):
            rows.append({"question_id": f"q{q}", "option": "ABCD"[k],
                         "sl": float(-rng.exponential(1.0) + 3 * skill * (k == gold)),
                         "correct": int(k == gold)})
    frame = pd.DataFrame(rows)
    path = tmp_path / "options.csv"
    frame.to_csv(path, index=False)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "--suite", "measures", "-c", "sl", "--target", "0.15",
                 "--out", str(run), "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    top = frame.loc[frame.groupby("question_id", sort=False)["sl"].idxmax()]
    expected = ltt_threshold(top["sl"].to_numpy(), top["correct"].to_numpy(), target=0.15,
                             delta=0.1)
    assert g["n_calibration"] == 600 and g["threshold"] == expected.threshold is not None
    assert g["guarantee"].startswith("Answer the option sl ranks first")
    assert main(["guarantee", "apply", str(run / "policy.json"), str(path), "--out",
                 str(tmp_path / "d.csv"), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["apply"]
    assert counts["answer"] == g["calibration"]["answered"]
    assert counts["answer"] + counts["abstain"] == 600
    decisions = pd.read_csv(tmp_path / "d.csv")
    assert (decisions["decision"] == "not_chosen").sum() == 1800


def test_a_measures_run_folder_is_certified_on_its_first_ranked_options(tmp_path, capsys,
                                                                         monkeypatch):
    from confeval.backends.stub_server import StubServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CONFEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    run_dir = tmp_path / "r"
    with StubServer() as server:
        assert main(["measures", "run", "--model", "openai:stub", "--base-url",
                     server.base_url, "--n", "30", "--samples", "2", "--bootstrap", "10",
                     "--similarity", "jaccard", "--out", str(run_dir)]) == 0
    capsys.readouterr()
    assert main(["guarantee", str(run_dir), "--target", "0.5", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    rows = pd.read_json(run_dir / "options.jsonl", lines=True)
    top = rows.loc[rows.groupby("question_id", sort=False)["sl"].idxmax()]
    assert g["n_calibration"] == top.shape[0] == rows["question_id"].nunique()
    expected = ltt_threshold(top["sl"].to_numpy(), top["correct"].to_numpy(), target=0.5,
                             delta=0.1)
    # the stub's picks are poor: nothing is certified on 30 questions, so the best bound is
    # the value compared (the file test above certifies a threshold)
    assert g["threshold"] == expected.threshold
    assert g["best_achievable_bound"] == pytest.approx(expected.best_bound, abs=1e-12)


def test_apply_checks_that_the_promise_still_applies(tmp_path, capsys):
    """The outside check's interface: ``guarantee apply POLICY BATCH --json`` carries
    ``validity.p_value`` and ``validity.holds`` (and the same under ``apply``); ``--strict``
    exits 4 when the promise is void; several files are a stream; ``--report`` writes a run
    folder that ``rerun`` repeats."""
    path, _ = _file(tmp_path, n=2000, seed=5)
    run = tmp_path / "run"
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15",
                 "--out", str(run)]) == 0
    capsys.readouterr()
    policy = str(run / "policy.json")
    rng = np.random.default_rng(6)
    same, shifted = tmp_path / "same.csv", tmp_path / "shifted.csv"
    pd.DataFrame({"p": np.round(rng.beta(4, 2, 300), 3)}).to_csv(same, index=False)
    pd.DataFrame({"p": np.round(rng.beta(2, 2, 300), 3)}).to_csv(shifted, index=False)
    assert main(["guarantee", "apply", policy, str(same), "--json", "--strict"]) == 0
    document = json.loads(capsys.readouterr().out)
    v = document["validity"]
    assert v["holds"] is True and 0.05 < v["p_value"] <= 1 and document["apply"]["validity"] == v
    assert main(["guarantee", "apply", policy, str(shifted), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["validity"]
    assert v["holds"] is False and 0 < v["p_value"] < 1e-4
    assert main(["guarantee", "apply", policy, str(shifted), "--strict"]) == 4
    out = capsys.readouterr().out
    assert "promise void: the batch is not exchangeable with the calibration data (p < " in out
    # a stream of files, the alarm named
    assert main(["guarantee", "apply", policy, str(same), str(shifted), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    v = document["validity"]
    assert v["checked_by"] == "stream" and v["holds"] is False
    assert v["stream"]["alarm_at"]["file"] == str(shifted)
    assert [b["file"] for b in document["apply"]["batches"]] == [str(same), str(shifted)]
    # the report folder, repeated
    report = tmp_path / "report"
    assert main(["guarantee", "apply", policy, str(shifted), "--report", str(report)]) == 0
    capsys.readouterr()
    assert "Does the promise still apply?" in (report / "report.html").read_text()
    assert main(["rerun", str(report)]) == 0
    assert "metrics identical" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv, message in [
        (["guarantee", "apply", policy, str(same), "--alpha", "2"], "--alpha must be in"),
        (["guarantee", "apply", policy, str(same), "--statistic", "t"], "--statistic 't'"),
        (["guarantee", "apply", policy, str(run)], "a run folder with no records.jsonl"),
        (["guarantee", "apply", policy, str(empty)], "a folder with no records file"),
        (["guarantee", "apply", policy, str(same), "--report", str(tmp_path)],
         "--report " + str(tmp_path) + " holds "),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err



def test_a_percentage_confidence_and_yes_no_correctness(tmp_path, capsys):
    """The issue's file (#37 item 6): correctness as yes/no is read (it was refused as
    non_numeric_correct), and --confidence-scale 100 certifies the same decisions on the
    [0, 1] scale, the policy applying the same scale to new records."""
    path, frame = _file(tmp_path, n=1500)
    percent = tmp_path / "percent.csv"
    pd.DataFrame({"p": frame["p"] * 100, "y": np.where(frame["y"] == 1, "yes", "no")}).to_csv(
        percent, index=False)
    argv = ["--target", "0.15", "--json"]
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", *argv]) == 0
    plain = json.loads(capsys.readouterr().out)["guarantee"]
    assert main(["guarantee", str(percent), "-c", "p", "-y", "y", *argv]) == 0
    raw = json.loads(capsys.readouterr().out)["guarantee"]   # any real confidence: its scale
    run = tmp_path / "run"
    assert main(["guarantee", str(percent), "-c", "p", "-y", "y", "--confidence-scale", "100",
                 *argv, "--out", str(run)]) == 0
    scaled = json.loads(capsys.readouterr().out)["guarantee"]
    assert plain["threshold"] is not None
    assert raw["threshold"] == pytest.approx(100 * plain["threshold"], rel=1e-12)
    assert scaled["threshold"] == pytest.approx(plain["threshold"], rel=1e-12)
    assert scaled["bound"] == raw["bound"] == plain["bound"]
    assert main(["guarantee", "apply", str(run / "policy.json"), str(percent), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["apply"]["answer"] == \
        plain["calibration"]["answered"]


def _readme_judge(tmp_path):
    """The README's judge: `confeval simulate confidence --behaviour overconfident --out
    judge.csv` (2,000 items, seed 0)."""
    path = tmp_path / "judge.csv"
    assert main(["simulate", "confidence", "--behaviour", "overconfident", "--out",
                 str(path)]) == 0
    return path


def test_nothing_certified_says_what_each_method_did(tmp_path, capsys):
    """No threshold at 0.1 on the README's judge: each method states the bound it reached
    where it looked, recomputed here from its own procedure — Learn then Test's fixed sequence
    at its first tested threshold at delta, SGR at the lowest of its binary search's bounds at
    delta / k — so the two sentences give two numbers without contradicting each other."""
    from confeval.guarantee import binomial_upper, min_answered
    from confeval.guarantee.ltt import selective_risk, upper_bound

    path = _readme_judge(tmp_path)
    capsys.readouterr()
    frame = pd.read_csv(path)
    conf, y = frame["confidence"].to_numpy(), frame["correct"].to_numpy()
    said = {}
    for method in ("ltt", "sgr"):
        assert main(["guarantee", str(path), "-c", "confidence", "-y", "correct", "--target",
                     "0.1", "--method", method, "--json"]) == 0
        said[method] = json.loads(capsys.readouterr().out)["guarantee"]
    ltt, sgr = said["ltt"], said["sgr"]
    assert ltt["threshold"] is None and sgr["threshold"] is None
    # LTT: the walk starts at the most confident candidate answering min_answered items
    first = ltt["best_achievable"]
    walk = ltt_threshold(conf, y, target=0.1, delta=0.1)
    start = int(np.flatnonzero(walk.answered >= min_answered(0.1, 0.1))[0])
    assert first["threshold"] == walk.candidates[start]
    risk, answered = selective_risk(conf, y, [first["threshold"]])
    assert first["answered"] == answered[0] >= min_answered(0.1, 0.1)
    assert first["level"] == 0.1 and first["n_tested_first"] == 1
    assert ltt["best_achievable_bound"] == pytest.approx(
        upper_bound(risk[0] * answered[0], int(answered[0]), 0.1), abs=1e-9)
    assert ltt["guarantee"] == (
        "No threshold is certified: at n = 2000 and delta = 0.1, the fixed sequence of Learn "
        f"then Test stops at its first threshold, {first['threshold']:.6g} "
        f"({first['answered']} answered), whose bound on the share of answered items wrong "
        f"is {ltt['best_achievable_bound']:.3f}, above the target 0.1.")
    # SGR: k = ceil(log2 n) thresholds at delta / k; its best is the lowest of those bounds
    where = sgr["best_achievable"]
    assert where["n_tested_first"] == 11 and where["level"] == pytest.approx(0.1 / 11)
    wrong = round(where["risk"] * where["answered"])
    assert sgr["best_achievable_bound"] == pytest.approx(
        float(binomial_upper(wrong, where["answered"], 0.1 / 11)), abs=1e-12)
    assert "none of the 11 thresholds the binary search of SGR tests (each at delta/11) " \
        "passes" in sgr["guarantee"]
    for g in (ltt, sgr):
        assert g["best_achievable_bound"] > 0.1 and "this data can certify" not in \
            g["guarantee"] and f"{g['best_achievable_bound']:.3f}" in g["guarantee"]


@pytest.mark.parametrize("argv, words", [
    (["--fwer", "holm"], "the first test of Holm, of the smallest p-value among"),
    (["--fwer", "bonferroni"], "(each at delta/"),
    (["--starts", "4"], "each of the 4 walks of Learn then Test (at delta/4) stops"),
    (["--batch", "500"], "on a batch of 500, the fixed sequence of Learn then Test stops"),
])
def test_nothing_certified_by_each_procedure(tmp_path, capsys, argv, words):
    path = _readme_judge(tmp_path)
    capsys.readouterr()
    assert main(["guarantee", str(path), "-c", "confidence", "-y", "correct", "--target",
                 "0.1", *argv, "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["threshold"] is None and words in g["guarantee"], g["guarantee"]
    assert g["best_achievable_bound"] > 0.1
    assert f"{g['best_achievable']['threshold']:.6g}" in g["guarantee"]


def test_apply_of_a_policy_certifying_nothing_warns(tmp_path, capsys):
    """A policy with no threshold abstains on every record, and says so on stderr."""
    path = _readme_judge(tmp_path)
    assert main(["guarantee", str(path), "-c", "confidence", "-y", "correct", "--target",
                 "0.1", "--out", str(tmp_path / "policy")]) == 0
    policy = tmp_path / "policy" / "policy.json"
    assert json.loads(policy.read_text())["threshold"] is None
    capsys.readouterr()
    assert main(["guarantee", "apply", str(policy), str(path)]) == 0
    captured = capsys.readouterr()
    assert "answer 0, abstain 2,000" in captured.out
    assert f"warning: {policy} certifies no threshold: every record abstains" in captured.err


def test_the_report_of_nothing_certified_marks_where_the_method_stopped(tmp_path, capsys,
                                                                         monkeypatch):
    """With no threshold, the section's table gives the lowest bound the method reached and
    where, and its figure marks that point (answer rate, bound) instead of a certified one."""
    from confeval.report.sections import guarantee as section

    path = _readme_judge(tmp_path)
    assert main(["guarantee", str(path), "-c", "confidence", "-y", "correct", "--target",
                 "0.1", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    drawn = {}

    def figure(curve, **kwargs):
        drawn.update(kwargs)
        return "data:image/png;base64,"

    monkeypatch.setattr(section, "guarantee_figure", figure)
    html = section.render_guarantee({"results": {"judge.csv": g}})
    where = g["best_achievable"]
    assert drawn["chosen"] is None
    assert drawn["stopped"] == (where["answered"] / 2000, g["best_achievable_bound"])
    assert "lowest bound the method reached" in html and f"({where['answered']:,})" in html


def test_a_scoring_folder_given_as_records_names_the_file_it_scored(tmp_path):
    """A scoring command's run folder keeps its results, not the records it scored: a
    newcomer gave `confeval score --out runs/judge` to `guarantee` and was told the folder
    confeval wrote was "no run folder"."""
    from confeval._validation import RecordsError, record_file

    path = tmp_path / "judge.csv"
    path.write_text("confidence,correct\n" + "\n".join(f"0.{i % 9 + 1},{i % 2}"
                                                       for i in range(40)) + "\n")
    assert main(["score", str(path), "-c", "confidence", "-y", "correct", "--bootstrap", "0",
                 "--out", str(tmp_path / "run")]) == 0
    with pytest.raises(RecordsError, match=r"run: a folder without records\.jsonl \(the "
                                           r"results of `confeval score`, which keeps the "
                                           rf"records it scored where they were: {path}\)"):
        record_file(tmp_path / "run")
    with pytest.raises(RecordsError, match=r"a folder without records\.jsonl \(no run folder\)"):
        record_file(tmp_path)
