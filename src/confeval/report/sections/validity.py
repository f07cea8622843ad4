"""The report section of ``confeval guarantee apply --report``: does the policy's promise still
apply to the new records? The verdict in one sentence, the new confidences' distribution beside
the calibration one, the test's numbers, the conformal test martingale's path against its alarm
level 1/alpha, and — when records carried labels — the realised error's confidence sequence
against the target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..figures import _plain_text, plt, png_data_uri
from ..html import _table, chart, esc, fmt, register_section

__all__ = ["render_validity"]


@register_section("validity")
def render_validity(section: Mapping[str, Any]) -> str:
    return "".join(_one(name, res) for name, res in section["results"].items())


def _one(name: str, res: Mapping[str, Any]) -> str:
    validity, counts = res["validity"], res["counts"]
    parts = [f"<h3>{esc(name)}</h3>", f"<p><strong>{esc(validity['sentence'])}</strong></p>"]
    risk = validity.get("risk")
    if risk:
        parts.append(f"<p><strong>{esc(risk['sentence'])}</strong></p>")
    if validity.get("note"):
        parts.append(f"<p class='excluded'>{esc(validity['note'])}</p>")
    parts.append(_numbers(validity, counts))
    if len(res.get("batches") or []) > 1 and validity.get("batches"):
        parts.append(_batches(validity["batches"]))
    if res.get("distributions"):
        parts.append(chart(f"confidence distributions of {name}", distribution_figure,
                           res["distributions"]))
    stream = validity.get("stream")
    if stream and stream["path"]["item"]:
        parts.append(chart(f"test martingale of {name}", martingale_figure, stream))
    if risk and risk.get("bounds") and risk["bounds"]["item"]:
        parts.append(chart(f"error confidence sequence of {name}", risk_figure, risk))
    return "".join(parts)


def _numbers(validity: Mapping[str, Any], counts: Mapping[str, Any]) -> str:
    stream = validity.get("stream") or {}
    done = [["answered / abstained", f"{counts['answer']:,} / {counts['abstain']:,}"]] \
        if "answer" in counts else \
        [["predicted (with the truth)", f"{counts['predicted']:,} ({counts['labelled']:,})"]]
    rows = [*done,
            ["new items tested", fmt(validity.get("n_new"))],
            ["calibration items", fmt(validity.get("n_calibration"))],
            ["decided by", esc(validity.get("checked_by") or "–")],
            ["values tested", esc(validity.get("quantity") or "confidence")],
            ["test", esc(validity.get("test") or "–")],
            ["p-value", fmt(validity.get("p_value"), 4)],
            ["alpha", fmt(validity.get("alpha"))],
            ["holds (no evidence of a shift)", esc(validity.get("holds"))],
            ["martingale peak", fmt(stream.get("max"), 3)],
            ["martingale alarm (new item)", "–" if stream.get("alarm") is None
             else f"{stream['alarm'] + 1:,} ({esc(stream['alarm_at']['file'])}, row "
                  f"{stream['alarm_at']['row']:,})"]]
    return _table(["value"], rows, first="quantity")


def _batches(tests: list[Mapping[str, Any]]) -> str:
    rows = [[esc(t["file"]), fmt(t["n_batch"]), fmt(t["p_value"], 4), esc(t["holds"])]
            for t in tests]
    return ("<p>Each file's own two-sample test (each at level alpha alone; the stream's "
            "martingale decides).</p>"
            + _table(["items", "p-value", "holds"], rows, first="file"))


@_plain_text
def distribution_figure(dist: Mapping[str, Any]) -> str:
    """The calibration and new confidences as shares per bin, on shared bins."""
    fig, ax = plt.subplots(figsize=(5.4, 3.2))
    edges = np.asarray(dist["edges"], dtype=float)
    for key, label, color in (("calibration", "calibration", "C0"), ("new", "new", "C3")):
        counts = np.asarray(dist[key], dtype=float)
        share = counts / counts.sum() if counts.sum() else counts
        ax.stairs(share, edges, label=f"{label} ({int(counts.sum()):,})", color=color,
                  lw=1.6, fill=key == "calibration", alpha=0.35 if key == "calibration" else 1)
    ax.set(xlabel="confidence", ylabel="share of items", title="Confidence distributions")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def martingale_figure(stream: Mapping[str, Any]) -> str:
    """The test martingale after each new item (as log10: the figures draw text plainly, so
    no 10^k tick labels), its alarm level 1/alpha and the alarm."""
    fig, ax = plt.subplots(figsize=(5.4, 3.2))
    items = np.asarray(stream["path"]["item"], dtype=float) + 1
    values = np.log10(np.maximum(np.asarray(stream["path"]["value"], dtype=float), 1e-300))
    ax.plot(items, values, lw=1.4, label="test martingale")
    ax.axhline(np.log10(stream["threshold"]), color="C3", lw=1.2, ls="--",
               label=f"alarm level 1/alpha = {stream['threshold']:g}")
    if stream.get("alarm") is not None:
        ax.axvline(stream["alarm"] + 1, color="0.3", lw=1, ls=":",
                   label=f"alarm at item {stream['alarm'] + 1:,}")
    ax.set(xlabel="new item", ylabel="log10 of the martingale",
           title="Online test of exchangeability")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)


@_plain_text
def risk_figure(risk: Mapping[str, Any]) -> str:
    """The anytime-valid bounds of the realised error after each labelled item, the target
    and the alarm."""
    fig, ax = plt.subplots(figsize=(5.4, 3.2))
    b = risk["bounds"]
    items = np.asarray(b["item"], dtype=float) + 1
    ax.fill_between(items, b["lower"], b["upper"], alpha=0.3, label="confidence sequence")
    ax.axhline(risk["target"], color="C3", lw=1.2, ls="--", label=f"target {risk['target']:g}")
    if risk.get("alarm") is not None:
        ax.axvline(risk["alarm"] + 1, color="0.3", lw=1, ls=":", label="alarm")
    ax.set(xlabel="labelled item", ylabel=risk.get("what", "error"), ylim=(0, 1),
           title="Realised error, anytime-valid")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_data_uri(fig)
