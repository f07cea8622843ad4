"""Render a run's ``metrics.json`` into one self-contained HTML file (no network needed).

``metrics.json`` holds a list of *sections*; each has a ``kind`` that selects a renderer::

    {"title": "...", "simulated": false,
     "sections": [{"kind": "confidence", "title": "...", "description": "...",
                   "results": {NAME: RESULT, ...}}, ...]}

Built-in kinds: ``confidence`` (results of :func:`confeval.evaluate.evaluate_confidence`) and
``agreement`` (:func:`confeval.evaluate.evaluate_agreement`). A suite adds its own kind with
:func:`register_section`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

from .figures import (
    accuracy_vs_set_size_figure,
    confusion_figure,
    grouped_bars_figure,
    reliability_figure,
    risk_coverage_figure,
    set_size_figure,
    width_by_group_figure,
)

__all__ = ["SECTION_RENDERERS", "metric_table", "register_section", "render_report"]

SECTION_RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {}


def register_section(kind: str):
    """Decorator: register ``fn(section) -> html`` as the renderer of a section kind."""
    def wrap(fn):
        SECTION_RENDERERS[kind] = fn
        return fn
    return wrap


def esc(value: Any) -> str:
    return html.escape(str(value))


def short_name(name: str) -> str:
    """A result key for display: a file path becomes 'folder/file' without its extension."""
    text = str(name)
    if "/" not in text and "." not in text:
        return text
    parts = text.replace("\\", "/").split("/")
    stem = parts[-1]
    for ext in (".csv.gz", ".jsonl.gz", ".csv", ".jsonl", ".tsv", ".parquet", ".ndjson"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return "/".join([*parts[-2:-1], stem]) if len(parts) > 1 else stem


def scroll(table_html: str) -> str:
    return f"<div class='scroll'>{table_html}</div>"


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(value)


def metric_table(results: Mapping[str, Mapping], columns: list[tuple[str, str]],
                 name_header: str = "judge") -> str:
    """HTML table: one row per result, one column per (key, header); CIs shown under values."""
    head = "".join(f"<th>{esc(h)}</th>" for _, h in columns)
    rows = []
    for name, res in results.items():
        cells = []
        for key, _ in columns:
            value = res.get(key)
            ci = (res.get("ci") or {}).get(key)
            extra = (f"<div class='ci'>[{fmt(ci['low'])}, {fmt(ci['high'])}]</div>"
                     if ci and ci.get("low") is not None else "")
            cells.append(f"<td>{fmt(value)}{extra}</td>")
        rows.append(f"<tr><th scope='row'>{esc(short_name(name))}</th>{''.join(cells)}</tr>")
    return scroll(f"<table><thead><tr><th>{esc(name_header)}</th>{head}</tr></thead>"
                  f"<tbody>{''.join(rows)}</tbody></table>")


def _excluded_note(results: Mapping[str, Mapping]) -> str:
    notes = []
    for name, res in results.items():
        excl = res.get("excluded") or {}
        if excl:
            detail = ", ".join(f"{esc(k)}: {v}" for k, v in excl.items())
            notes.append(f"<li>{esc(short_name(name))}: {sum(excl.values())} excluded "
                         f"({detail})</li>")
    return f"<ul class='excluded'>{''.join(notes)}</ul>" if notes else ""


def _img(uri: str, alt: str) -> str:
    return f"<figure><img src='{uri}' alt='{esc(alt)}'></figure>"


def _figure_of(results: Mapping[str, Mapping], key: str, heading: str, draw) -> str:
    """A heading and one figure drawn from ``result[key]`` of every result that has it."""
    data = {name: r[key] for name, r in results.items() if r.get(key)}
    return f"<h3>{esc(heading)}</h3>" + _img(draw(data), heading.lower()) if data else ""


@register_section("confidence")
def render_confidence(section: Mapping[str, Any]) -> str:
    results = section["results"]
    cols = [("n", "n"), ("accuracy", "accuracy"), ("mean_confidence", "mean conf."),
            ("ece", "ECE"), ("mce", "MCE"), ("brier", "Brier"), ("auroc", "AUROC"),
            ("auarc", "AUARC"), ("aurc", "AURC"), ("prr", "PRR"), ("rce", "RCE")]
    parts = [metric_table(results, cols, section.get("name_header", "judge")),
             _excluded_note(results)]
    parts.append(_figure_of(results, "reliability", "Reliability diagrams", reliability_figure))
    parts.append(_figure_of(results, "risk_coverage", "Risk–coverage curves",
                            risk_coverage_figure))
    return "".join(parts)


@register_section("agreement")
def render_agreement(section: Mapping[str, Any]) -> str:
    results = section["results"]
    cols = [("n", "n"), ("pearson", "Pearson"), ("spearman", "Spearman"),
            ("kendall", "Kendall τ"), ("accuracy", "exact acc."), ("within1", "±1 acc."),
            ("mae", "MAE"), ("bias", "bias"), ("top_prob_ece", "top-prob ECE")]
    parts = [metric_table(results, cols), _excluded_note(results)]
    levels = sorted({lv for r in results.values() for lv in r.get("bias_by_level", {})},
                    key=float)
    if levels:
        head = "".join(f"<th>GT {float(lv):g}</th>" for lv in levels)
        rows = "".join(
            f"<tr><th scope='row'>{esc(name)}</th>" + "".join(
                f"<td>{fmt((r['bias_by_level'].get(lv) or {}).get('bias'))}</td>"
                for lv in levels) + "</tr>"
            for name, r in results.items())
        parts.append("<h3>Signed bias by ground-truth level</h3>"
                     f"<table><thead><tr><th>judge</th>{head}</tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    over = {k: r["overconfidence"] for k, r in results.items() if r.get("overconfidence")}
    if over:
        ths = sorted({t for o in over.values() for t in o}, key=float)
        parts.append(metric_table({k: {t: o.get(t) for t in ths} for k, o in over.items()},
                                  [(t, f"top prob > {t}") for t in ths]))
    parts.append(_figure_of(results, "confusion", "Confusion matrices", confusion_figure))
    parts.append(_figure_of(results, "reliability", "Top-probability reliability",
                            reliability_figure))
    return "".join(parts)


def _mean_std(value: Any) -> str:
    if isinstance(value, dict) and "mean" in value:
        if value["mean"] is None:
            return "–"
        return f"{value['mean']:.4f}<div class='ci'>± {value.get('std') or 0:.4f}</div>"
    return fmt(value)


@register_section("sets")
def render_sets(section: Mapping[str, Any]) -> str:
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
                    f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"),
             _excluded_note(results)]
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
                 + _img(accuracy_vs_set_size_figure(results, scores), "accuracy vs set size"))
    for name, r in list(results.items())[:6]:
        if "size_distribution" in r["scores"][scores[0]]:
            parts.append(f"<h3>Set sizes: {esc(short_name(name))}</h3>"
                         + _img(set_size_figure(r, scores), f"set sizes of {name}"))
    return "".join(parts)


def _table(head: list[str], rows: list[list[str]], first: str = "") -> str:
    h = "".join(f"<th>{esc(x)}</th>" for x in [first, *head])
    body = "".join("<tr><th scope='row'>" + r[0] + "</th>" + "".join(f"<td>{c}</td>"
                                                                      for c in r[1:]) + "</tr>"
                   for r in rows)
    return scroll(f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>")


def _diagnostics_tables(methods: Mapping[str, Any], interval: list[str]) -> str:
    """Informativeness bands and coverage by the judge's error, per interval method."""
    diag = {m: methods[m]["diagnostics"] for m in interval if methods[m].get("diagnostics")}
    if not diag:
        return ""
    bands = ("decisive", "moderate", "uninformative")
    out = ["<h3>Informativeness of the adjusted intervals (share of items)</h3>" + _table(
        list(bands), [[esc(m)] + [_mean_std(d["informativeness_adj"][b]["share"])
                                  if d["informativeness_adj"].get(b, {}).get("share")
                                  else "–" for b in bands] for m, d in diag.items()],
        "method")]
    out.append("<h3>Interval midpoint as a point estimate</h3>" + _table(
        ["MAE (raw)", "Pearson (raw)", "MAE (adj.)", "Pearson (adj.)"],
        [[esc(m)] + [_mean_std(d["midpoint"][k]) if d["midpoint"].get(k) else "–"
                     for k in ("mae_raw", "pearson_raw", "mae_adj", "pearson_adj")]
         for m, d in diag.items()], "method"))
    with_bins = {m: d["error_bins"] for m, d in diag.items() if d.get("error_bins")}
    if with_bins:
        errors = sorted({e for bins in with_bins.values() for e in bins}, key=int)
        out.append("<h3>Coverage (raw) by the judge's absolute error</h3>" + _table(
            [f"|error| = {e}" for e in errors],
            [[esc(m)] + [_mean_std(bins[e]["coverage_raw"]) if e in bins else "–"
                         for e in errors] for m, bins in with_bins.items()], "method"))
    return "".join(out)


