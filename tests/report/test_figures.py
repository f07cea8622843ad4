"""Report figures read well: no tick label overlaps another on the same axis (matplotlib's
tight bounding boxes of the drawn figure), set sizes are whole-number ticks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from confeval.report import figures

NAMES = ["Visual Perception Error", "Reasoning Error", "Question Comprehension Error",
         "Knowledge Deployment Error", "No error"]


@pytest.fixture
def drawn(monkeypatch):
    """The figures a call draws, kept open instead of encoded."""
    kept = []

    def keep(fig):
        fig.canvas.draw()
        kept.append(fig)
        return "data:image/png;base64,"

    monkeypatch.setattr(figures, "png_data_uri", keep)
    yield kept
    import matplotlib.pyplot as plt

    for fig in kept:
        plt.close(fig)


def _overlaps(fig) -> list[tuple[str, str]]:
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            shown = [t for t in ticks if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent(renderer) for t in shown]
            for (a, box_a), (b, box_b) in itertools.combinations(zip(shown, boxes), 2):
                if box_a.overlaps(box_b):
                    found.append((a.get_text(), b.get_text()))
    return found


def test_confusion_labels_of_long_type_names_do_not_overlap(drawn):
    matrix = np.arange(25).reshape(5, 5)
    figures.confusion_figure({"model": {"matrix": matrix, "labels": NAMES, "columns": NAMES,
                                        "xlabel": "predicted", "ylabel": "gold"}})
    figures.confusion_figure({"judge": {"matrix": matrix, "labels": [1, 2, 3, 4, 5]}})
    assert [_overlaps(fig) for fig in drawn] == [[], []]


def test_set_size_bars_sit_on_whole_sizes(drawn):
    result = {"scores": {s: {"size_distribution": {"1": 40, "2": 30, "4": 5},
                             "coverage_by_size": {"1": 0.8, "2": 0.9, "4": 1.0}}
                         for s in ("lac", "aps", "raps")}}
    figures.set_size_figure(result, ["lac", "aps", "raps"])
    (fig,) = drawn
    for ax in fig.axes:
        assert list(ax.get_xticks()) == [1, 2, 4]
        centres = sorted({round(p.get_x() + p.get_width() / 2, 6) for p in ax.patches})
        # three scores side by side around each size: the middle one exactly on it
        assert {1.0, 2.0, 4.0} <= set(centres)
    assert _overlaps(fig) == []


def test_bars_rankings_and_rank_diagrams_have_no_overlapping_labels(drawn):
    measures = [f"measure {k}" for k in range(14)]
    figures.ranking_figure({m: 0.5 + k / 40 for k, m in enumerate(measures)}, {})
    figures.grouped_bars_figure({"recall": dict(zip(NAMES, [0.2, 0.4, 0.1, 0.3, 0.9])),
                                 "precision": dict(zip(NAMES, [0.3, 0.1, 0.5, 0.2, 0.8]))},
                                xlabel="share", title="Per error type")
    figures.rank_calibration_figure({m: {"confidence_rank": [0.1, 0.5, 0.9],
                                         "correctness_rank": [0.2, 0.4, 0.8]}
                                     for m in measures[:7]})
    assert [_overlaps(fig) for fig in drawn] == [[]] * (2 + 7)
    # one PNG per rank-calibration panel, each titled by its measure
    assert [[ax.get_title() for ax in fig.axes] for fig in drawn[2:]] == [[m] for m in
                                                                          measures[:7]]


ECE_BELOW_ITS_INTERVAL = {  # a seed of tests/cli/test_compare_auto.py's once-salted data
    "higher_is_better": False,
    "models": {"A": {"value": 0.41106436848640443, "low": 0.3209906538948417,
                     "high": 0.4999992206320166, "rank": 2, "rank_low": 2.0,
                     "rank_high": 2.0, "group": "b"},
               "B": {"value": 0.04263321533799171, "low": 0.04411747304722667,
                     "high": 0.23282531777396798, "rank": 1, "rank_low": 1.0,
                     "rank_high": 1.0, "group": "a"}},
    "pairs": [{"a": "A", "b": "B", "test": "paired_bootstrap", "p_holm": 0.002}]}
"""Binned ECE is biased upward on resamples: B's point estimate lies below its whole
percentile interval. Legitimate, and once a crash of the forest plot (a negative ``xerr``)."""


def _drawn_points_and_intervals(ax):
    """(x, y) of the point markers, and (low, high, y) of the interval lines, of one axis."""
    points = [(x, y) for line in ax.lines if line.get_marker() == "o"
              for x, y in line.get_xydata()]
    segments = [(seg[0][0], seg[1][0], seg[0][1]) for coll in ax.collections
                for seg in coll.get_segments()]
    return points, segments


def test_a_point_estimate_outside_its_interval_is_drawn_as_it_is(drawn):
    figures.forest_figure(ECE_BELOW_ITS_INTERVAL, "ece")
    figures.ranking_figure({"sl": 0.61, "deg": 0.70}, {"sl": {"low": 0.63, "high": 0.71},
                                                       "deg": {"low": 0.66, "high": 0.74}})
    forest, ranking = drawn
    points, segments = _drawn_points_and_intervals(forest.axes[0])
    rows = ECE_BELOW_ITS_INTERVAL["models"]
    # best (rank 1, B) on top: A at height 0, B at 1; each point and its interval as given
    assert points == [(rows["A"]["value"], 0), (rows["B"]["value"], 1)]
    assert segments == [(rows["A"]["low"], rows["A"]["high"], 0),
                        (rows["B"]["low"], rows["B"]["high"], 1)]
    assert points[1][0] < segments[1][0]                     # below its interval, shown so
    bars = [(p.get_width(), p.get_y() + p.get_height() / 2) for p in ranking.axes[0].patches]
    assert bars == [pytest.approx((0.70, 0)), pytest.approx((0.61, 1))]
    assert _drawn_points_and_intervals(ranking.axes[0])[1] == [(0.66, 0.74, 0),
                                                               (0.63, 0.71, 1)]


def test_a_figure_that_fails_half_way_leaves_no_figure_open():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    unreadable = {"higher_is_better": True, "models": {"A": {"rank": 1, "group": "a"}}}
    with pytest.raises(KeyError, match="value"):
        figures.forest_figure(unreadable, "accuracy")   # fails after its figure was opened
    assert plt.get_fignums() == before


def _table_named(first: str) -> dict:
    """ECE_BELOW_ITS_INTERVAL with model A renamed ``first`` and a long group string."""
    models = dict(ECE_BELOW_ITS_INTERVAL["models"])
    models[first] = {**models.pop("A"), "group": "abcdefghijklmnopqrstuvwxyz"}
    pairs = [{**p, "a": first} for p in ECE_BELOW_ITS_INTERVAL["pairs"]]
    return {**ECE_BELOW_ITS_INTERVAL, "models": models, "pairs": pairs}


def test_figure_labels_and_sizes_do_not_grow_with_a_names_length(drawn):
    """A 5,000-character name (once 523 s and a 48.7 MB report) is shortened to 40
    characters on every axis, its 26 group letters to 12: the figures are the size they are
    for a name of 40 characters, and what they draw about as wide."""
    for first in ("m" * 4_992 + "-7b-chat", "m" * 32 + "-7b-chat"):
        figures.forest_figure(_table_named(first), "ece")
        figures.pvalue_heatmap(_table_named(first), "ece")
    long_forest, long_heatmap, short_forest, short_heatmap = drawn
    shown = "m" * 26 + "…" + "m" * 5 + "-7b-chat"
    labels = [t.get_text() for t in long_forest.axes[0].get_yticklabels()]
    assert labels == [f"{shown}  (abcdefgh…xyz)", "B  (a)"]
    assert [t.get_text() for t in long_heatmap.axes[0].get_xticklabels()] == ["B", shown]
    for long, short in ((long_forest, short_forest), (long_heatmap, short_heatmap)):
        assert tuple(long.get_size_inches()) == tuple(short.get_size_inches())
        drawn_width = long.get_tightbbox(long.canvas.get_renderer()).width   # inches
        assert drawn_width < 1.5 * short.get_tightbbox(short.canvas.get_renderer()).width


def test_reliability_bars_carry_their_counts_and_the_legend_names_the_overlap(drawn):
    """A bar of accuracy 1.0 from 3 answers says 3; the colour where the gap bar lies over
    the accuracy bar (confidence below accuracy) is in the legend; fifteen counts of four
    digits side by side do not overlap."""
    figures.reliability_figure({"judge": {"edges": [0, 0.5, 1], "accuracy": [0.2, 1.0],
                                          "mean_confidence": [0.3, 0.9],
                                          "counts": [1234, 3]}})
    edges = np.linspace(0, 1, 16)
    figures.reliability_figure({"busy": {"edges": edges, "accuracy": edges[1:],
                                         "mean_confidence": edges[1:] - 0.03,
                                         "counts": [1000 + k for k in range(15)]}})
    small, legend, busy, _ = drawn    # each panel, then its legend, a PNG of its own
    assert [t.get_text() for t in small.axes[0].texts] == ["1,234", "3"]
    labels = [t.get_text() for t in legend.legends[0].get_texts()]
    assert labels == ["accuracy", "confidence above accuracy",
                      "confidence below accuracy (overlap)", "numbers: answers in the bin"]
    renderer = busy.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in busy.axes[0].texts]
    assert len(boxes) == 15
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    assert _overlaps(small) == [] and _overlaps(busy) == []


@pytest.mark.parametrize("alpha, p, expected", [
    (0.05, 0.0009, 0), (0.05, 0.001, 1), (0.05, 0.0099, 1), (0.05, 0.01, 2),
    (0.05, 0.0499, 2), (0.05, 0.05, 3), (0.05, 0.06, 3), (0.05, 1.0, 3),
    (0.05, float("nan"), None), (0.01, 0.005, 1), (0.01, 0.02, 2), (0.1, 0.07, 3),
    (0.1, 0.1, 4)])
def test_p_values_fall_in_the_bins_of_the_conventional_levels(alpha, p, expected):
    """p = 0.06 and p = 0.005 never share a colour: bins at 0.001, 0.01, 0.05 (and the
    comparison's own level), p at or above the level "not separated"."""
    assert figures.p_bin(p, alpha) == expected


def _luminance(colour: str) -> float:
    """WCAG relative luminance of a '#rrggbb' colour."""
    channels = [int(colour[k:k + 2], 16) / 255 for k in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("alpha, bins", [(0.001, 2), (0.005, 3), (0.01, 3), (0.05, 4), (0.1, 5)])
def test_the_bins_get_lighter_as_p_grows_so_they_read_in_grey(alpha, bins):
    """One hue stepping in lightness: the bins are ordered in grey (and so for every colour
    vision), each step at least 1.5 times the luminance of the one before."""
    colours = figures.bin_colours(alpha)
    assert len(colours) == len(figures.p_bins(alpha)) == bins
    steps = [_luminance(b) / _luminance(a) for a, b in itertools.pairwise(colours)]
    assert min(steps) >= 1.5, steps


def test_the_heatmap_draws_each_pair_in_its_bin_and_an_untested_pair_hatched(drawn):
    from matplotlib.colors import to_hex

    def row(rank):
        return {"value": 1.0 / rank, "low": 0, "high": 1, "rank": rank, "group": "a"}

    table = {"higher_is_better": True, "models": {"A": row(1), "B": row(2), "C": row(3)},
             "pairs": [{"a": "A", "b": "B", "p_holm": 0.06},
                       {"a": "A", "b": "C", "p_holm": 0.004},
                       {"a": "B", "b": "C", "p_holm": None, "untested": "no_variance"}]}
    figures.pvalue_heatmap(table, "ece")
    (fig,) = drawn
    ax = fig.axes[0]
    image = ax.images[0]
    colour = {(i, j): to_hex(image.cmap(image.norm(image.get_array()[i, j])))
              for i in range(3) for j in range(3) if not image.get_array().mask[i, j]}
    assert colour == {(0, 1): figures.NOT_SEPARATED_COLOUR,
                      (1, 0): figures.NOT_SEPARATED_COLOUR,
                      (0, 2): figures.SEPARATED_COLOURS[1],
                      (2, 0): figures.SEPARATED_COLOURS[1]}
    hatched = {(round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in ax.patches
               if p.get_hatch()}
    assert hatched == {(1, 2), (2, 1)}
    assert sorted(t.get_text() for t in ax.texts) == [".004", ".004", ".06", ".06", "–", "–"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "p < 0.001", "0.001 ≤ p < 0.01", "0.01 ≤ p < 0.05", "p ≥ 0.05: not separated",
        "no p-value (untested)"]
    # the legend sits above the matrix, titled by it (on a phone the figure scrolls sideways)
    assert ax.get_legend().get_title().get_text() == (
        "ece: Holm-adjusted p-values, pairs separated at p < 0.05")
    assert ax.get_legend().get_window_extent().y0 > ax.get_window_extent().y1
