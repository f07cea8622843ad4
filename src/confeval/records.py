"""Reading record files into validated tables, with every excluded row counted by reason.

Formats: CSV, CSV.gz, TSV, JSONL / JSONL.gz (also ``.ndjson``), Parquet. The format is taken
from the file name.

The contract
------------
* A file that is missing, unreadable or of an unknown format, and a requested column that is
  not there, raise :class:`RecordsError` — one message naming the file (and the column, and the
  columns that *are* there).
* A JSONL line that is not valid JSON, or not a JSON object, does not stop the read: the line
  is skipped, counted under ``unparseable_line`` and listed with its line number in
  :attr:`RecordSet.problems`.
* Rows whose values are unusable (non-numeric text, NaN/inf, a probability outside [0, 1],
  an unknown label, ...) are *excluded*, never silently dropped: each check marks rows with a
  reason, a row is counted once under the first reason that caught it, and
  :attr:`RecordSet.excluded` gives the counts that every result reports.

Example
-------
>>> import pandas as pd
>>> rs = RecordSet.from_frame(pd.DataFrame({"p": [0.2, "x", 1.5, None], "y": [1, 0, 1, 0]}))
>>> p = rs.numeric(["p"], lo=0, hi=1, what="probability")
>>> rs.excluded
{'missing_probability': 1, 'non_numeric_probability': 1, 'probability_out_of_range': 1}
>>> rs.valid()["p"].tolist()
[0.2]
"""

from __future__ import annotations

import csv
import fnmatch
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._validation import RUN_RECORDS, RecordsError, record_file

__all__ = ["CORRECTNESS_WORDS", "ROW_COLUMN", "RUN_RECORDS", "TABLE_SUFFIXES", "Problem",
           "RecordSet", "RecordsError", "as_list", "describe_problems", "id_text", "read_table",
           "record_file", "resolve_columns", "write_table"]

ROW_COLUMN = "_row"
"""Column added to every table: the 1-based line number in the file (JSONL, and CSV where the
header is line 1) or the 1-based row number (Parquet), so any record can be traced back."""


@dataclass(frozen=True)
class Problem:
    """One skipped line or excluded row: where, and why."""

    row: int
    reason: str
    detail: str = ""


_FORMATS = ((".jsonl.gz", "jsonl"), (".ndjson.gz", "jsonl"), (".jsonl", "jsonl"),
            (".ndjson", "jsonl"), (".csv.gz", "csv"), (".csv", "csv"), (".tsv.gz", "tsv"),
            (".tsv", "tsv"), (".parquet", "parquet"), (".pq", "parquet"))


def stem_of(path: Path) -> str:
    """A record file's name without its format extension (``llava-v1.5-7b.csv.gz`` ->
    ``llava-v1.5-7b``); any other name (a run folder) as it is."""
    name = path.name
    for suffix, _ in _FORMATS:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _format_of(path: Path) -> str:
    name = path.name.lower()
    for suffix, fmt in _FORMATS:
        if name.endswith(suffix):
            return fmt
    raise RecordsError(f"{path}: unknown file format (expected .csv, .csv.gz, .tsv, .jsonl, "
                       ".jsonl.gz or .parquet)")


def _open_bytes(path: Path):
    """The file's bytes; a ``.gz`` file's decompressed in chunks under the caps of
    :mod:`confeval._untrusted` (one error naming the file and the cap past them)."""
    from ._untrusted import open_binary

    return open_binary(path)


_BOM = b"\xef\xbb\xbf"