@register_section("intervals")
def render_intervals(section: Mapping[str, Any]) -> str:
    parts = []
    for name, r in section["results"].items():
        label = esc(short_name(name))
        methods = r["methods"]
        interval = [m for m, v in methods.items() if "width_raw" in v]
        sets = [m for m, v in methods.items() if "set_size" in v]
        parts.append(f"<h3>{label}: {fmt(r.get('n'))} items, alpha {fmt(r.get('alpha'))}, "
                     f"{len(r.get('seeds', []))} seeds"
                     f"{', Mondrian' if r.get('mondrian') else ''}</h3>")
        if interval:
            parts.append(_table(["coverage (raw)", "width (raw)", "coverage (adj.)",
                                 "width (adj.)"],
                                [[esc(m)] + [_mean_std(methods[m][k]) for k in
                                             ("coverage_raw", "width_raw", "coverage_adj",
                                              "width_adj")] for m in interval], "method"))
        if sets:
            parts.append(_table(["coverage", "mean set size"],
                                [[esc(m), _mean_std(methods[m]["coverage"]),
                                  _mean_std(methods[m]["set_size"])] for m in sets],
                                "rating-set method"))
        if r.get("point"):
            keys = ["pearson", "spearman", "kendall", "accuracy", "within1", "mae", "bias"]
            parts.append("<h3>Judge point metrics</h3>" + _table(
                keys, [["judge"] + [fmt(r["point"].get(k)) for k in keys]]))
        if interval and methods[interval[0]].get("levels"):
            lv = list(methods[interval[0]]["levels"])
            parts.append("<h3>Coverage (adjusted) by ground-truth level</h3>" + _table(
                [f"GT {x}" for x in lv],
                [[esc(m)] + [_mean_std(methods[m]["levels"][x]["coverage_adj"]) for x in lv]
                 for m in interval], "method"))
        if interval and methods[interval[0]].get("groups"):
            shown = interval[:2]
            widths = {m: {g: v["width_raw"]["mean"] for g, v in methods[m]["groups"].items()}
                      for m in shown}
            parts.append("<h3>Width by group</h3>" + _img(width_by_group_figure(widths),
                                                          "interval width by group"))
        if r.get("separately") and interval:
            shown = [m for m in interval[:2]
                     if all(m in part["methods"] for part in r["separately"].values())]
            widths = {m: {g: part["methods"][m]["width_raw"]["mean"]
                          for g, part in r["separately"].items()} for m in shown}
            if widths:
                parts.append("<h3>Width by group, each group calibrated on its own</h3>"
                             + _img(width_by_group_figure(widths), "per-group runs"))
        parts.append(_diagnostics_tables(methods, interval))
        if r.get("rsg"):
            method = next(iter(r["rsg"]))
            rows = sorted(r["rsg"][method].items(), key=lambda kv: -kv[1]["rsg"])
            parts.append(f"<h3>Ranking-scoring gap by group ({esc(method)})</h3>"
                         "<p class='muted'>RSG = Pearson − (1 − mean raw width / range): "
                         "positive when the judge ranks better than it scores.</p>" + _table(
                             ["Pearson", "width (raw)", "RSG"],
                             [[esc(g), fmt(v["pearson"], 3), fmt(v["width_raw"], 2),
                               fmt(v["rsg"], 3)] for g, v in rows], "group"))
    return "".join(parts)


