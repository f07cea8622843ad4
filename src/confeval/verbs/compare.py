"""``confeval compare``: several models (judges, measures) scored by one suite on the same
items, ranked, with paired tests — written once against the suite object.

The one path: each input (a record file, a run folder or another tool's file; one model each)
is read by its suite's one loader and its comparison's reader, which excludes and counts
unusable rows exactly as ``confeval <suite> score`` does; the usable rows are aligned by item id
(``--id-col``): only the ids every model has are compared, in the order of the first input, and
``not_shared[name]`` counts the ids some other model has and this one lacks. The suite's
:class:`~confeval.suites.base.Comparison` turns the aligned arrays into per-item metrics
(:class:`~confeval.metrics.compare.PairedMetric`) — where it splits items (the conformal
calibration/test halves) it splits the shared item positions once, so every model gets the same
split — and :func:`~confeval.metrics.compare.compare_models` does the statistics.

Which suite compares: ``--suite``, else the suite whose run folders the inputs are (a run
folder says which suite wrote it; run folders of several suites: ``auto``), else ``score``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..suites import SUITES
from ..suites.base import Suite
from ..suites.options import (
    MAX_BOOTSTRAP,
    Options,
    build,
    comma_list,
    option,
    option_fields,
    run_folder_options,
    to_json,
)
from .score import load

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["CARD_ASPECTS", "CompareOptions", "align_items", "compare_auto", "compare_files",
           "compare_records", "compare_run_config", "compare_section", "comparable", "folder_suite",
           "model_names", "run_identity", "split_by_model", "split_name", "suite_options",
           "trust_cards"]

_SCORE = ("score",)


def comparable() -> dict[str, Suite]:
    """The suites ``confeval compare`` compares (those with a comparison), by name."""
    return {name: suite for name, suite in SUITES.items() if suite.compares}


def _metric_names(text: str) -> tuple[str, ...]:
    """``--metrics``' text: ``all`` (the default) is every metric, ``()``; an empty list is
    refused rather than read as every metric."""
    if str(text).strip() == "all":
        return ()
    names = comma_list(text)
    if not names:
        raise ValueError(f"--metrics {text!r} names no metric; leave --metrics out (or say "
                         "all) to compare every metric")
    return names


def _show_metric_names(names: tuple[str, ...]) -> str:
    return ",".join(names) or "all"


@dataclasses.dataclass(frozen=True)
class CompareOptions(Options):
    """Options of ``confeval compare`` itself: the suite whose metrics compare the models, the
    column aligning items, the paired bootstrap and the significance level. The suite's own
    scoring options are given beside them (:func:`suite_options`)."""

    id_col: str | None = option(None, "Column with each item's id: items are aligned across "
                                "models by it, and only ids every model has are compared "
                                "(measures: the question and option columns align rows).",
                                stages=_SCORE)
    suite: str | None = option(None, "Suite whose metrics compare the models (default: the "
                               "suite whose run folders the inputs are, else score); auto: run "
                               "folders of several suites, grouped by suite and by the run's "
                               "model, with a trust card per model.", stages=_SCORE)
    model_col: str | None = option(None, "One input holding every model: the column naming "
                                   "each row's model.", stages=_SCORE)
    bootstrap: int = option(1000, "Paired bootstrap resamples of the items (intervals, rank "
                            "intervals, bootstrap p-values).", stages=_SCORE, minimum=1,
                            maximum=MAX_BOOTSTRAP)
    seed: int = option(0, "Seed of the paired bootstrap.", stages=_SCORE)
    significance: float = option(0.05, "Significance level of the Holm-adjusted pairwise "
                                 "tests (the group letters).", stages=_SCORE)
    metrics: tuple[str, ...] = option((), "Comma list of the metrics to compare (the names "
                                      "--json uses, e.g. accuracy,ece,lac_coverage), or all: "
                                      "every metric of the suite. Not with --suite auto, "
                                      "whose trust cards need every metric.", stages=_SCORE,
                                      parse=_metric_names, show=_show_metric_names)

    def __post_init__(self) -> None:
        super().__post_init__()
        names = [*comparable(), "auto"]
        if self.suite is not None and self.suite not in names:
            raise ValueError(f"--suite {self.suite!r}: confeval compare compares "
                             f"{', '.join(names)}")
        if not 0 < self.significance < 1:
            raise ValueError(f"--significance must be in (0, 1), got {self.significance}")
        named = _metric_names(self.metrics) if isinstance(self.metrics, str) else self.metrics
        object.__setattr__(self, "metrics", tuple(dict.fromkeys(named)))   # once each
        if self.metrics and self.suite == "auto":
            raise ValueError(_METRICS_NOT_AUTO)


_METRICS_NOT_AUTO = ("--metrics compares some metrics of one suite; run folders of several "
                     "suites (--suite auto) are compared on every metric, which their trust "
                     "cards need")


def suite_options(suite: str, values: Mapping[str, Any], path: str | Path | None = None
                  ) -> Any:
    """The options of ``suite`` from the values given on the command line (``values``: only
    those given; the rest are the suite's defaults, or a run folder's own when ``path`` is
    one). A value that is no option of the suite, or a required option missing, is one
    :class:`ValueError`."""
    entry = comparable()[suite]
    cls, ignored = entry.Options, entry.not_compared
    fields = {f.name: f for f in option_fields(cls, "score")}
    bad = [k for k in values if k not in fields or k in ignored]
    if bad:
        flags = ", ".join("--" + k.replace("_", "-") for k in bad)
        raise ValueError(f"{flags}: not an option of confeval compare --suite {suite}")
    own = (run_folder_options(path, suite) if path is not None else None) or {}
    merged = {**{k: v for k, v in own.items() if k in fields}, **values}
    missing = [f for f in fields.values()
               if f.default is dataclasses.MISSING and f.name not in merged]
    if missing:
        flags = ", ".join("--" + f.name.replace("_", "-") for f in missing)
        raise ValueError(f"confeval compare --suite {suite} needs {flags}")
    return build(cls, merged, what=f"the {suite} suite")


def align_items(ids: Mapping[str, np.ndarray], sources: Mapping[str, str]
                ) -> tuple[list[str], dict[str, np.ndarray], dict[str, int]]:
    """(shared ids in the first model's order, each model's positions of them, each model's
    ``not_shared`` count) from every model's ids of its usable rows. A repeated id within one
    model, or no id shared by all, is a :class:`ValueError` naming the source."""
    index: dict[str, dict[str, int]] = {}
    for name, model_ids in ids.items():
        seen, counts = np.unique(model_ids, return_counts=True)
        if (counts > 1).any():
            raise ValueError(f"{sources[name]}: id {str(seen[counts > 1][0])!r} appears "
                             f"{int(counts.max())} times; ids must be unique")
        index[name] = {str(i): k for k, i in enumerate(model_ids)}
    every = set.intersection(*(set(m) for m in index.values()))
    union = set.union(*(set(m) for m in index.values()))
    if not every:
        raise ValueError("no item id is shared by every model: "
                         + ", ".join(f"{sources[n]} ({len(m)} ids, e.g. "
                                     f"{', '.join(repr(str(i)) for i in list(m)[:3])})"
                                     for n, m in index.items()))
    first = next(iter(ids))
    shared = [str(i) for i in ids[first] if str(i) in every]
    positions = {name: np.fromiter((m[i] for i in shared), dtype=np.intp, count=len(shared))
                 for name, m in index.items()}
    return shared, positions, {name: len(union) - len(m) for name, m in index.items()}


def compare_records(sets: Mapping[str, RecordSet], options: CompareOptions,
                    suite_opts: Mapping[str, Any] | Any, *, live: bool = False) -> dict:
    """The comparison of record sets (one per model, ``sets[name]``) in the issue's JSON
    contract: ``{"suite", "models", "n_items_shared", "not_shared", "excluded", "options",
    "warnings", "metrics"}`` — ``warnings``: counted, the pairs of a metric that have no
    p-value and why, and metrics whose letters are a cover
    (:func:`~confeval.metrics.compare.compare_metric`). ``suite_opts`` is the suite's
    options, or a mapping name -> options (run folders bring their own); the scoring options
    must agree across models. ``live``: the
    records are live runs', whose ``item_id`` names each item unless ``--id-col`` says
    otherwise."""
    from ..records import id_text

    if len(sets) < 2:
        raise ValueError("confeval compare needs at least two inputs (one model each)")
    if options.suite is None:   # record sets say no suite: a confidence and a correctness
        options = dataclasses.replace(options, suite="score")
    suite = comparable()[options.suite]
    comp = suite.comparison()
    per_model = suite_opts if isinstance(suite_opts, Mapping) else dict.fromkeys(sets,
                                                                                 suite_opts)
    used = _agreed_options(per_model, suite.not_compared,
                           {n: rs.source for n, rs in sets.items()})
    arrays, ids = {}, {}
    for name, rs in sets.items():
        id_col = options.id_col or rs.id_col   # another tool's file names its documents
        if id_col is None and live and "item_id" in rs.frame.columns:
            id_col = "item_id"
        if id_col is not None:
            if id_col not in rs.frame.columns:
                raise ValueError(f"{rs.source}: no id column {id_col!r} (columns: "
                                 f"{_columns_of(rs.frame)})")
            rs.exclude(rs.frame[id_col].isna().to_numpy() & rs.mask, "missing_id")
        read = dict(comp.read(rs, per_model[name]))
        keep = np.flatnonzero(rs.mask)
        item_id = read.pop("item_id", None)
        if item_id is None and id_col is None:
            raise ValueError(f"confeval compare --suite {options.suite} needs --id-col (the "
                             "column with each item's id, to align the models' items)")
        size = keep.size if item_id is None else len(item_id)   # rows, or the suite's items
        wrong = [k for k, v in read.items() if isinstance(v, np.ndarray) and v.ndim
                 and len(v) != size]
        if wrong:   # a reader's contract: arrays over the usable rows it leaves
            raise RuntimeError(f"{options.suite} reader: {wrong} do not match the usable rows")
        arrays[name] = read
        # 1.0 is the item 1: an integer id column with a gap reads as floats (id_text)
        ids[name] = id_text(item_id) if item_id is not None else \
            id_text(rs.frame[id_col])[keep]
    shared, positions, not_shared = align_items(ids, {n: rs.source for n, rs in sets.items()})
    aligned = {name: {k: (v[positions[name]] if isinstance(v, np.ndarray) and v.ndim else v)
                      for k, v in a.items()}
               for name, a in arrays.items()}
    out = {"suite": options.suite, "models": [], "n_items_shared": len(shared),
           "not_shared": not_shared,
           "excluded": {name: rs.excluded for name, rs in sets.items()},
           "options": {}}
    # compare's own resampling replaces the suite's (a suite drawing its resamples itself)
    shared_fields = {f.name for f in dataclasses.fields(used)} & {"bootstrap", "seed"}
    used = dataclasses.replace(used, **{k: getattr(options, k) for k in shared_fields})
    out["options"] = {**to_json(used), **to_json(options)}
    # what reading each model's file said (another tool's file, tied top options), then
    # what the statistics say
    out["warnings"] = [f"{name}: {w}" for name, rs in sets.items() for w in rs.warnings]
    if comp.warnings is not None:
        out["warnings"] += comp.warnings(aligned, used)
    out["models"], out["metrics"] = _tables(_chosen(comp.metrics(aligned, used), options),
                                            options, out["warnings"], "")
    if comp.across is not None:
        key, metrics = comp.across(aligned, used)
        if metrics:
            ranked, tables = _tables(metrics, options, out["warnings"],
                                     key.replace("_", " ") + ": ")
            out[key] = {"ranked": ranked, "metrics": tables}
    return out


def _columns_of(frame) -> str:
    """The file's own columns for a message: not the row numbers confeval keeps beside
    them (``_row``)."""
    from ..records import ROW_COLUMN

    return ", ".join(str(c) for c in frame.columns if c != ROW_COLUMN)


def _chosen(metrics: dict, options: CompareOptions) -> dict:
    """The metrics ``--metrics`` names, in its order (all of them without it); a name the
    suite has no metric of is an error listing the names it has."""
    if not options.metrics:
        return metrics
    unknown = [m for m in options.metrics if m not in metrics]
    if unknown:
        raise ValueError(f"--metrics: no metric {', '.join(map(repr, unknown))} in this "
                         f"comparison; it has {', '.join(metrics)}")
    return {m: metrics[m] for m in dict.fromkeys(options.metrics)}


def _tables(metrics: dict, options: CompareOptions, warnings: list[str], prefix: str
            ) -> tuple[list[str], dict]:
    """(the entries in the rank order of the first metric, each metric's table); each
    table's warnings go to ``warnings``, as ``<prefix><metric>: <warning>``."""
    from ..metrics.compare import compare_models

    if not metrics:
        raise ValueError("no metric to compare (see the suite's options)")
    tables = compare_models(metrics, n_resamples=options.bootstrap, seed=options.seed,
                            alpha=options.significance)
    for metric, table in tables.items():
        warnings += [f"{prefix}{metric}: {w}" for w in table.get("warnings", ())]
    first = next(iter(tables.values()))
    return first["ranked"], {metric: {k: v for k, v in table.items()
                                      if k not in ("ranked", "warnings")}
                             for metric, table in tables.items()}


def _agreed_options(per_model: Mapping[str, Any], ignored: tuple[str, ...],
                    sources: Mapping[str, str]) -> Any:
    """The one set of scoring options every model is scored with; models whose options
    differ (run folders made with other options) are one error naming the option."""
    names = list(per_model)
    first = to_json(per_model[names[0]])
    for name in names[1:]:
        other = to_json(per_model[name])
        differ = [k for k in first if k not in ignored and first[k] != other.get(k)]
        if differ:
            flag = "--" + differ[0].replace("_", "-")
            raise ValueError(f"{sources[names[0]]} and {sources[name]} were made with "
                             f"different {flag} ({first[differ[0]]!r} and "
                             f"{other.get(differ[0])!r}); give {flag} to compare them alike")
    return per_model[names[0]]


def compare_files(inputs: Mapping[str, str | Path] | Sequence[tuple[str, str | Path]],
                  options: CompareOptions, values: Mapping[str, Any] | None = None) -> dict:
    """``confeval compare`` on record files or run folders (``inputs``: model name -> path,
    or (name, path) pairs), the suite's options from ``values`` (those given on the command
    line; a run folder's own fill in the rest)."""
    pairs = list(inputs.items()) if isinstance(inputs, Mapping) else list(inputs)
    if options.suite is None:
        options = dataclasses.replace(options, suite=_inferred_suite([p for _, p in pairs]))
    if options.suite == "auto":
        return compare_auto(pairs, options, values or {})
    inputs = dict(pairs)
    if len(inputs) < len(pairs):
        raise ValueError("two inputs have one model name; rename one with --name NAME=INPUT")
    for path in inputs.values():
        other = folder_suite(path)
        if other is not None and other != options.suite:
            raise ValueError(f"{path} is a run of the {other} suite, not {options.suite}; "
                             "give --suite to match, or --suite auto for runs of several "
                             "suites")
    suite = comparable()[options.suite]
    values = dict(values or {})
    if options.id_col is not None and "id_col" in {f.name for f in option_fields(suite.Options)}:
        values["id_col"] = options.id_col   # the suite's own id column is compare's
    suite_id = getattr(suite_options(options.suite, values), "id_col", None) \
        if options.id_col is None else None
    if suite_id is not None:   # the suite names its item ids itself (diagnose: item_id)
        options = dataclasses.replace(options, id_col=suite_id)
    live = all(_is_live_run(p) for p in inputs.values())
    if options.model_col is not None:
        if len(inputs) != 1:
            raise ValueError(f"--model-col {options.model_col!r} reads every model from one "
                             f"input; {len(inputs)} were given")
        (path,) = inputs.values()
        own = suite_options(options.suite, values, path)
        sets = split_by_model(load(suite, path, own), options.model_col)
        return compare_records(sets, options, own, live=live)
    if len(inputs) < 2:
        raise ValueError("confeval compare needs at least two inputs (one model each), or "
                         "one with --model-col")
    per_model = {name: suite_options(options.suite, values, path)
                 for name, path in inputs.items()}
    sets = {name: load(suite, path, per_model[name]) for name, path in inputs.items()}
    result = compare_records(sets, options, per_model, live=live)
    result["cards"] = trust_cards({options.suite: result})
    return result


def _is_live_run(path: str | Path) -> bool:
    """Whether ``path`` is a live run's folder (its records carry each item's ``item_id``)."""
    from ..runs import RunFolder

    path = Path(path)
    if not (path.is_dir() and (path / RunFolder.RUN).is_file()):
        return False
    config = RunFolder(path, create=False).config()
    return config.get("command") in ("run", "demo-live")


def _inferred_suite(paths: Sequence[str | Path]) -> str:
    """The suite of the inputs when ``--suite`` is not given: the suite whose run folders
    they are (``auto`` for run folders of several suites), else ``score``."""
    suites = {folder_suite(p) for p in paths}
    folders = suites - {None}
    odd = sorted(folders - set(comparable()))
    if odd:
        raise ValueError(f"a folder of {odd[0]!r} among the inputs: confeval compare compares "
                         f"runs of {', '.join(comparable())}")
    if len(folders) > 1:
        return "auto"
    if folders and None in suites:
        raise ValueError("a run folder of the " + next(iter(folders)) + " suite beside record "
                         "files: give --suite to say how the files are read")
    return next(iter(folders)) if folders else "score"


def folder_suite(path: str | Path) -> str | None:
    """Whose run folder ``path`` is: a live run's suite, a scoring command's suite (``sets
    score`` -> ``sets``, ``score`` -> ``score``), else the command that wrote it (``compare``,
    ``guarantee``: no suite's); None for a record file or a folder that says nothing."""
    from ..runs import RunFolder
    from .score import scoring_commands

    path = Path(path)
    if not (path.is_dir() and (path / RunFolder.RUN).is_file()):
        return None
    config = RunFolder(path, create=False).config()
    command = str(config.get("command") or "")
    scoring = scoring_commands().get(command)
    if scoring is not None:
        return scoring.suite
    if config.get("suite") and (command in ("run", "demo-live") or command.endswith(" run")):
        return str(config["suite"])
    return command.split(" ")[0] or None


def run_identity(path: str | Path) -> tuple[str, str]:
    """(suite, model) of a live run folder, from its ``run.json``; anything else is one
    :class:`ValueError` (``--suite auto`` groups run folders by both)."""
    from ..runs import RunFolder

    path = Path(path)
    if not (path.is_dir() and (path / RunFolder.RUN).is_file()):
        raise ValueError(f"{path}: --suite auto reads run folders (a record file says neither "
                         "its suite nor its model; give --suite)")
    config = RunFolder(path, create=False).config()
    suite, model = folder_suite(path), config.get("model")
    if suite not in comparable():
        raise ValueError(f"{path}: a run of {suite or config.get('command')!r}, which "
                         f"confeval compare does not compare ({', '.join(comparable())})")
    return str(suite), str(model or path.name)


def compare_auto(inputs: Sequence[tuple[str, str | Path]], options: CompareOptions,
                 values: Mapping[str, Any]) -> dict:
    """``--suite auto``: run folders grouped by their suite, each model named by its run's
    model (unless named with ``--name``), every suite with two models or more compared as
    ``--suite <suite>`` would (command-line options applying to the suites that have them),
    and a trust card per model across the suites (:func:`trust_cards`)."""
    if options.metrics:   # run folders of several suites, --suite auto inferred
        raise ValueError(_METRICS_NOT_AUTO)
    groups: dict[str, dict[str, Path]] = {}
    for name, path in inputs:   # name: the run's model unless --name named it
        suite, _ = run_identity(path)
        if name in groups.setdefault(suite, {}):
            raise ValueError(f"two {suite} runs of model {name!r} ({groups[suite][name]} "
                             f"and {path}); name one with --name NAME=INPUT")
        groups[suite][name] = Path(path)
    compared = {suite: models for suite, models in groups.items() if len(models) >= 2}
    if not compared:
        raise ValueError("--suite auto: no suite has runs of two models ("
                         + ", ".join(f"{s}: {', '.join(m)}" for s, m in groups.items()) + ")")
    suites = {}
    # live runs' records carry their item's id as item_id
    options = dataclasses.replace(options, id_col=options.id_col or "item_id")
    for suite, models in compared.items():
        entry = comparable()[suite]
        fields = {f.name for f in option_fields(entry.Options, "score")}
        given = {k: v for k, v in values.items()
                 if k in fields and k not in entry.not_compared}
        suites[suite] = compare_files(models, dataclasses.replace(options, suite=suite), given)
    first = next(iter(suites.values()))
    models = list(dict.fromkeys([*first["models"], *(m for d in suites.values()
                                                     for m in d["models"])]))
    return {"suite": "auto", "models": models,
            "n_items_shared": {s: d["n_items_shared"] for s, d in suites.items()},
            "not_shared": {s: d["not_shared"] for s, d in suites.items()},
            "skipped": {s: list(m) for s, m in groups.items() if s not in compared},
            "warnings": [f"{s}: {w}" for s, d in suites.items() for w in d["warnings"]],
            "metrics": {f"{s}.{metric}": table for s, d in suites.items()
                        for metric, table in d["metrics"].items()},
            "suites": suites, "cards": trust_cards(suites)}


CARD_ASPECTS: tuple[str, ...] = ("calibration", "discrimination", "coverage", "set size",
                               "interval width", "robustness", "diagnosis", "accuracy")
"""A trust card's aspects, in its order; each suite says which of its metrics gives which
(:attr:`~confeval.suites.base.Suite.card_aspects`)."""


def trust_cards(suites: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """One card per model: for each aspect of :data:`CARD_ASPECTS` that some compared suite
    measures for it (the first registered suite that does), the suite and metric, the value
    with its interval, the rank among the models compared there (``of``), its rank interval
    and its group letters."""
    from ..suites import SUITES

    sources = {aspect: [(name, pattern) for name in SUITES if name in suites
                        for own, pattern in SUITES[name].card_aspects if own == aspect]
               for aspect in CARD_ASPECTS}
    cards: dict[str, dict] = {}
    for aspect in CARD_ASPECTS:
        for suite, pattern in sources[aspect]:
            metrics = (suites.get(suite) or {}).get("metrics") or {}
            metric = next((m for m in metrics if m == pattern or (
                pattern.startswith("*") and m.endswith(pattern[1:]))), None)
            if metric is None:
                continue
            table = metrics[metric]
            for model, row in table["models"].items():
                card = cards.setdefault(model, {})
                if aspect in card:
                    continue
                card[aspect] = {"suite": suite, "metric": metric, "value": row["value"],
                                "low": row["low"], "high": row["high"], "rank": row["rank"],
                                "of": len(table["models"]), "rank_low": row["rank_low"],
                                "rank_high": row["rank_high"], "group": row["group"],
                                "higher_is_better": table["higher_is_better"],
                                "target": table.get("target")}
    return cards


def split_by_model(rs: RecordSet, model_col: str) -> dict[str, RecordSet]:
    """One record set per model of ``rs`` (``model_col`` names each row's model), in the order
    models first appear; a row without a model is an error naming the file."""
    from ..records import RecordSet

    frame = rs.frame
    if model_col not in frame.columns:
        raise ValueError(f"{rs.source}: no model column {model_col!r} (columns: "
                         f"{_columns_of(frame)})")
    missing = int(frame[model_col].isna().sum())
    if missing:
        raise ValueError(f"{rs.source}: {missing:,} rows have no model in {model_col!r}")
    names = frame[model_col].astype(str)
    return {name: RecordSet.from_frame(frame[names == name].reset_index(drop=True),
                                       f"{rs.source} [{model_col}={name}]")
            for name in names.unique()}


def compare_run_config(inputs: Sequence[tuple[str, str | Path]], options: CompareOptions,
                       values: Mapping[str, Any], result: Mapping[str, Any]) -> dict:
    """The ``run.json`` config of a ``confeval compare`` folder: the working directory, every
    input (name, path) with its SHA-256 (a run folder's: of its records), compare's own
    options and the suite options given on the command line (``given``), and every option the
    models were compared with (``options``, as reported) — what ``confeval rerun`` needs to
    repeat it."""
    import os

    from ..runs import file_sha256

    return {"command": "compare", "cwd": os.getcwd(), "suite": result["suite"],
            "inputs": [{"name": name, "path": str(path), "sha256": file_sha256(Path(path))}
                       for name, path in inputs],
            "compare_options": to_json(options), "given": dict(values),
            "options": dict(result.get("options", {}))}


def compare_section(result: Mapping[str, Any]) -> dict:
    """The report section of a comparison."""
    return {"kind": "compare", "title": f"Comparison ({result['suite']} suite)",
            "results": dict(result)}


def rerun_compare(config: Mapping[str, Any]) -> dict:
    """The comparison of a ``confeval compare`` folder computed again from its ``run.json``
    (every input checked to be the file it was)."""
    from .score import check_unchanged

    if "compare_options" not in config:
        raise ValueError("this compare folder was written before confeval recorded how to "
                         "repeat a comparison (no compare_options in run.json); run the "
                         "comparison again")
    inputs = []
    for entry in config.get("inputs") or []:
        path = check_unchanged(config, entry["path"], entry["sha256"])
        inputs.append((entry["name"], path))
    options = build(CompareOptions, config["compare_options"], what="confeval compare")
    return compare_files(inputs, options, config.get("given") or {})


def _run_model(path: Path) -> str | None:
    from ..runs import RunFolder

    if not (path.is_dir() and (path / RunFolder.RUN).is_file()):
        return None
    model = (RunFolder(path, create=False).config()).get("model")
    return str(model) if model else None


def model_names(paths: list[Path], overrides: list[str] | None = None
                ) -> list[tuple[str, Path]]:
    """Each input's model name, in the order given: ``NAME=INPUT`` overrides, else a live run
    folder's model, else the file name without its format extension (a scoring folder: the
    folder's name). Two inputs of one name and one suite are an error (runs of one model in
    several suites are what ``--suite auto`` groups).

    A name may hold ``=`` (``--name 'a=b=x.csv'`` names x.csv ``a=b``): an override splits at
    the last ``=`` whose right side is one of the inputs given (:func:`split_name`). An input
    given twice takes its ``--name``s in order, the first occurrence the first name."""
    from ..records import stem_of

    given: dict[str, list[str]] = {}   # an input given twice can be named twice
    for item in overrides or []:
        name, target = split_name(item, paths)
        given.setdefault(target, []).append(name)
    for target, names_of in given.items():
        count = sum(str(p) == target for p in paths)
        if len(names_of) > count:
            raise ValueError(f"--name names {target} {len(names_of)} times "
                             f"({', '.join(map(repr, names_of))}); it is given {count} "
                             f"time{'s' if count > 1 else ''}")
    seen: dict[tuple[str | None, str], Path] = {}
    names: list[tuple[str, Path]] = []
    for path in paths:
        queue = given.get(str(path)) or []
        name = (queue.pop(0) if queue else None) or _run_model(path) or stem_of(path)
        key = (folder_suite(path), name)
        if key in seen:
            raise ValueError(f"two inputs are named {name!r} ({seen[key]} and {path}); "
                             "rename one with --name NAME=INPUT")
        seen[key] = path
        names.append((name, path))
    return names


def split_name(item: str, paths: Sequence[str | Path]) -> tuple[str, str]:
    """(name, input) of one ``--name NAME=INPUT``: split at the last ``=`` whose right side
    is one of ``paths`` (as given, or the same path written otherwise: ``./x.csv``), so names
    and paths may both hold ``=``. No such ``=``, or an empty name, is one :class:`ValueError`
    naming the option and the inputs."""
    inputs = {str(Path(p)) for p in paths}
    cuts = [i for i, ch in enumerate(item) if ch == "="]
    for cut in reversed(cuts):
        name, target = item[:cut], str(Path(item[cut + 1:])) if item[cut + 1:] else ""
        if target in inputs:
            if not name:
                raise ValueError(f"--name {item!r}: the name before '=' is empty")
            return name, target
    if not cuts:
        raise ValueError(f"--name {item!r}: expected NAME=INPUT")
    shown = ", ".join(sorted(inputs)[:5]) + (f" and {len(inputs) - 5} more"
                                             if len(inputs) > 5 else "")
    raise ValueError(f"--name {item!r}: no '=' in it is followed by an input given (the "
                     f"inputs: {shown}); write NAME=INPUT with INPUT as given")