def _read_jsonl(path: Path) -> tuple[pd.DataFrame, list[Problem]]:
    """One JSON object per line. A line that is not UTF-8, not JSON or not an object is
    skipped and counted (``unparseable_line``); a UTF-8 byte-order mark is ignored."""
    rows, line_numbers, problems = [], [], []
    with _open_bytes(path) as fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(Problem(number, "unparseable_line", f"not UTF-8: {exc.reason}"))
                continue
            if not line.strip():
                continue
            if not rows and not problems and line.lstrip().startswith("["):
                raise RecordsError(f"{path}: this looks like one JSON array; confeval reads JSON "
                                   "Lines (one object per line): convert it, e.g. with "
                                   "`jq -c '.[]'`")
            # plain json.loads: a key named twice keeps its last value here. Checking every
            # line (_untrusted.loads_unique) cost 8-12% of reading 10^6 typical record lines,
            # and this read is the 10^7-row hot path; single documents are checked instead
            try:
                obj = json.loads(line)
            except ValueError as exc:   # JSONDecodeError, or a number past Python's digit limit
                problems.append(Problem(number, "unparseable_line",
                                        f"invalid JSON: {getattr(exc, 'msg', exc)}"))
                continue
            except RecursionError:  # a line nested thousands deep: that line, not the file
                problems.append(Problem(number, "unparseable_line", "JSON nested too deeply"))
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(number, "unparseable_line",
                                        f"expected a JSON object, got {type(obj).__name__}"))
                continue
            rows.append(obj)
            line_numbers.append(number)
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
    frame[ROW_COLUMN] = np.asarray(line_numbers, dtype=np.int64)
    return frame, problems


def _check_header(path: Path, sep: str) -> None:
    """Refuse duplicate column names (pandas would silently rename them ``x.1``, and a glob
    would then pick the copy up as another column)."""
    with _open_bytes(path) as fh:
        first = fh.readline().decode("utf-8-sig", errors="replace")
    names = next(csv.reader([first], delimiter=sep), [])
    seen: dict[str, int] = {}
    for name in names:
        seen[name.strip()] = seen.get(name.strip(), 0) + 1
    dupes = sorted(k for k, v in seen.items() if v > 1)
    if dupes:
        raise RecordsError(f"{path}: duplicate column name(s) {dupes}; rename them so that "
                           "every column is read once")


NA_TEXT = ("", "nan", "NaN", "NA", "N/A", "n/a", "null", "NULL", "None", "none")
"""Cell texts read as missing in *numeric* columns. Text columns (groups, labels, ids) keep
them as text: "NA" may be North America."""


"""The record file of a run folder: a folder holding it is read as that file, so a run folder
is accepted wherever a record file is."""


_EXACT_FLOATS = {"float_precision": "round_trip"} \
    if int(pd.__version__.split(".")[0]) < 3 else {}
"""CSV numbers parsed to the nearest double in every pandas version: pandas 2's default
parser can be one unit in the last place off (pandas 3 rounds correctly by default and
deprecates the argument), and a conformal quantile can sit exactly on such a bit."""


def read_table(path: str | Path) -> tuple[pd.DataFrame, list[Problem]]:
    """Read one record file (or a run folder's records) into a DataFrame with a ``_row``
    column.

    Returns the table and the list of skipped lines (JSONL only). Raises
    :class:`RecordsError` when the file cannot be read at all.
    """
    path = record_file(path)
    fmt = _format_of(path)
    if not path.is_file():
        raise RecordsError(f"{path}: no such file")
    try:
        if fmt == "jsonl":
            return _read_jsonl(path)
        if fmt in ("csv", "tsv"):
            sep = "," if fmt == "csv" else "\t"
            _check_header(path, sep)
            # only empty cells are missing here; "NA", "null", ... stay text until a column
            # is read as numbers (RecordSet.numeric treats NA_TEXT as missing there)
            with _open_bytes(path) as fh:
                frame = pd.read_csv(fh, sep=sep, low_memory=False, keep_default_na=False,
                                    na_values=[""], encoding="utf-8-sig", **_EXACT_FLOATS)
            frame[ROW_COLUMN] = np.arange(2, len(frame) + 2, dtype=np.int64)
        else:
            frame = pd.read_parquet(path)
            frame[ROW_COLUMN] = np.arange(1, len(frame) + 1, dtype=np.int64)
    except RecordsError:
        raise
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError,
            pd.errors.ParserError) as exc:
        why = "the compressed file is truncated" if isinstance(exc, EOFError) else str(exc)
        raise RecordsError(f"{path}: cannot read as {fmt}: {why}") from None
    return frame, []


