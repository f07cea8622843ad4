"""The report section of the sets suite: coverage, size and UAcc per score, per-group tables,
accuracy against set size and set-size histograms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from ..figures import accuracy_vs_set_size_figure, set_size_figure
from ..html import _mean_std, chart, esc, fmt, register_section, scroll, short_name
from ..terminal import blank, file_table, number, register_table

__all__ = ["render_sets"]


@register_section("sets")
def render_sets(section: Mapping[str, Any]) -> str:
    """Accuracy, ECE and coverage / size / UAcc of every set score per file (mean ± std over
    seeds), per-group tables, accuracy against set size and set-size histograms."""
    results = section["results"]
    if not results:
        return "<p>No results.</p>"
    scores = list(next(iter(results.values()))["scores"])
    head = "".join(f"<th>{esc(h)}</th>" for h in ("n test", "accuracy", "ECE", "MCE",
                                                   "entropy"))
    head += "".join(f"<th>{esc(s)} coverage</th><th>{esc(s)} size</th><th>{esc(s)} UAcc</th>"
                    for s in scores)
    rows = []
    for name, r in results.items():
        cells = [fmt(r.get("n_test")), _mean_std(r.get("accuracy")), _mean_std(r.get("ece")),
                 _mean_std(r.get("mce")), _mean_std(r.get("entropy"))]
        for s in scores:
            m = r["scores"][s]
            cells += [_mean_std(m["coverage"]), _mean_std(m["set_size"]), _mean_std(m["uacc"])]
        rows.append(f"<tr><th scope='row'>{esc(short_name(name))}</th>"
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    first = next(iter(results.values()))
    alpha = first.get("alpha")
    parts = [f"<p class='muted'>alpha = {fmt(alpha)} (target coverage "
             f"{fmt(1 - alpha) if alpha is not None else '–'}); protocol "
             f"{esc(first.get('protocol', ''))}.</p>",
             scroll(f"<table><thead><tr><th>{esc(section.get('name_header', 'file'))}</th>"
                    f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")]
    for name, r in list(results.items())[:6]:
        if r.get("groups"):
            ghead = "".join(f"<th>{esc(s)} coverage</th><th>{esc(s)} size</th>" for s in scores)
            grows = "".join(
                f"<tr><th scope='row'>{esc(g)}</th><td>{_mean_std(v.get('n_test'))}</td>"
                f"<td>{_mean_std(v.get('accuracy'))}</td>" + "".join(
                    f"<td>{_mean_std(v['scores'][s]['coverage'])}</td>"
                    f"<td>{_mean_std(v['scores'][s]['set_size'])}</td>" for s in scores)
                + "</tr>" for g, v in r["groups"].items())
            parts.append(f"<h3>By group (Mondrian calibration): {esc(short_name(name))}</h3>"
                         + scroll(f"<table><thead><tr><th>group</th><th>n test</th>"
                                  f"<th>accuracy</th>{ghead}</tr></thead>"
                                  f"<tbody>{grows}</tbody></table>"))
    parts.append("<h3>Accuracy vs set size</h3>"
                 + chart("accuracy vs set size", accuracy_vs_set_size_figure, results, scores))
    for name, r in list(results.items())[:6]:
        if "size_distribution" in r["scores"][scores[0]]:
            parts.append(f"<h3>Set sizes: {esc(short_name(name))}</h3>"
                         + chart(f"set sizes of {name}", set_size_figure, r, scores))
    return "".join(parts)


@register_table("sets")
def sets_table(results: dict) -> Table:
    """One row per (file, score): long format, so it fits a narrow terminal."""
    table, leads = file_table("Conformal prediction sets",
                              ("n test", "acc", "ECE", "score", "coverage", "size", "UAcc"),
                              results)
    for first, res in zip(leads, results.values()):
        for i, (name, m) in enumerate(res["scores"].items()):
            lead = ([*first, number(res["n_test"]), number(res["accuracy"]),
                     number(res["ece"])] if i == 0 else blank([*first, "", "", ""]))
            table.add_row(*lead, name, number(m["coverage"]), number(m["set_size"]),
                          number(m["uacc"]))
    return table
