"""Figures for the HTML report, rendered with matplotlib's Agg backend to embedded PNG."""

from __future__ import annotations

import base64
import functools
import io
import math
from collections.abc import Mapping

import numpy as np

from .._text import display_name, display_names


class _Pyplot:
    """matplotlib.pyplot, imported (with the headless Agg backend, which must precede it) at
    the first figure: a command that only prints a terminal table does not pay for it."""

    _module = None

    def __getattr__(self, name: str):
        if _Pyplot._module is None:  # once, as the eager import did
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot

            _Pyplot._module = matplotlib.pyplot
        return getattr(_Pyplot._module, name)


plt = _Pyplot()

__all__ = ["P_LEVELS", "bin_colours", "confusion_figure", "forest_figure", "guarantee_figure",
           "line_figure", "Panels", "p_bin", "p_bins", "png_data_uri",
           "pvalue_heatmap", "rank_calibration_figure", "ranking_figure",
           "reliability_figure", "risk_coverage_figure", "roc_figure", "violation_histogram"]


def _plain_text(draw):
    """Draw with mathtext off: a user's string ("$\\foo$", common in step data) is shown as
    written, never parsed (an unknown TeX symbol would abort the report). A context, so the
    caller's matplotlib settings are untouched. A figure whose drawing fails is closed: the
    report goes on without it (:func:`confeval.report.html.chart`), and pyplot would keep it
    open for the rest of the process."""
    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        opened = set(plt.get_fignums())
        try:
            with plt.rc_context({"text.parse_math": False}):
                return draw(*args, **kwargs)
        except Exception:
            for number in set(plt.get_fignums()) - opened:
                plt.close(number)
            raise
    return wrapper