def resolve_columns(columns: Sequence[str], spec: str | Iterable[str], *, source: str = "",
                    what: str = "column") -> list[str]:
    """Expand a column spec into existing column names.

    ``spec`` is a comma-separated string or a list; each entry is a column name or a glob
    (``'logit_*'``, ``'s2_lp[1-5]'``). Glob matches keep the file's column order. An entry that
    matches nothing raises :class:`RecordsError` naming the file and listing the columns.

    Examples
    --------
    >>> resolve_columns(["id", "logit_A", "logit_B", "answer"], "logit_*")
    ['logit_A', 'logit_B']
    """
    entries = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    available = [c for c in columns if c != ROW_COLUMN]
    out: list[str] = []
    for entry in entries:
        if not entry:
            continue
        if any(ch in entry for ch in "*?["):
            matched = [c for c in available if fnmatch.fnmatchcase(str(c), entry)]
        else:
            matched = [entry] if entry in available else []
        if not matched:
            where = f"{source}: " if source else ""
            if not available:
                raise RecordsError(f"{where}no records, so no {what} {entry!r}: the file is "
                                   "empty or none of its lines is a record")
            shown = ", ".join(map(str, available[:30])) + (" ..." if len(available) > 30 else "")
            raise RecordsError(f"{where}{what} {entry!r} not found; columns are: {shown}")
        out.extend(m for m in matched if m not in out)
    return out