def _with_ci(value: Any, ci: Mapping[str, Any] | None) -> str:
    if value is None:
        return "–"
    cell = f"{value:.4f}"
    if ci:
        cell += f"<div class='ci'>[{ci['low']:.4f}, {ci['high']:.4f}]</div>"
    return cell


@register_section("steps")
def render_steps(section: Mapping[str, Any]) -> str:
    """ConfProBench metrics per file: headline with item-bootstrap intervals, CRS per
    perturbation, Δp per error type and breakdowns by metadata columns."""
    parts = []
    keys = ["crs", "ccr", "accm", "sccr", "css", "ccs", "ece", "ece_correct", "ece_incorrect",
            "delta_ece", "avg", "macro_f1"]
    results = section["results"]
    parts.append("<p class='muted'>Fractions, not percent. CRS compares each step's confidence "
                 "before and after a meaning-preserving perturbation; CSS is the mean drop of "
                 "P(correct) from correct steps to steps of each error type; CCS combines ECE "
                 "and the gap between the ECEs of correct and incorrect steps. Intervals: 95% "
                 "percentile bootstrap over items.</p>")
    parts.append(_table(keys, [[esc(short_name(name))] + [
        _with_ci(r.get(k), r.get("ci", {}).get(k)) for k in keys]
        for name, r in results.items()], "file"))
    for name, r in results.items():
        label = esc(short_name(name))
        if r.get("by_perturbation"):
            bars = {k.upper(): {v: m[k] for v, m in r["by_perturbation"].items()}
                    for k in ("crs", "ccr", "sccr")}
            parts.append(f"<h3>{label}: robustness by perturbation</h3>" + _img(
                grouped_bars_figure(bars, xlabel="score (fraction)", sort=False,
                                    title="CRS and its parts by perturbation type"),
                "robustness by perturbation") + _table(
                ["CRS", "CCR", "ACCM", "SCCR", "pairs"],
                [[esc(v)] + [fmt(m[k]) for k in ("crs", "ccr", "accm", "sccr")]
                 + [str(m["pairs"])] for v, m in r["by_perturbation"].items()],
                "perturbation"))
        if r.get("delta_p"):
            parts.append(f"<h3>{label}: Δp by error type</h3>" + _table(
                ["Δp"], [[esc(t), fmt(v)] for t, v in sorted(r["delta_p"].items(),
                                                            key=lambda kv: -kv[1])],
                "error type"))
        for col, groups in r.get("by_group", {}).items():
            bars = {k.upper(): {g: m[k] for g, m in groups.items() if m.get(k) is not None}
                    for k in ("crs", "css", "ccs")}
            parts.append(f"<h3>{label}: by {esc(col)}</h3>" + _img(
                grouped_bars_figure(bars, xlabel="score (fraction)", sort=False,
                                    title=f"CRS, CSS and CCS by {col}"), f"by {col}") + _table(
                ["CRS", "CSS", "CCS", "avg", "steps"],
                [[esc(g)] + [fmt(m.get(k)) for k in ("crs", "css", "ccs", "avg")]
                 + [str(m.get("n_original_rows"))] for g, m in groups.items()], esc(col)))
    return "".join(parts)


