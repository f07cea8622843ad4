"""``confeval judge card`` as a library (:mod:`confeval.verbs.judge_card`): each aspect is the
number the command that owns it computes (agreement, intervals, guarantee, judge mean, judge
reruns / position / length), checked against scipy, ppi_py and hand computation where a
reference exists; aspects without their data are "not measured", said plainly; a rerun file
that disagrees is one error naming it; on the shared data, the three judges' cards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from confeval.judge import z_quantile
from confeval.records import RecordSet
from confeval.simulate import simulate_lengths, simulate_pairwise, simulate_reruns
from confeval.suites import SUITES
from confeval.verbs.guarantee import GuaranteeOptions, guarantee_file
from confeval.verbs.judge import JudgeMeanOptions, judge_mean_file
from confeval.verbs.judge_card import JudgeCardOptions, judge_card_file, judge_cards
from confeval.verbs.judge_tests import (
    JudgeLengthOptions,
    JudgePositionOptions,
    JudgeRerunsOptions,
    judge_length_records,
    judge_position_records,
    judge_reruns_records,
)

RESULTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / \
    "vlm-judge-uncertainty" / "results"
LP = [f"score_lp{k}" for k in range(1, 6)]


def _judge_file(tmp_path, n=240, seed=3, unlabelled=0, lengths=False) -> Path:
    """A simulated 1-5 judge (five reruns, the first its score; score log-probabilities) with
    a human score, ``unlabelled`` of them emptied; one row whose score is -1 (unparseable)."""
    frame = simulate_reruns(n, "sampling", seed=seed)
    frame["judge"] = frame["rerun_1"]
    frame.loc[0, "judge"] = -1
    if unlabelled:
        frame["gt_score"] = frame["gt_score"].astype(float)
        frame.loc[n - unlabelled:, "gt_score"] = np.nan
    if lengths:
        words = simulate_lengths(n, "verbose", seed=seed)["words"].to_numpy()
        frame["words"] = words
    path = tmp_path / f"judge{seed}.csv"
    frame.to_csv(path, index=False)
    return path


def _options(**values) -> JudgeCardOptions:
    base = dict(judge_col="judge", human_col="gt_score", logprob_cols="score_lp*",
                bootstrap=200, interval_seeds="1-3", tolerance=1.0, target=0.3)
    return JudgeCardOptions(**{**base, **values})


def test_ranking_points_are_scipys_and_both_intervals_are_one_bootstrap_loop(tmp_path):
    """Spearman and Kendall tau-b on the rows with a judge and a human score on the scale
    equal scipy's; their 95% intervals are the percentile interval of one loop over the same
    seeded resamples of those rows, each statistic computed by scipy."""
    path = _judge_file(tmp_path)
    card = judge_card_file(path, _options(bootstrap=300, seed=7))
    ranking = card["aspects"]["ranking"]
    frame = pd.read_csv(path)
    used = frame[frame["judge"].between(1, 5)]
    judge, human = used["judge"].to_numpy(float), used["gt_score"].to_numpy(float)
    assert ranking["n"] == len(used) == len(frame) - 1
    assert ranking["excluded"] == {"pred_score_off_scale": 1}
    assert ranking["spearman"]["estimate"] == pytest.approx(
        stats.spearmanr(judge, human).statistic, abs=1e-12)
    assert ranking["kendall"]["estimate"] == pytest.approx(
        stats.kendalltau(judge, human, variant="b").statistic, abs=1e-12)
    rng = np.random.default_rng(7)
    rho, tau = [], []
    for _ in range(300):
        idx = rng.integers(0, judge.size, size=judge.size)
        rho.append(stats.spearmanr(judge[idx], human[idx]).statistic)
        tau.append(stats.kendalltau(judge[idx], human[idx]).statistic)
    for key, reps in (("spearman", rho), ("kendall", tau)):
        low, high = np.quantile(reps, [0.025, 0.975])
        assert ranking[key]["low"] == pytest.approx(low, abs=1e-12)
        assert ranking[key]["high"] == pytest.approx(high, abs=1e-12)
    assert "percentile bootstrap" in ranking["interval"]
    assert "the same resamples" in ranking["interval"]


def test_each_aspect_is_the_number_of_the_command_it_reuses(tmp_path):
    path = _judge_file(tmp_path, unlabelled=60, lengths=True)
    pairs = tmp_path / "pairs.csv"
    simulate_pairwise(150, "first-slot", seed=2).to_csv(pairs, index=False)
    options = _options(reruns=(str(path),), rerun_score_cols="rerun_*", pairs=(str(pairs),),
                       length_col="words")
    card = judge_card_file(path, options, reruns=[str(path)], pairs=str(pairs))
    aspects = card["aspects"]
    assert all(a["measured"] for a in aspects.values())

    agreement = SUITES["agreement"]
    ag_opts = agreement.Options(pred_col="judge", gt_col="gt_score", min_score=1, max_score=5,
                                bootstrap=200, seed=0)
    ag = agreement.score(agreement.load(path, ag_opts), ag_opts)
    assert aspects["ranking"]["spearman"] == {"estimate": ag["spearman"],
                                              "low": ag["ci"]["spearman"]["low"],
                                              "high": ag["ci"]["spearman"]["high"]}
    assert aspects["ranking"]["kendall"]["estimate"] == ag["kendall"]

    intervals = SUITES["intervals"]
    iv_opts = intervals.Options(logprob_cols="score_lp*", label_col="gt_score",
                                pred_col="judge", methods=("ordinal_aps",), seeds=(1, 2, 3))
    iv = intervals.score(intervals.load(path, iv_opts), iv_opts)
    scoring = aspects["scoring"]
    assert scoring["coverage"] == iv["methods"]["ordinal_aps"]["coverage_raw"]
    assert scoring["width"] == iv["methods"]["ordinal_aps"]["width_raw"]
    assert (scoring["n"], scoring["seeds"], scoring["target"]) == (iv["n"], [1, 2, 3], 0.9)
    assert scoring["width_share"] == pytest.approx(scoring["width"]["mean"] / 4)

    certified = guarantee_file(path, GuaranteeOptions(target=0.3, delta=0.1,
                                                      suite="agreement"),
                               {"pred_col": "judge", "gt_col": "gt_score",
                                "logprob_cols": "score_lp*", "tolerance": 1.0})
    accept = aspects["accept"]
    assert certified["threshold"] is not None
    assert (accept["threshold"], accept["bound"], accept["n_calibration"]) == (
        certified["threshold"], certified["bound"], certified["n_calibration"])
    assert accept["answered"] == certified["calibration"]["answered"]
    assert accept["answer_rate"] == certified["calibration"]["answered"] / \
        certified["n_calibration"]
    assert accept["guarantee"] == certified["guarantee"]

    mean = judge_mean_file(path, JudgeMeanOptions(judge_col="judge", human_col="gt_score"))
    assert aspects["mean"]["method"] == "ppi++"
    for key in ("estimate", "low", "high", "width", "lambda"):
        assert aspects["mean"][key] == mean["methods"]["ppi++"][key]
    assert aspects["mean"]["classical"] == mean["methods"]["classical"]
    assert (aspects["mean"]["n_labelled"], aspects["mean"]["n_unlabelled"]) == (179, 60)

    reruns = judge_reruns_records([path], JudgeRerunsOptions(score_cols="rerun_*",
                                                             bootstrap=200))
    reruns.pop("items")
    assert {k: v for k, v in aspects["reruns"].items() if k not in ("measured", "files")} \
        == reruns
    position = judge_position_records(RecordSet.read(pairs),
                                      JudgePositionOptions(bootstrap=200))
    assert {k: v for k, v in aspects["position"].items()
            if k not in ("measured", "file")} == position
    # judge length of the rows on the scale: the -1 row excluded and counted
    kept = pd.read_csv(path).iloc[1:]
    kept.to_csv(tmp_path / "kept.csv", index=False)
    length = judge_length_records(RecordSet.read(tmp_path / "kept.csv"), JudgeLengthOptions(
        judge_col="judge", human_col="gt_score", length_col="words", bootstrap=200))
    got = aspects["length"]
    assert got["excluded"] == {"judge_score_off_scale": 1, "missing_human_score": 60}
    for key in ("judge_slope", "human_slope", "excess_slope", "judge_slope_at_fixed_human"):
        assert got[key] == length[key]


def test_a_fully_labelled_file_gives_the_humans_mean_or_what_n_labels_would(tmp_path):
    """Every item labelled: the classical mean of the human scores (ppi_py's
    classical_mean_ci, and mean +- z sd / sqrt(n) by hand) with a note; --labels N: the
    judge mean of N labels kept (seeded), the mean of all the human scores beside it."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test-only dependency")
    path = _judge_file(tmp_path)
    card = judge_card_file(path, _options(logprob_cols=None))
    mean = card["aspects"]["mean"]
    human = pd.read_csv(path)["gt_score"].to_numpy(float)[1:]   # the -1 row excluded
    low, high = ppi_py.classical_mean_ci(human, alpha=0.1)
    half = z_quantile(0.1) * human.std() / np.sqrt(human.size)
    assert mean["method"] == "classical" and mean["n_unlabelled"] == 0
    assert mean["estimate"] == pytest.approx(human.mean(), abs=1e-12)
    reference = (float(np.ravel(low)[0]), float(np.ravel(high)[0]))
    assert (mean["low"], mean["high"]) == pytest.approx(reference, abs=1e-10)
    assert (mean["low"], mean["high"]) == pytest.approx((human.mean() - half,
                                                         human.mean() + half), abs=1e-12)
    assert "every judged item has a human score" in mean["note"]
    assert "nothing is corrected" in card["verdicts"]["mean"]

    drawn = judge_card_file(path, _options(logprob_cols=None, labels=50, seed=4))["aspects"]
    kept = judge_mean_file(path, JudgeMeanOptions(judge_col="judge", human_col="gt_score",
                                                  keep_labels=50, seed=4))
    assert drawn["mean"]["estimate"] == kept["methods"]["ppi++"]["estimate"]
    assert drawn["mean"]["labels_drawn"] == kept["kept_labels"]
    assert drawn["mean"]["labels_drawn"]["human_mean_all_labelled"] == pytest.approx(
        human.mean(), abs=1e-12)


