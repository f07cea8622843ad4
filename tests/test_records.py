import gzip
import json

import numpy as np
import pandas as pd
import pytest

from confeval.records import RecordsError, RecordSet, read_table, resolve_columns


@pytest.fixture
def frame():
    return pd.DataFrame({
        "answer": ["A", "B", "C", "Z", None],
        "logit_A": [1.0, 0.5, np.nan, 1.0, 2.0],
        "logit_B": [0.0, np.inf, 1.0, 2.0, 1.0],
        "category": ["x", "y", "x", "y", "x"],
    })


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".tsv", ".jsonl", ".jsonl.gz", ".parquet"])
def test_every_format_reads_the_same_table(tmp_path, frame, suffix):
    path = tmp_path / f"records{suffix}"
    if suffix.startswith(".csv"):
        frame.to_csv(path, index=False)
    elif suffix == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif suffix == ".parquet":
        frame.to_parquet(path)
    else:
        text = "\n".join(json.dumps({k: (None if isinstance(v, float) and np.isnan(v) else v)
                                     for k, v in row.items()}, allow_nan=True)
                         for row in frame.to_dict(orient="records"))
        path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    rs = RecordSet.read(path)
    logits = rs.numeric("logit_*", what="logit")
    labels = rs.labels("answer", allowed="ABC")
    assert rs.excluded == {"missing_logit": 1, "non_finite_logit": 1, "unknown_label": 1,
                           "missing_label": 1}
    assert rs.valid()["answer"].tolist() == ["A"]
    np.testing.assert_array_equal(logits[rs.mask], [[1.0, 0.0]])
    assert labels[0] == "A"
    assert rs.summary()["n_used"] == 1 and rs.n_read == 5


def test_broken_jsonl_lines_are_counted_with_line_numbers(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"p": 0.5, "y": 1}\n{"p": 0.7, "y": \n\n[1, 2]\n{"p": "0.9", "y": 0}\n')
    rs = RecordSet.read(path)
    assert [(p.row, p.reason) for p in rs.problems] == [(2, "unparseable_line"),
                                                        (4, "unparseable_line")]
    p = rs.numeric("p", lo=0, hi=1, what="probability")
    assert rs.frame["_row"].tolist() == [1, 5]
    np.testing.assert_allclose(p[:, 0], [0.5, 0.9])  # numeric text is accepted
    assert rs.excluded == {"unparseable_line": 2}
    assert rs.n_read == 4
    rs.numeric("y", lo=1, hi=1, what="y")  # excludes line 5 (y = 0)
    assert [(f["row"], f["reason"]) for f in rs.summary()["flagged"]] == [
        (2, "unparseable_line"), (4, "unparseable_line"), (5, "y_out_of_range")]
    assert "invalid JSON" in rs.summary()["flagged"][0]["detail"]


def test_a_number_past_pythons_digit_limit_is_one_skipped_line(tmp_path):
    """json.loads refuses integers of more than 4,300 digits with a plain ValueError (not a
    JSONDecodeError): it failed the whole file, naming no file (the fifth hostile round)."""
    path = tmp_path / "r.jsonl"
    path.write_text('{"p": 0.5, "y": 1}\n{"p": 0.7, "y": 1, "x": ' + "9" * 5000 + '}\n'
                    '{"p": 0.9, "y": 0}\n')
    rs = RecordSet.read(path)
    assert [(p.row, p.reason) for p in rs.problems] == [(2, "unparseable_line")]
    assert "digits" in rs.summary()["flagged"][0]["detail"]
    assert rs.frame["_row"].tolist() == [1, 3]


def test_missing_file_unknown_format_and_missing_column_are_clear_errors(tmp_path):
    with pytest.raises(RecordsError, match="nope.csv: no such file"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(RecordsError, match="unknown file format"):
        read_table(tmp_path / "x.xlsx")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(RecordsError, match="bad.parquet: cannot read as parquet"):
        read_table(bad)
    path = tmp_path / "ok.csv"
    pd.DataFrame({"a": [1], "b": [2]}).to_csv(path, index=False)
    rs = RecordSet.read(path)
    with pytest.raises(RecordsError,
                       match=r"ok.csv: logit 'logit_\*' not found; columns are: a, b"):
        rs.numeric("logit_*", what="logit")


def test_column_globs_keep_file_order_and_dedupe():
    cols = ["s2_lp1", "s2_lp2", "gt", "s2_lp3", "_row"]
    assert resolve_columns(cols, "s2_lp*") == ["s2_lp1", "s2_lp2", "s2_lp3"]
    assert resolve_columns(cols, ["s2_lp2", "s2_lp*"]) == ["s2_lp2", "s2_lp1", "s2_lp3"]
    assert resolve_columns(cols, "gt, s2_lp[13]") == ["gt", "s2_lp1", "s2_lp3"]


def test_first_reason_wins_and_excluded_rows_are_listed():
    rs = RecordSet.from_frame(pd.DataFrame({"p": ["x", 2.0, 0.5], "q": [np.nan, np.nan, 0.1]}))
    rs.numeric("p", lo=0, hi=1, what="p")
    rs.numeric("q", what="q")
    assert rs.excluded == {"non_numeric_p": 1, "p_out_of_range": 1}
    assert rs.excluded_rows().to_dict(orient="list") == {
        "_row": [1, 2], "reason": ["non_numeric_p", "p_out_of_range"]}


def test_numeric_labels_match_across_float_and_text():
    rs = RecordSet.from_frame(pd.DataFrame({"gt": [1.0, 3.0, 2.5, 6.0]}))
    rs.labels("gt", allowed=[1, 2, 3, 4, 5], what="score")
    assert rs.excluded == {"unknown_score": 2}


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".tsv", ".jsonl", ".jsonl.gz"])
def test_a_bom_and_crlf_line_ends_read_the_same_table(tmp_path, frame, suffix):
    path = tmp_path / f"records{suffix}"
    if ".csv" in suffix or ".tsv" in suffix:
        text = frame.to_csv(index=False, sep="\t" if ".tsv" in suffix else ",")
    else:
        text = frame.to_json(orient="records", lines=True)
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    rs = RecordSet.read(path)
    assert list(rs.frame.columns) == [*frame.columns, "_row"]
    assert rs.frame["category"].tolist() == frame["category"].tolist()
    assert rs.frame["answer"].tolist()[:4] == ["A", "B", "C", "Z"]


