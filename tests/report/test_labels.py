"""Short labels of the inputs a terminal table names, and wrapping a label at its separators."""

from __future__ import annotations

import pytest

from confeval.report.labels import longest_part, short_labels, wrap_label

LONG = [f"runs/llama-3.1-8b-instruct_{b}-judge_mmlu-pro_2024-05-13T12-00-00.csv"
        for b in ("calibrated", "overconfident", "uninformative")]


def test_what_every_long_file_name_shares_is_dropped_and_named_once():
    labels = short_labels(LONG)
    assert labels.labels == ["calibrated", "overconfident", "uninformative"]
    assert labels.key() == ("each name stands for "
                            "llama-3.1-8b-instruct_*-judge_mmlu-pro_2024-05-13T12-00-00")


@pytest.mark.parametrize("names, expected", [
    (["a/records.jsonl", "b/records.jsonl"], ["a", "b"]),                  # folders decide
    (["m1/samples_x_2026-11-24.jsonl", "m2/samples_x_2026-11-24.jsonl",
      "samples_x_2026-11-25.jsonl"], ["m1/24", "m2/24", "25"]),           # stems collide
    (["model (marginal)", "model (Mondrian by domain)"], ["marginal", "Mondrian by domain"]),
    (["calibrated", "verbalised 0.05"], ["calibrated", "verbalised 0.05"]),  # nothing shared
    (["judge.csv"], ["judge"]),                                            # one input: stem
    (["a/x.jsonl", "a/x.csv"], ["a/x.jsonl", "a/x.csv"]),                  # only whole names differ
])
def test_labels_stay_distinct_and_never_empty(names, expected):
    assert short_labels(names).labels == expected


def test_a_label_wraps_after_its_separators_never_inside_a_word_or_a_number():
    text = wrap_label("llama-3.1-8b-instruct_calibrated-judge", 14)
    assert text.splitlines() == ["llama-3.1-8b-", "instruct_", "calibrated-", "judge"]
    assert wrap_label("verbalised 0.05", 10).splitlines() == ["verbalised", "0.05"]
    assert longest_part("verbalised 0.05") == 10 and longest_part("overconfident") == 13
    assert wrap_label("short", 14) == "short"