def test_what_is_not_measured_says_so_and_why(tmp_path):
    path = _judge_file(tmp_path)
    card = judge_card_file(path, _options(logprob_cols=None, bootstrap=0))
    aspects, verdicts = card["aspects"], card["verdicts"]
    for aspect, why in (("scoring", "--logprob-cols"), ("accept", "--logprob-cols"),
                        ("reruns", "--reruns FILE"), ("position", "--pairs FILE"),
                        ("length", "--answer-col or --length-col")):
        assert aspects[aspect] == {"measured": False, "why": aspects[aspect]["why"]}
        assert why in aspects[aspect]["why"]
        assert verdicts[aspect].startswith("not measured: ")
    # --bootstrap 0: the numbers, and no adjective
    assert aspects["ranking"]["spearman"]["low"] is None
    assert verdicts["ranking"].endswith("not judged (no interval)")
    # one labelled item: the mean cannot be estimated, and the card says why
    frame = pd.read_csv(path)
    frame.loc[2:, "gt_score"] = np.nan
    frame.to_csv(tmp_path / "one.csv", index=False)
    one = judge_card_file(tmp_path / "one.csv", _options(logprob_cols=None))
    assert not one["aspects"]["mean"]["measured"]
    assert "one labelled item" in one["aspects"]["mean"]["why"]
    assert not one["aspects"]["ranking"]["measured"]


