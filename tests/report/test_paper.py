"""The compare table as papers print it: CSV with every number, Markdown and LaTeX with the best
value in bold and group letters, special characters escaped."""

import csv
import io

from confeval.report.paper import to_csv, to_latex, to_markdown


def _doc():
    def row(value, rank, group):
        return {"value": value, "low": value - 0.1, "high": value + 0.1, "rank": rank,
                "rank_low": 1.0, "rank_high": 2.0, "group": group}

    return {"compare": {"models": ["gpt_4%", "llama"], "metrics": {
        "accuracy": {"higher_is_better": True,
                     "models": {"gpt_4%": row(0.8, 1, "a"), "llama": row(0.7, 2, "b")},
                     "pairs": []},
        "ece": {"higher_is_better": False,
                "models": {"gpt_4%": row(0.05, 2, "a"), "llama": row(0.03, 1, "a")},
                "pairs": []}}}}


def test_csv_has_every_field_of_every_metric():
    rows = list(csv.DictReader(io.StringIO(to_csv(_doc()))))
    assert [r["model"] for r in rows] == ["gpt_4%", "llama"]
    assert float(rows[1]["ece_value"]) == 0.03 and rows[1]["accuracy_group"] == "b"
    assert float(rows[0]["accuracy_low"]) == 0.8 - 0.1 and rows[0]["ece_rank"] == "2"
    # rank intervals are whole numbers, written so even from a document that has 1.0
    assert (rows[0]["ece_rank_low"], rows[0]["ece_rank_high"]) == ("1", "2")


def test_markdown_bolds_the_best_in_each_direction():
    lines = to_markdown(_doc()).splitlines()
    assert lines[0] == "| model | accuracy ↑ | ece ↓ |"
    assert lines[2] == "| gpt_4% | **0.800** (a) | 0.050 (a) |"
    assert lines[3] == "| llama | 0.700 (b) | **0.030** (a) |"


def test_latex_escapes_and_uses_superscript_letters():
    text = to_latex(_doc())
    assert r"\begin{tabular}{lrr}" in text and r"\toprule" in text
    assert r"gpt\_4\% & \textbf{0.800}$^{\mathrm{a}}$ & 0.050$^{\mathrm{a}}$ \\" in text
    assert r"accuracy $\uparrow$ & ece $\downarrow$" in text


def test_a_model_some_suite_lacks_is_a_dash_and_pipes_are_escaped():
    doc = _doc()
    doc["compare"]["models"].append("x|y")
    assert to_markdown(doc).splitlines()[-1] == "| x\\|y | – | – |"
    assert to_latex(doc).splitlines()[-3] == r"x\textbar{}y & -- & -- \\"
    assert to_csv(doc).splitlines()[-1] == "x|y" + "," * 14
