"""The report section of ``confeval guarantee``: per input the guarantee in one sentence, the
numbers behind it, the risk-coverage curve with each threshold's upper bound and the certified
point, and over repeated splits the histogram of the test half's risk against the target. When
nothing is certified, the sentence says so with the best bound this n and delta reach."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..figures import guarantee_figure, violation_histogram
from ..html import _table, chart, esc, fmt, register_section

__all__ = ["render_guarantee"]

_RISK = {"selective": "selective error (wrong among answered)",
         "joint": "joint error (answered and wrong, among all)"}


@register_section("guarantee")
def render_guarantee(section: Mapping[str, Any]) -> str:
    return "".join(_one(name, res) for name, res in section["results"].items())


def _one(name: str, res: Mapping[str, Any]) -> str:
    kind = res.get("risk_controlled", "selective")
    # the guarantee's sentence is the section's verdict, which opens the section
    parts = [f"<h3>{esc(name)}</h3>", _numbers(res, kind)]
    curve = res.get("curve")
    if curve:
        chosen = None
        if res.get("threshold") is not None and res.get("calibration"):
            chosen = (res["calibration"]["answered"] / res["n_calibration"], res["bound"])
        test = res.get("test")
        where, stopped = res.get("best_achievable"), None
        if res.get("threshold") is None and where and res.get("best_achievable_bound") \
                is not None and res.get("n_calibration"):
            stopped = (where["answered"] / res["n_calibration"], res["best_achievable_bound"])
        parts.append(chart(
            f"risk-coverage of {name}", guarantee_figure, curve, target=res["target"],
            chosen=chosen, stopped=stopped,
            test=(test["coverage"], test["risk"]) if test and test.get("risk") is not None
            else None, risk_label=_RISK[kind]))
    splits = res.get("splits")
    if splits:
        risks = [s["risk"] for s in splits["per_split"] if s["risk"] is not None]
        parts.append(f"<p>Over {splits['n_splits']} random 50/50 splits: a threshold certified "
                     f"on {splits['n_certified']}, mean answer rate "
                     f"{fmt(splits['mean_coverage'], 3)}, test-half risk above the target on "
                     f"{fmt(splits['share_exceeding_target'], 3)} of splits (± "
                     f"{fmt(splits['share_se'], 3)}). " + _share_reading(res) + "</p>")
        if risks:
            parts.append(chart(f"test-half risk over splits of {name}", violation_histogram,
                               risks, target=res["target"]))
    return "".join(parts)


def _share_reading(res: Mapping[str, Any]) -> str:
    if res.get("batch"):
        return (f"The promise is on a batch of {res['batch']:,} items, the test half's size: "
                "this share estimates how often it fails, at most delta up to its standard "
                "error.")
    return ("The promise is on the population: the test half is a sample too, so a threshold "
            "whose true risk is just under the target lands above it on many halves, and this "
            "share can exceed delta without a broken promise (--batch test promises the "
            "half's own error).")


def _numbers(res: Mapping[str, Any], kind: str) -> str:
    cal = res.get("calibration") or {}
    test = res.get("test") or {}
    rows = [["method", esc(res["method"] + (f" ({res['fwer']}"
                                             + (f", {res['starts']} starts"
                                                if (res.get("starts") or 1) > 1 else "")
                                             + ")" if res.get("fwer") else ""))],
            ["risk controlled", esc(_RISK[kind])],
            ["target", fmt(res["target"])],
            ["delta", fmt(res.get("delta"))],
            ["threshold (answer if confidence ≥)", fmt(res.get("threshold"), 6)],
            [f"certified bound (a batch of {res['batch']:,})" if res.get("batch")
             else "certified bound", fmt(res.get("bound"))],
            ["calibration items", f"{res['n_calibration']:,}"],
            ["calibration answered", f"{cal['answered']:,}" if cal else "–"],
            ["calibration risk", fmt(cal.get("risk"))]]
    where = res.get("best_achievable")
    if res.get("threshold") is None and res.get("best_achievable_bound") is not None:
        # nothing certified: the lowest bound this method reached, and where (its sentence)
        rows.insert(6, ["lowest bound the method reached", fmt(res["best_achievable_bound"])])
        if where:
            rows.insert(7, ["… at confidence ≥ (answered)",
                            f"{fmt(where['threshold'], 6)} ({where['answered']:,})"])
    if test:
        rows += [["test items", f"{test['n']:,}"], ["test answer rate", fmt(test["coverage"])],
                 ["test risk", fmt(test.get("risk"))]]
    return _table(["value"], rows, first="quantity")