def test_rerun_files_are_read_as_judge_reruns_reads_them_and_errors_name_the_file(tmp_path):
    a, b = _judge_file(tmp_path, seed=1), _judge_file(tmp_path, seed=2)
    options = _options(logprob_cols=None, reruns=(str(a),), rerun_score_cols="rerun_*")
    with pytest.raises(ValueError, match="--reruns: 1 file\\(s\\) for 2 judges"):
        judge_cards([("a", a), ("b", b)], options)
    # one file per rerun, one holding other items: judge reruns' own error, naming it
    frame = pd.read_csv(a)
    for r in (1, 2):
        part = frame[["item_id", f"rerun_{r}"]].rename(columns={f"rerun_{r}": "score"})
        if r == 2:
            part = part.iloc[10:]
        part.to_csv(tmp_path / f"r{r}.csv", index=False)
    files = (str(tmp_path / "r1.csv"), str(tmp_path / "r2.csv"))
    options = _options(logprob_cols=None, reruns=files, rerun_score_col="score",
                       rerun_id_col="item_id")
    with pytest.raises(ValueError, match="r2.csv"):
        judge_cards([("a", a)], options)
    # two judges, one rerun file each, in their order
    options = _options(logprob_cols=None, reruns=(str(a), str(b)),
                       rerun_score_cols="rerun_*", bootstrap=50)
    cards = judge_cards([("a", a), ("b", b)], options)
    assert [c["aspects"]["reruns"]["files"] for c in cards.values()] == [[str(a)], [str(b)]]