def png_data_uri(fig) -> str:
    """Encode a figure as a ``data:image/png;base64,...`` URI and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


PANEL_SIZE = (3.2, 3.1)
"""Inches of one panel of a many-panel figure (352 px wide at the PNG's 110 dpi): a phone's
screen holds one at its drawn size."""


class Panels(list):
    """A figure of several panels drawn as one PNG each, and its legend as one more: a list of
    (name, data URI), the legend's name ``"legend"``. The page lays them out side by side,
    wrapping onto as many rows as its width needs (:func:`confeval.report.html.chart`): one
    PNG of all the panels side by side would be shrunk, or cut, on a narrow screen."""


def _panels(names, draw_panel) -> Panels:
    """One figure of :data:`PANEL_SIZE` per name, ``draw_panel(ax, name)`` drawing it."""
    out = Panels()
    for name in names:
        fig, ax = plt.subplots(figsize=PANEL_SIZE)
        draw_panel(ax, name)
        fig.tight_layout()
        out.append((str(name), png_data_uri(fig)))
    return out


def _legend_png(handles, ncol: int = 1) -> str:
    """A legend alone, as its own small PNG (one column: narrower than a panel)."""
    fig = plt.figure(figsize=(PANEL_SIZE[0], 0.2 * math.ceil(len(handles) / ncol) + 0.1))
    fig.legend(handles=handles, loc="center", ncol=ncol, fontsize=7, frameon=False)
    return png_data_uri(fig)


ACCURACY_COLOUR = "#4C78A8"
GAP_COLOUR = "#E45756"
GAP_ALPHA = 0.35


def _blend(front: str, back: str, alpha: float) -> tuple[float, float, float]:
    """The colour ``front`` drawn with ``alpha`` over ``back``: what a reader sees where a
    translucent gap bar lies over an accuracy bar."""
    import matplotlib.colors as colours

    f, b = colours.to_rgb(front), colours.to_rgb(back)
    return tuple(alpha * x + (1 - alpha) * y for x, y in zip(f, b))


@_plain_text
def reliability_figure(diagrams: Mapping[str, Mapping]) -> Panels:
    """One reliability diagram per entry (a :class:`Panels`): accuracy per bin against the
    diagonal, the gap to the bin's mean confidence, and above each bar the number of answers
    in its bin (a bar of 1.0 may be three answers). The legend, after the panels, names each
    colour, the overlap of the gap and the accuracy bar (confidence below accuracy) included."""
    from matplotlib.patches import Patch

    def panel(ax, name):
        d = diagrams[name]
        edges = np.asarray(d["edges"], dtype=float)
        acc = np.asarray(d["accuracy"], dtype=float)
        conf = np.asarray(d["mean_confidence"], dtype=float)
        counts = np.asarray(d["counts"], dtype=float)
        widths = np.diff(edges)
        filled = counts > 0
        ax.bar(edges[:-1][filled], acc[filled], width=widths[filled], align="edge",
               color=ACCURACY_COLOUR, edgecolor="white")
        ax.bar(edges[:-1][filled], conf[filled] - acc[filled], bottom=acc[filled],
               width=widths[filled], align="edge", color=GAP_COLOUR, alpha=GAP_ALPHA)
        _bin_counts(ax, edges, widths, acc, conf, counts)
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        # room above the bars for their counts; the scale itself stops at 1
        ax.set(xlim=(0, 1), ylim=(0, 1.16), yticks=np.linspace(0, 1, 6), title=name,
               xlabel="confidence", ylabel="accuracy")
        ax.title.set_fontsize(9)

    out = _panels(diagrams, panel)
    handles = [Patch(color=ACCURACY_COLOUR, label="accuracy"),
               Patch(color=_blend(GAP_COLOUR, "white", GAP_ALPHA),
                     label="confidence above accuracy"),
               Patch(color=_blend(GAP_COLOUR, ACCURACY_COLOUR, GAP_ALPHA),
                     label="confidence below accuracy (overlap)"),
               Patch(color="none", label="numbers: answers in the bin")]
    out.append(("legend", _legend_png(handles)))
    return out


def _bin_counts(ax, edges, widths, acc, conf, counts) -> None:
    """Each filled bin's count, upright above the taller of its two bars."""
    for left, width, a, c, n in zip(edges[:-1], widths, acc, conf, counts):
        if n > 0:
            ax.text(left + width / 2, max(a, c) + 0.015, f"{int(n):,}", rotation=90,
                    ha="center", va="bottom", fontsize=6, color="0.25")


@_plain_text
def risk_coverage_figure(curves: Mapping[str, Mapping]) -> str:
    """Selective risk against coverage, all entries on one axis."""
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for name, c in curves.items():
        ax.plot(c["coverage"], c["risk"], lw=1.6, label=name)
    ax.set(xlabel="coverage (share of answers kept)", ylabel="risk (error rate of kept)",
           xlim=(0, 1), ylim=(0, None), title="Risk-coverage")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def confusion_figure(confusions: Mapping[str, Mapping]) -> Panels:
    """Row-normalised confusion matrices (ground truth in rows), one panel each (a
    :class:`Panels`)."""

    def panel(ax, name):
        c = confusions[name]
        mat = np.asarray(c["matrix"], dtype=float)
        norm = mat / np.maximum(mat.sum(axis=1, keepdims=True), 1)
        labels = [_tick(v) for v in c["labels"]]
        columns = [_tick(v) for v in c.get("columns", c["labels"])]
        ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
        # words side by side overlap (type names, a 1-5 scale's scores do not): slant them
        # (upright, so that no label's box reaches over its neighbour's)
        slant = len(columns) > 5 or max(map(len, columns), default=0) > 3
        ax.set_xticks(range(len(columns)), columns, rotation=90 if slant else 0, fontsize=7)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set(xlabel=c.get("xlabel", "judge score"), ylabel=c.get("ylabel", "ground truth"),
               title=name)
        ax.title.set_fontsize(9)
        for (i, j), v in np.ndenumerate(mat):
            if v:
                ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=6,
                        color="white" if norm[i, j] > 0.5 else "black")

    return _panels(confusions, panel)