def test_correctness_words_and_every_problem_of_a_column():
    from confeval.records import CORRECTNESS_WORDS, describe_problems

    rs = RecordSet.from_frame(pd.DataFrame({
        "c": [87, 42.5, "x", None, np.inf, 0.5],
        "y": ["yes", " No ", "TRUE", "maybe", "maybe", "wrong"]}))
    every = rs.mask.copy()
    correct = rs.numeric(["y"], lo=0, hi=1, what="correct", words=CORRECTNESS_WORDS)[:, 0]
    np.testing.assert_array_equal(correct, [1, 0, 1, np.nan, np.nan, 0])
    assert rs.excluded == {"non_numeric_correct": 2}
    # each column on its own, over every row read: a row excluded for y still shows for c
    assert describe_problems("c", rs.problems_of("c", every, lo=0, hi=1)) == (
        "c: 1 missing, 1 not numeric (e.g. 'x'), 1 not finite (e.g. inf), 2 out of [0, 1] "
        "(e.g. 87, 42.5)")
    assert rs.problems_of("y", every, lo=0, hi=1, words=CORRECTNESS_WORDS) == [
        ("not numeric", 2, ["maybe"])]


def test_numeric_columns_are_read_as_the_cell_by_cell_reference():
    """The one-pass reading of numeric columns (numbers read as they are, NA texts looked for
    only in text columns) against the cell-by-cell reference: pandas' isna/isin over the frame
    and to_numeric of each column. Several thousand rows and several columns, mixed dtypes:
    the sizes where a strided write once left the missing mask uninitialised."""
    from confeval.records import NA_TEXT, _as_numbers

    rng = np.random.default_rng(11)
    n = 6000
    floats = rng.random(n)
    floats[rng.random(n) < 0.05] = np.nan
    texts = rng.random(n).round(3).astype(str).astype(object)
    texts[rng.random(n) < 0.05] = "NA"
    texts[rng.random(n) < 0.05] = "high"
    raw = pd.DataFrame({"i": rng.integers(0, 5, n), "f": floats, "b": rng.random(n) < 0.5,
                        "t": texts, "f2": rng.random(n)})
    values, missing = _as_numbers(raw, None)
    expected = np.column_stack([pd.to_numeric(raw[c], errors="coerce").to_numpy(np.float64)
                                for c in raw.columns])
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(missing, (raw.isna() | raw.isin(NA_TEXT)).to_numpy())
