"""Figures for the HTML report, rendered with matplotlib's Agg backend to embedded PNG."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")  # headless; must precede pyplot
import matplotlib.pyplot as plt
import numpy as np

__all__ = ["confusion_figure", "png_data_uri", "reliability_figure", "risk_coverage_figure"]


def png_data_uri(fig) -> str:
    """Encode a figure as a ``data:image/png;base64,...`` URI and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _grid(n: int, max_cols: int = 4):
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.1 * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return fig, axes.ravel()


def reliability_figure(diagrams: Mapping[str, Mapping]) -> str:
    """One reliability diagram per entry: accuracy per bin against the diagonal."""
    fig, axes = _grid(len(diagrams))
    for ax, (name, d) in zip(axes, diagrams.items()):
        edges = np.asarray(d["edges"], dtype=float)
        acc = np.asarray(d["accuracy"], dtype=float)
        conf = np.asarray(d["mean_confidence"], dtype=float)
        counts = np.asarray(d["counts"], dtype=float)
        widths = np.diff(edges)
        filled = counts > 0
        ax.bar(edges[:-1][filled], acc[filled], width=widths[filled], align="edge",
               color="#4C78A8", edgecolor="white", label="accuracy")
        ax.bar(edges[:-1][filled], conf[filled] - acc[filled], bottom=acc[filled],
               width=widths[filled], align="edge", color="#E45756", alpha=0.35, label="gap")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set(xlim=(0, 1), ylim=(0, 1), title=name, xlabel="confidence", ylabel="accuracy")
        ax.title.set_fontsize(9)
    axes[0].legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    return png_data_uri(fig)


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


def confusion_figure(confusions: Mapping[str, Mapping]) -> str:
    """Row-normalised confusion matrices (ground truth in rows)."""
    fig, axes = _grid(len(confusions))
    for ax, (name, c) in zip(axes, confusions.items()):
        mat = np.asarray(c["matrix"], dtype=float)
        norm = mat / np.maximum(mat.sum(axis=1, keepdims=True), 1)
        labels = [f"{v:g}" for v in c["labels"]]
        ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
        ax.set(xlabel="judge score", ylabel="ground truth", title=name)
        ax.title.set_fontsize(9)
        for (i, j), v in np.ndenumerate(mat):
            if v:
                ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=6,
                        color="white" if norm[i, j] > 0.5 else "black")
    fig.tight_layout()
    return png_data_uri(fig)