def _tick(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _mean(value):
    return value.get("mean") if isinstance(value, dict) else value


@_plain_text
def accuracy_vs_set_size_figure(results: Mapping[str, Mapping], scores: list[str]) -> str:
    """Scatter of accuracy against mean set size, one point per result and score."""
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    markers = "osD^vP*X"
    for j, score in enumerate(scores):
        xs = [_mean(r["scores"][score]["set_size"]) for r in results.values()]
        ys = [_mean(r["accuracy"]) for r in results.values()]
        ax.scatter(xs, ys, marker=markers[j % len(markers)], label=score, alpha=0.75)
    if len(results) <= 12:
        first = scores[0]
        for name, r in results.items():
            label = str(name).rsplit("/", 1)[-1].split(".")[0]
            ax.annotate(label, (_mean(r["scores"][first]["set_size"]), _mean(r["accuracy"])),
                        fontsize=6, alpha=0.7, xytext=(3, 3), textcoords="offset points")
    ax.set(xlabel="mean set size", ylabel="accuracy (top-1)",
           title="Accuracy vs set size at guaranteed coverage")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def set_size_figure(result: Mapping, scores: list[str]) -> str:
    """Set-size histogram and coverage by set size for each score of one result."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    width = 0.8 / max(len(scores), 1)
    every_size: set[int] = set()
    for j, score in enumerate(scores):
        s = result["scores"][score]
        dist = {int(k): v for k, v in (s.get("size_distribution") or {}).items()}
        cov = {int(k): v for k, v in (s.get("coverage_by_size") or {}).items()}
        total = sum(dist.values()) or 1
        sizes = sorted(dist)
        every_size |= set(sizes) | set(cov)
        shift = (j - (len(scores) - 1) / 2) * width  # the bars of a size centred on it
        axes[0].bar([x + shift for x in sizes], [dist[x] / total for x in sizes],
                    width=width, label=score)
        axes[1].bar([x + shift for x in sorted(cov)], [cov[x] for x in sorted(cov)],
                    width=width, label=score)
    for ax in axes:  # set sizes are whole numbers: one tick each, none between
        ax.set_xticks(sorted(every_size))
    axes[0].set(xlabel="set size", ylabel="share of questions", title="Set sizes")
    axes[1].set(xlabel="set size", ylabel="coverage", ylim=(0, 1.05), title="Coverage by size")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def grouped_bars_figure(values: Mapping[str, Mapping[str, float]], *, xlabel: str,
                        title: str, sort: bool = True) -> str:
    """Horizontal bars: one bar per (group, series), one colour per series; groups sorted by
    the first series' value unless ``sort`` is False. Missing values are left blank."""
    series = list(values)
    groups = list(dict.fromkeys(g for s in series for g in values[s]))
    if sort:
        groups.sort(key=lambda g: values[series[0]].get(g, float("nan")))
    fig, ax = plt.subplots(figsize=(6.4, 0.32 * len(groups) * max(1, len(series) / 2) + 1.2))
    height = 0.8 / len(series)
    for j, name in enumerate(series):
        ax.barh([i + j * height for i in range(len(groups))],
                [values[name].get(g, float("nan")) for g in groups], height=height, label=name)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(groups))], groups, fontsize=7)
    ax.set(xlabel=xlabel, title=title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # never over a bar
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def width_by_group_figure(widths: Mapping[str, Mapping[str, float]]) -> str:
    """Mean raw interval width per group (task), one colour per method, groups sorted by the
    first method's width (the VLM-judge paper's Figure 1 analogue)."""
    return grouped_bars_figure(widths, xlabel="mean raw interval width",
                               title="Interval width by group")


@_plain_text
def roc_figure(curves: Mapping[str, Mapping]) -> str:
    """ROC curves (true against false positive rate), all entries on one axis."""
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for name, c in curves.items():
        ax.plot(c["fpr"], c["tpr"], lw=1.4, label=name)
    ax.plot([0, 1], [0, 1], "k--", lw=1, label="chance")
    ax.set(xlabel="false positive rate", ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1),
           title="ROC: the gold option against the others")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def rank_calibration_figure(diagrams: Mapping[str, Mapping]) -> Panels:
    """One rank-calibration diagram per entry: the relative rank of each confidence bin
    against the relative rank of its mean correctness (on the diagonal = rank-calibrated); one
    panel each (a :class:`Panels`)."""

    def panel(ax, name):
        d = diagrams[name]
        x = np.asarray(d["confidence_rank"], dtype=float)
        y = np.asarray(d["correctness_rank"], dtype=float)
        ax.bar(x, y, width=1.0 / max(x.size, 1), color="#4C78A8", edgecolor="white")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(xlim=(0, 1), ylim=(0, 1), title=name, xlabel="confidence rank",
               ylabel="correctness rank")
        ax.title.set_fontsize(9)

    return _panels(diagrams, panel)