@dataclass
class RecordSet:
    """A table read from one source, with rows excluded (never dropped) by reason."""

    frame: pd.DataFrame
    source: str = "<memory>"
    problems: list[Problem] = field(default_factory=list)
    notes: dict = field(default_factory=dict)
    """Counts that are not exclusions (e.g. rows a --join found no match for), reported in
    :meth:`summary`."""
    warnings: list = field(default_factory=list)
    """Sentences about the source a reader must see beside its numbers (e.g. an Inspect
    log's confidences about a letter the scorer did not read), reported in :meth:`summary`
    and printed by the command line naming the source."""
    id_col: str | None = None
    """The column naming each row's item, when the source says (another tool's file: its
    document ids); ``confeval compare`` aligns models by it unless ``--id-col`` names one."""
    fmt: str | None = None
    """The tool whose file the records were read from (``lm-eval``, ``inspect``, ``openai``;
    None: confeval's own records): its rows are in the suite's layout, columns named."""

    def __post_init__(self) -> None:
        if ROW_COLUMN not in self.frame.columns:
            self.frame = self.frame.copy()
            self.frame[ROW_COLUMN] = np.arange(1, len(self.frame) + 1, dtype=np.int64)
        self.frame = self.frame.reset_index(drop=True)
        # 0 = valid; k > 0 = excluded for self._reasons[k - 1] (the first reason that caught it)
        self._code = np.zeros(len(self.frame), dtype=np.int32)
        self._reasons: list[str] = []
        self._skipped: dict[str, int] = {}
        for p in self.problems:
            self._skipped[p.reason] = self._skipped.get(p.reason, 0) + 1

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, source: str = "<memory>") -> RecordSet:
        return cls(frame, source)

    @classmethod
    def read(cls, path: str | Path) -> RecordSet:
        """A record file, or a run folder's ``records.jsonl``."""
        frame, problems = read_table(path)
        return cls(frame, str(record_file(path)), problems)

    @classmethod
    def from_records(cls, records: Sequence[dict], source: str = "<memory>") -> RecordSet:
        """Records (JSON objects) as :func:`read_table` makes a JSONL file of them."""
        frame = pd.DataFrame.from_records(list(records)) if records else pd.DataFrame()
        return cls(frame, source)

    # ------------------------------------------------------------------ bookkeeping
    @property
    def n_read(self) -> int:
        """Rows read plus lines that could not be parsed."""
        return len(self.frame) + sum(self._skipped.values())

    @property
    def mask(self) -> np.ndarray:
        """Boolean mask of rows still valid."""
        return self._code == 0

    @property
    def excluded(self) -> dict[str, int]:
        """Count of skipped lines and excluded rows per reason (each row counted once)."""
        counts = dict(self._skipped)
        per_code = np.bincount(self._code, minlength=len(self._reasons) + 1)
        for reason, c in zip(self._reasons, per_code[1:]):
            if c:
                counts[reason] = counts.get(reason, 0) + int(c)
        return counts

    def exclude(self, rows: np.ndarray, reason: str) -> int:
        """Mark rows (boolean mask over the frame) as excluded for ``reason``.

        Rows already excluded keep their first reason. Returns how many rows were newly
        excluded.
        """
        rows = np.asarray(rows, dtype=bool) & self.mask
        if rows.any():
            if reason not in self._reasons:
                self._reasons.append(reason)
            self._code[rows] = self._reasons.index(reason) + 1
        return int(rows.sum())

    def row_reasons(self) -> np.ndarray:
        """Each row's exclusion reason ("" for a usable row), as an object array."""
        return np.asarray(["", *self._reasons], dtype=object)[self._code]

    def excluded_rows(self) -> pd.DataFrame:
        """The excluded rows with their ``_row`` number and reason (for flagged output)."""
        bad = ~self.mask
        names = np.asarray(["", *self._reasons], dtype=object)
        return pd.DataFrame({ROW_COLUMN: self.frame.loc[bad, ROW_COLUMN].to_numpy(),
                             "reason": names[self._code[bad]]})

    def valid(self) -> pd.DataFrame:
        """The rows that passed every check so far."""
        return self.frame.loc[self.mask].reset_index(drop=True)

    def columns(self, spec: str | Iterable[str], what: str = "column") -> list[str]:
        """:func:`resolve_columns` against this table."""
        return resolve_columns(list(self.frame.columns), spec, source=self.source, what=what)

    # ------------------------------------------------------------------ checks
    def numeric(self, spec: str | Iterable[str], *, lo: float | None = None,
                hi: float | None = None, what: str = "value",
                allow_inf: bool = False, allow_missing: bool = False,
                words: Mapping[str, float] | None = None) -> np.ndarray:
        """Return the columns as a float matrix (n_rows, n_cols), excluding unusable rows.

        Reasons: ``missing_<what>`` (empty/None/NaN), ``non_numeric_<what>`` (text that is not a
        number), ``non_finite_<what>`` (inf), ``<what>_out_of_range`` (outside [lo, hi]).
        Values of excluded rows in the returned matrix are NaN. With ``allow_missing``, empty
        cells are kept as NaN instead (e.g. options a question does not have). ``words`` maps
        texts (compared stripped and lower-case) to the numbers they stand for
        (:data:`CORRECTNESS_WORDS`).
        """
        cols = self.columns(spec, what=what)
        values, is_missing = _as_numbers(self.frame[cols], words)
        if not allow_missing:
            self.exclude(is_missing.any(axis=1), f"missing_{what}")
        self.exclude((np.isnan(values) & ~is_missing).any(axis=1), f"non_numeric_{what}")
        if not allow_inf:
            self.exclude(np.isinf(values).any(axis=1), f"non_finite_{what}")
        self.exclude(_outside(values, lo, hi).any(axis=1), f"{what}_out_of_range")
        values[~self.mask] = np.nan
        return values

    def problems_of(self, column: str, rows: np.ndarray, *, lo: float | None = None,
                    hi: float | None = None, words: Mapping[str, float] | None = None
                    ) -> list[tuple[str, int, list]]:
        """What is wrong with one column's values in ``rows`` (a mask), each problem on its
        own (a row may show in two columns' problems, where :meth:`numeric` counts it once):
        ``(problem, count, up to two example values)`` for ``missing``, ``not numeric``,
        ``not finite`` and ``out of [lo, hi]``, in that order, those that occur."""
        raw = self.frame[[column]][rows]
        values, is_missing = _as_numbers(raw, words)
        values, is_missing, shown = values[:, 0], is_missing[:, 0], raw[column].to_numpy()
        bad_text = np.isnan(values) & ~is_missing
        finite = np.isfinite(values)
        checks = [("missing", is_missing), ("not numeric", bad_text),
                  ("not finite", np.isinf(values)),
                  (f"out of [{_bound(lo)}, {_bound(hi)}]",
                   finite & _outside(values[:, None], lo, hi)[:, 0])]
        return [(name, int(mask.sum()), _examples(shown[mask]))
                for name, mask in checks if mask.any()]
    def labels(self, column: str, allowed: Iterable | None = None, *,
               what: str = "label") -> np.ndarray:
        """Return a label column as strings, excluding missing and unknown labels.

        Labels are compared as stripped strings, so ``1``, ``1.0`` from a CSV float column and
        ``"1"`` are the same label when ``allowed`` holds ``"1"``. Reasons: ``missing_<what>``,
        ``unknown_<what>``.
        """
        col = self.columns([column], what=what)[0]
        raw = self.frame[col]
        self.exclude(raw.isna().to_numpy(), f"missing_{what}")
        text = _labels_as_text(raw)
        if allowed is not None:
            allowed_text = _labels_as_text(pd.Series(list(allowed), dtype=object))
            self.exclude(~np.isin(text, allowed_text) & self.mask, f"unknown_{what}")
        return text

    def groups(self, column: str, *, what: str = "group") -> np.ndarray:
        """A grouping column as stripped text, read as written ("NA" is a group, e.g. North
        America); a truly missing value (null, an empty cell) is excluded and counted as
        ``missing_<what>``."""
        col = self.columns([column], what=f"{what} column")[0]
        raw = self.frame[col]
        text = raw.astype(str).str.strip()
        self.exclude((raw.isna() | (text == "")).to_numpy(), f"missing_{what}")
        return _labels_as_text(raw.where(raw.notna(), ""))

    def summary(self, max_examples: int = 10) -> dict:
        """Counts that every result reports: rows read, used, excluded by reason, and the
        first ``max_examples`` flagged lines/rows (``row`` is the line number in the file)."""
        examples = [{"row": p.row, "reason": p.reason, "detail": p.detail}
                    for p in self.problems[:max_examples]]
        flagged = self.excluded_rows().head(max_examples - len(examples))
        examples += [{"row": int(r), "reason": str(why), "detail": ""}
                     for r, why in zip(flagged[ROW_COLUMN], flagged["reason"])]
        out = {"source": self.source, "n_read": self.n_read, "n_used": int(self.mask.sum()),
               "excluded": self.excluded, "flagged": sorted(examples, key=lambda e: e["row"])}
        if self.notes:
            out["notes"] = dict(self.notes)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def _labels_as_text(values: pd.Series) -> np.ndarray:
    """Labels as stripped strings; integral numbers print without a decimal part (1.0 -> "1")."""
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(np.float64)
    text = values.astype(str).str.strip().to_numpy(dtype=object)
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(numeric) & (np.mod(numeric, 1) == 0)
    text[integral] = numeric[integral].astype(np.int64).astype(str)
    return text.astype(str)