@pytest.mark.skipif(not RESULTS.is_dir(), reason=f"shared data not found at {RESULTS}")
def test_the_three_shared_judges_cards(tmp_path):
    """LLaVA-Critic, Phi-4 and Gemini on the same 5,717 items: ranking equal to scipy on the
    rows each scored; the corrected mean of 300 labels equal to ppi_py's PPI++ on the same
    labelled and unlabelled items (1e-10), its interval covering the mean of all the human
    scores; accept/abstain equal to `guarantee --suite agreement`."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test-only dependency")
    inputs = [(name, RESULTS / folder / "features_s2.csv")
              for name, folder in (("llava-critic", "v2"), ("phi4", "v2_phi4"),
                                   ("gemini", "v2_gemini"))]
    options = JudgeCardOptions(judge_col="parsed_score", human_col="gt_score",
                               logprob_cols="s2_lp*", labels=300, bootstrap=100,
                               interval_seeds="1-2", starts=4)
    cards = judge_cards(inputs, options)
    used = {"llava-critic": 5716, "phi4": 5653, "gemini": 5409}
    for name, path in inputs:
        aspects = cards[name]["aspects"]
        frame = pd.read_csv(path)
        ok = frame[frame["parsed_score"].between(1, 5)]
        judge, human = ok["parsed_score"].to_numpy(float), ok["gt_score"].to_numpy(float)
        assert aspects["ranking"]["n"] == used[name] == judge.size
        assert aspects["ranking"]["spearman"]["estimate"] == pytest.approx(
            stats.spearmanr(judge, human).statistic, abs=1e-12)
        assert aspects["ranking"]["kendall"]["estimate"] == pytest.approx(
            stats.kendalltau(judge, human).statistic, abs=1e-12)
        # the 300 labels drawn as judge mean draws them (seed 0), then ppi_py on them
        kept = np.random.default_rng(0).choice(judge.size, size=300, replace=False)
        hidden = np.setdiff1d(np.arange(judge.size), kept)
        lo, hi = ppi_py.ppi_mean_ci(human[kept], judge[kept], judge[hidden], alpha=0.1,
                                    lam=None)
        point = ppi_py.ppi_mean_pointestimate(human[kept], judge[kept], judge[hidden],
                                              lam=None)
        mean = aspects["mean"]
        assert mean["estimate"] == pytest.approx(float(np.ravel(point)[0]), abs=1e-10)
        assert (mean["low"], mean["high"]) == pytest.approx(
            (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-10)
        assert mean["low"] <= human.mean() <= mean["high"]
        certified = guarantee_file(path, GuaranteeOptions(target=0.2, delta=0.1, starts=4,
                                                          suite="agreement"),
                                   {"pred_col": "parsed_score", "gt_col": "gt_score",
                                    "logprob_cols": "s2_lp*", "tolerance": 1.0})
        assert aspects["accept"]["threshold"] == certified["threshold"]
        assert aspects["scoring"]["n"] == 5717
