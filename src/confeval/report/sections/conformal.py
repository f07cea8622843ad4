"""The report section of ``confeval NAME calibrate``: the conformal predictor stored — its
promise in one sentence, its method or score, alpha and q_hat (per group when Mondrian), and
the calibration rows read, used and excluded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..html import _table, esc, fmt, register_section

__all__ = ["render_conformal"]


@register_section("conformal")
def render_conformal(section: Mapping[str, Any]) -> str:
    return "".join(_one(name, res) for name, res in section["results"].items())


def _one(name: str, res: Mapping[str, Any]) -> str:
    state = res["state"]
    rows = [["method", esc(state.get("score") or state.get("method"))],
            ["alpha (miscoverage)", fmt(state["alpha"])]]
    if "qhat_by_group" in state:
        rows += [[f"q_hat, group {esc(g)}", "– (every option)" if q is None else fmt(q, 6)]
                 for g, q in state["qhat_by_group"].items()]
    else:
        q = state.get("qhat")
        rows.append(["q_hat", "– (too few items: every prediction is the full set)"
                     if q is None else fmt(q, 6)])
    rows += [["calibration items", fmt(res["n_calibration"])],
             ["rows read", fmt(res.get("n_read"))]]
    excluded = res.get("excluded") or {}
    if excluded:
        rows.append(["excluded", esc(", ".join(f"{k}: {v:,}" for k, v in excluded.items()))])
    return (f"<h3>{esc(name)}</h3><p><strong>{esc(res['promise'])}</strong></p>"
            + _table(["value"], rows, first="quantity"))