CORRECTNESS_WORDS: dict[str, float] = {
    **dict.fromkeys(("yes", "y", "true", "correct", "right"), 1.0),
    **dict.fromkeys(("no", "n", "false", "incorrect", "wrong"), 0.0)}
"""Texts a correctness column may hold for 1 and 0 (compared stripped and lower-case)."""


def _as_numbers(raw: pd.DataFrame, words: Mapping[str, float] | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(the columns as floats, NaN where a cell is no number; which cells are missing), one
    pass per column: a column of numbers is read as it is (its missing cells are its NaN; no
    text can be in it, so the texts of :data:`NA_TEXT` are looked for only in text columns)."""
    values = np.empty((len(raw), raw.shape[1]))
    missing = np.empty((len(raw), raw.shape[1]), dtype=bool)
    for j, name in enumerate(raw.columns):
        column = raw[name] if raw.columns.is_unique else raw.iloc[:, j]
        if _numbers_only(column):
            values[:, j] = column.to_numpy(np.float64, na_value=np.nan)
            # assigned, not np.isnan(..., out=missing[:, j]): numpy 2.4 wrote wrong cells
            # through that strided bool view (tests/test_records.py)
            missing[:, j] = np.isnan(values[:, j])
            continue
        if words:
            column = _words_as_numbers(column, words)
        values[:, j] = pd.to_numeric(column, errors="coerce").to_numpy(np.float64)
        missing[:, j] = (column.isna() | column.isin(NA_TEXT)).to_numpy()
    return values, missing


def _numbers_only(column: pd.Series) -> bool:
    """A column whose cells can only be numbers or missing (ints, floats, booleans)."""
    return pd.api.types.is_numeric_dtype(column.dtype) and \
        not pd.api.types.is_complex_dtype(column.dtype)


def _words_as_numbers(column: pd.Series, words: Mapping[str, float]) -> pd.Series:
    """A column with each text ``words`` names replaced by its number."""
    if not (column.dtype == object or pd.api.types.is_string_dtype(column.dtype)):
        return column
    return column.astype(object).map(
        lambda v: words.get(v.strip().lower(), v) if isinstance(v, str) else v)


def _outside(values: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    """Which values lie outside [lo, hi] (NaN never does)."""
    with np.errstate(invalid="ignore"):
        out = np.zeros(values.shape, dtype=bool)
        if lo is not None:
            out |= values < lo
        if hi is not None:
            out |= values > hi
    return out


def _bound(value: float | None) -> str:
    return "-inf" if value is None else f"{value:g}"


def _examples(values: np.ndarray, k: int = 2) -> list:
    """The first ``k`` distinct values (as read) of an array."""
    seen: list = []
    for value in values:
        if len(seen) == k:
            break
        if not any(value is s or value == s for s in seen):
            seen.append(value)
    return seen


def describe_problems(name: str, problems: list[tuple[str, int, list]]) -> str:
    """One column's problems in words: ``confidence: 300 out of [0, 1] (e.g. 87, 42.5)``."""
    parts = []
    for problem, count, examples in problems:
        shown = ", ".join(repr(v) if isinstance(v, str) else f"{v:g}"
                          if isinstance(v, (float, np.floating)) else str(v) for v in examples)
        parts.append(f"{count:,} {problem}" + (f" (e.g. {shown})" if examples and
                                               problem != "missing" else ""))
    return f"{name}: {', '.join(parts)}"


def id_text(values: pd.Series | np.ndarray | Sequence) -> np.ndarray:
    """Item ids as the text models are aligned by: a float that is a whole number is written
    as that integer (pandas reads an integer id column with a gap as floats, and JSON writers
    may write ``1.0``: the id ``1.0`` is the item ``1``); any other value as ``str()`` gives
    it (a text id stays as written: ``"007"`` is not ``7``).

    Examples
    --------
    >>> id_text(pd.Series([1.0, 2.0, float("nan")])).tolist()
    ['1', '2', 'nan']
    >>> id_text(pd.Series(["007", 3, 4.5], dtype=object)).tolist()
    ['007', '3', '4.5']
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "USiub":
        return values.astype(str)   # text or integers: nothing to rewrite
    series = values if isinstance(values, pd.Series) else pd.Series(
        values if isinstance(values, np.ndarray) else list(values))
    text = series.astype(str).to_numpy(dtype=object)
    if series.dtype.kind == "f":
        numbers = series.to_numpy(np.float64)
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(numbers) & (np.mod(numbers, 1) == 0)
        text[whole] = [str(int(v)) for v in numbers[whole]]   # int(): exact for any double
    elif series.dtype == object:
        for i, v in enumerate(series.to_numpy()):
            if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
                text[i] = str(int(v))
    return text.astype(str)


TABLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet")
"""File names :func:`write_table` writes (by suffix)."""


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """A record table as JSONL, CSV or Parquet (optionally gzipped), by the file name —
    written whole to a private file beside ``path`` and renamed onto it
    (:func:`confeval.runs.write_file`): never through a symbolic link, never half-written."""
    import io

    from .runs import write_file

    path = Path(path)
    name = path.name.lower()
    if not name.endswith(TABLE_SUFFIXES):
        raise RecordsError(f"{path}: use a .jsonl, .jsonl.gz, .csv, .csv.gz or .parquet name")
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    gzipped = {"method": "gzip", "mtime": 0} if name.endswith(".gz") else None
    if name.endswith((".jsonl", ".jsonl.gz")):
        frame.to_json(buffer, orient="records", lines=True, force_ascii=False,
                      compression=gzipped)
    elif name.endswith((".csv", ".csv.gz")):
        frame.to_csv(buffer, index=False, compression=gzipped)
    else:
        frame.to_parquet(buffer, index=False)
    write_file(path, buffer.getvalue())


def as_list(value: Any, what: str, where: str) -> list:
    """A list cell: a list, an array, or JSON text of a list (as CSV stores lists). Anything
    else is a :class:`RecordsError` naming ``where`` (a row or item) and ``what``."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):   # a number past the digit limit too
            raise RecordsError(f"{where}: {what} is not a JSON list") from None
    if not isinstance(value, list):
        raise RecordsError(f"{where}: {what} must be a list")
    return value