@register_section("steps_consistency")
def render_steps_consistency(section: Mapping[str, Any]) -> str:
    """Correlation across judges of CRS/CSS/CCS between two perturbation generators, with
    every judge's pair of values (ConfProBench Appendix H)."""
    parts = []
    for r in section["results"].values():
        metrics = [m for m in ("crs", "css", "ccs") if m in r]
        parts.append("<p class='muted'>Each judge is scored on the same problems perturbed by "
                     "generator A and by generator B; high correlations mean the choice of "
                     "generator does not change the conclusions.</p>")
        parts.append(_table(["Pearson", "Spearman", "judges"], [
            [m.upper(), fmt(r[m]["pearson"], 3), fmt(r[m]["spearman"], 3),
             str(r[m]["n_judges"])] for m in metrics], "metric"))
        parts.append(_table([f"{m.upper()} ({g})" for m in metrics for g in ("A", "B")], [
            [esc(j)] + [fmt(v, 4) for m in metrics for v in r[m]["values"][j]]
            for j in r["judges"]], "judge"))
    return "".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1150px;color:#1d2330;padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:2px solid #dde3ee;padding-bottom:.3rem;margin-top:2.2rem}
h3{margin-top:1.4rem;font-size:1.02rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.86rem}
th,td{border:1px solid #dde3ee;padding:.3rem .55rem;text-align:right;vertical-align:top}
thead th{background:#f3f6fb} tbody th{text-align:left;background:#fafbfd}
.ci{color:#6b7385;font-size:.72rem} .muted{color:#6b7385;font-size:.85rem}
.badge{display:inline-block;background:#b3261e;color:#fff;border-radius:4px;padding:.1rem .5rem;
font-size:.8rem;font-weight:600;letter-spacing:.03em}
.scroll{overflow-x:auto;max-width:100%} figure{margin:.6rem 0} img{max-width:100%}
ul.excluded{font-size:.82rem;color:#8a4b08}
details{margin:.6rem 0;font-size:.82rem} pre{background:#f6f8fa;padding:.6rem;overflow:auto}
"""


def render_report(metrics: Mapping[str, Any], run_info: Mapping[str, Any] | None = None) -> str:
    """Return the full HTML document for a run's metrics (and its ``run.json``, if known)."""
    import json

    title = metrics.get("title", "confeval report")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{esc(title)}</h1>"]
    if metrics.get("simulated"):
        parts.append("<p><span class='badge'>SIMULATED DATA</span> <span class='muted'>"
                     "Records generated by confeval's documented simulator "
                     "(<code>confeval simulate</code>), not by a real model.</span></p>")
    if metrics.get("note"):
        parts.append(f"<p class='muted'>{esc(metrics['note'])}</p>")
    toc = "".join(f"<li><a href='#s{i}'>{esc(s.get('title', s['kind']))}</a></li>"
                  for i, s in enumerate(metrics.get("sections", [])))
    parts.append(f"<ol>{toc}</ol>")
    for i, section in enumerate(metrics.get("sections", [])):
        renderer = SECTION_RENDERERS.get(section["kind"])
        badge = (" <span class='badge'>SIMULATED</span>" if section.get("simulated")
                 and not metrics.get("simulated") else "")
        parts.append(f"<h2 id='s{i}'>{esc(section.get('title', section['kind']))}{badge}</h2>")
        if section.get("description"):
            parts.append(f"<p class='muted'>{esc(section['description'])}</p>")
        if renderer is None:
            parts.append(f"<p>No renderer for section kind {esc(section['kind'])!s}; "
                         "raw results:</p><pre>"
                         f"{esc(json.dumps(section.get('results'), indent=1)[:20000])}</pre>")
        else:
            parts.append(renderer(section))
    if run_info:
        parts.append("<details><summary>Run configuration and versions</summary><pre>"
                     f"{esc(json.dumps(run_info, indent=2))}</pre></details>")
    parts.append("<p class='muted'>Generated by confeval. Intervals are 95% bootstrap "
                 "percentile intervals. Binned ECE is biased upward on resamples (duplicated "
                 "rows add noise to every bin), so for a well-calibrated judge its interval can "
                 "lie above the point estimate.</p></body></html>")
    return "".join(parts)