def _intervals(ax, y, low, high, *, color: str) -> None:
    """Horizontal 95% intervals at heights ``y``, each a line from its low to its high end with
    a cap at both; those with an undefined end are left out. Drawn from the ends, never as
    lengths around the point estimate (errorbar's ``xerr``): a point estimate outside its
    percentile bootstrap interval is legitimate (binned ECE is biased, so its resamples can
    all lie above it) and must be drawn as it is, where ``xerr`` would be negative."""
    y, low, high = (np.asarray(v, dtype=float) for v in (y, low, high))
    ok = np.isfinite(low) & np.isfinite(high)
    ax.hlines(y[ok], low[ok], high[ok], color=color, lw=1.2)
    for ends in (low[ok], high[ok]):
        ax.plot(ends, y[ok], "|", color=color, ms=6)


@_plain_text
def ranking_figure(values: Mapping[str, float], intervals: Mapping[str, Mapping],
                   *, chance: float = 0.5, xlabel: str = "AUROC") -> str:
    """Measures as horizontal bars in ranking order (best on top), with 95% intervals and the
    chance level."""
    names = list(values)[::-1]
    fig, ax = plt.subplots(figsize=(5.6, 0.34 * len(names) + 1.2))
    centre = [values[n] for n in names]
    low = [(intervals.get(n) or {}).get("low", values[n]) for n in names]
    high = [(intervals.get(n) or {}).get("high", values[n]) for n in names]
    ax.barh(range(len(names)), centre, color="#4C78A8")
    _intervals(ax, np.arange(len(names)), low, high, color="k")
    ax.axvline(chance, color="k", ls="--", lw=1, label=f"chance ({chance:g})")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set(xlabel=xlabel, xlim=(0, 1), title="Ranking of the measures")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def line_figure(series: Mapping[str, tuple], *, xlabel: str, ylabel: str, title: str) -> str:
    """One line with markers per entry: ``name -> (x values, y values)``; missing y skipped."""
    fig, ax = plt.subplots(figsize=(5.4, 3.6))
    for name, (x, y) in series.items():
        pts = [(a, b) for a, b in zip(x, y) if b is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", lw=1.4, label=name)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


_GROUP_WIDTH = 12
"""Characters of a model's group letters shown beside its name in a forest plot."""


@_plain_text
def forest_figure(table: Mapping, metric: str) -> str:
    """One metric's forest plot: each model's value with its 95% interval, best on top, the
    group letters beside the names (names and letters shortened to a bounded length)."""
    ranked = sorted(table["models"].items(), key=lambda kv: kv[1]["rank"])[::-1]
    names = display_names(table["models"])
    fig, ax = plt.subplots(figsize=(5.6, 0.26 * len(ranked) + 1.1))
    y = np.arange(len(ranked))
    values = np.array([row["value"] for _, row in ranked], dtype=float)
    low = np.array([row["low"] for _, row in ranked], dtype=float)
    high = np.array([row["high"] for _, row in ranked], dtype=float)
    _intervals(ax, y, low, high, color="#4C78A8")
    shown = np.isfinite(values)
    ax.plot(values[shown], y[shown], "o", color="#4C78A8", ms=4)
    # labels of bounded length whatever the names (the report's tables have them whole)
    ax.set_yticks(y, [f"{names[name]}  ({display_name(row['group'] or '–', _GROUP_WIDTH)})"
                      for name, row in ranked], fontsize=7)
    from ..metrics.compare import direction_text

    arrow = direction_text(table)
    ax.set(xlabel=f"{metric} ({arrow})", title=metric)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


P_LEVELS = (0.001, 0.01, 0.05)
"""The conventional levels a p-value heat map separates (with the comparison's own level)."""

SEPARATED_COLOURS = ("#08306b", "#2171b5", "#4292c6", "#9ecae1")
"""ColorBrewer's sequential Blues, darkest first: the bins of p-values below the level, the
smallest p darkest (as many as there are such bins, from the first). One hue in steps of
lightness reads the same to every kind of colour vision, and in grey: each colour, and
:data:`NOT_SEPARATED_COLOUR` after them, at least 1.5 times the luminance of the one
before."""

NOT_SEPARATED_COLOUR = "#f0f0f0"
"""A pair at or above the level (no separation): near white, apart from every blue."""

UNTESTED_HATCH = "////"
"""A pair without a p-value: white, hatched grey, marked "–"."""


def p_bins(alpha: float = 0.05) -> list[tuple[float, float, str]]:
    """The heat map's bins of Holm-adjusted p-values: (low, high, label), low <= p < high,
    from the smallest p: one bin per conventional level below ``alpha``
    (:data:`P_LEVELS`), then "not separated", p >= ``alpha`` (up to 1, included).

    >>> [label for _, _, label in p_bins(0.05)]
    ['p < 0.001', '0.001 ≤ p < 0.01', '0.01 ≤ p < 0.05', 'p ≥ 0.05: not separated']
    >>> [label for _, _, label in p_bins(0.02)]
    ['p < 0.001', '0.001 ≤ p < 0.01', '0.01 ≤ p < 0.02', 'p ≥ 0.02: not separated']
    """
    edges = sorted({level for level in P_LEVELS if level < alpha} | {alpha})
    bins, low = [], 0.0
    for edge in edges:
        label = f"p < {edge:g}" if low == 0 else f"{low:g} ≤ p < {edge:g}"
        bins.append((low, edge, label))
        low = edge
    bins.append((alpha, math.inf, f"p ≥ {alpha:g}: not separated"))
    return bins


def bin_colours(alpha: float = 0.05) -> list[str]:
    """The colour of each bin of :func:`p_bins`."""
    return [*SEPARATED_COLOURS[:len(p_bins(alpha)) - 1], NOT_SEPARATED_COLOUR]


def p_bin(p: float, alpha: float = 0.05) -> int | None:
    """The index of ``p``'s bin in :func:`p_bins` (None for no p-value)."""
    if p is None or not math.isfinite(p):
        return None
    return next(i for i, (low, high, _) in enumerate(p_bins(alpha)) if low <= p < high)


def _p_label(p: float, alpha: float) -> str:
    """A p-value in a heat map cell: "<.001", "1", else two significant digits without the
    leading zero (".06", ".0041"), more where two would round it across ``alpha``."""
    if p < 0.001:
        return "<.001"
    if p >= 1:
        return "1"
    for digits in range(2, 7):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            break
    return text.removeprefix("0")


@_plain_text
def pvalue_heatmap(table: Mapping, metric: str, alpha: float = 0.05) -> str:
    """Holm-adjusted p-values of every pair of models, models in rank order, in the bins of
    :func:`p_bins` (blue, darker for smaller p, below ``alpha``; near white at or above it),
    under a legend naming each bin and the level; the diagonal blank; a pair without a
    p-value white, hatched and marked "–"; each cell's p-value written in it (up to 12
    models)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    names = [n for n, _ in sorted(table["models"].items(), key=lambda kv: kv[1]["rank"])]
    shown = display_names(names)
    labels = [shown[n] for n in names]
    index = {n: i for i, n in enumerate(names)}
    bins = p_bins(alpha)
    colours = bin_colours(alpha)
    p = np.full((len(names), len(names)), np.nan)
    untested = np.zeros(p.shape, dtype=bool)
    for pair in table["pairs"]:
        i, j = index[pair["a"]], index[pair["b"]]
        value = pair.get("p_holm")
        if value is None or not math.isfinite(value):
            untested[i, j] = untested[j, i] = True
        else:
            p[i, j] = p[j, i] = value
    category = np.full(p.shape, np.nan)
    for (i, j), value in np.ndenumerate(p):
        if math.isfinite(value):
            category[i, j] = p_bin(float(value), alpha)
    # room for the tick labels, which are at most NAME_WIDTH characters (about 0.06 in each)
    size = 0.26 * len(names) + 1.8 + 0.06 * max(0, max(map(len, labels), default=0) - 12)
    fig, ax = plt.subplots(figsize=(size + 1.0, size + 0.6))
    cmap = ListedColormap(colours).with_extremes(bad="white")
    ax.imshow(np.ma.masked_invalid(category), cmap=cmap, vmin=-0.5,
              vmax=len(colours) - 0.5, interpolation="nearest")
    for i, j in zip(*np.nonzero(untested)):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch=UNTESTED_HATCH,
                               edgecolor="#969696", linewidth=0))
    ax.set_xticks(range(len(names)), labels, rotation=90, fontsize=6)
    ax.set_yticks(range(len(names)), labels, fontsize=6)
    if len(names) <= 12:
        for (i, j), value in np.ndenumerate(p):
            if math.isfinite(value):
                dark = category[i, j] < min(2, len(bins) - 1)   # the two darkest blues
                ax.text(j, i, _p_label(float(value), alpha), ha="center", va="center", fontsize=6,
                        color="white" if dark else "black")
            elif untested[i, j]:
                ax.text(j, i, "–", ha="center", va="center", fontsize=7)
    handles = [Patch(facecolor=c, edgecolor="#bdbdbd", label=label)
               for c, (_, _, label) in zip(colours, bins)]
    if untested.any():
        handles.append(Patch(facecolor="white", edgecolor="#969696", hatch=UNTESTED_HATCH,
                             label="no p-value (untested)"))
    # above the matrix, titled by it: on a phone the figure scrolls sideways, and a legend
    # to its right would be out of sight
    legend = ax.legend(handles=handles, title=f"{metric}: Holm-adjusted p-values, pairs "
                       f"separated at p < {alpha:g}", fontsize=6, title_fontsize=8,
                       loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2, frameon=False,
                       borderaxespad=0.0)
    legend._legend_box.align = "left"   # the title over the first column, as a heading
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def guarantee_figure(curve: Mapping, *, target: float, chosen: tuple[float, float] | None,
                     test: tuple[float, float] | None, risk_label: str,
                     stopped: tuple[float, float] | None = None) -> str:
    """The calibration risk-coverage curve, each threshold's own upper bound (dashed), the
    target, the certified threshold (its answer rate and certified bound) and, with a split,
    the test half's point; with nothing certified, ``stopped``: where the method reached its
    lowest bound (the answer rate there and that bound, at the level it tested — above the
    dashed curve, which corrects for nothing), and the title says none is certified."""
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    cov = np.asarray(curve["coverage"], dtype=float)
    risk = np.array([np.nan if r is None else r for r in curve["risk"]], dtype=float)
    ax.plot(cov, risk, lw=1.6, label="calibration risk")
    ax.plot(cov, curve["bound"], lw=1.2, ls="--", label="upper bound of each threshold")
    ax.axhline(target, color="0.3", lw=1, ls=":", label=f"target {target:g}")
    if chosen is not None:
        ax.plot(*chosen, marker="o", ms=8, color="C3", ls="none",
                label="certified threshold (bound)")
    if stopped is not None:
        ax.plot(*stopped, marker="s", ms=7, mfc="none", mew=1.8, color="C3", ls="none",
                label="where the method stopped (its bound): none certified")
    if test is not None:
        ax.plot(*test, marker="x", ms=9, mew=2, color="C2", ls="none", label="test half")
    top = np.nanmax([np.nanmax(risk) if np.isfinite(risk).any() else 0, target]) * 1.6
    ax.set(xlabel="coverage (share answered)", ylabel=risk_label, xlim=(0, 1),
           ylim=(0, min(1.0, max(top, 0.05))),
           title="Risk-coverage, certified" if chosen is not None or stopped is None
           else "Risk-coverage: no threshold certified")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def violation_histogram(risks: list[float], *, target: float) -> str:
    """The test half's risk over the repeated splits, the target marked."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    values = np.asarray(risks, dtype=float)
    ax.hist(values, bins=min(30, max(5, values.size // 3)), color="C0", alpha=0.8)
    ax.axvline(target, color="C3", lw=1.5, ls="--", label=f"target {target:g}")
    ax.set(xlabel="test-half risk of the certified threshold", ylabel="splits",
           title=f"{int((values > target).sum())} of {values.size} splits above the target")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return png_data_uri(fig)
