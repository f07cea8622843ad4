"""The formats confeval reads, each recognised from a file's content: a registry of
:class:`Format` (``looks_like(path)``, ``samples(path, layout, data, levels)``, ``key(sample)``),
so that recognising a file is a loop over the formats, as inspect_ai's recorders are
chosen."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._registry import Registry

if TYPE_CHECKING:
    from .layout import Layout

__all__ = ["FORMATS", "READERS", "Format", "SampleKey", "Variants", "detect", "samples_of"]

_PEEK_CHARS = 1 << 20
_PEEK_LINES = 5
_LINE_PEEK = 1 << 16
"""Detection reads the first five lines, 1 MB in all at most, and of each line its first
64 KB: one damaged line is no other format, and a first line of several megabytes (a long
document in an lm-eval sample) is recognised by the keys its start holds."""

Samples = tuple[list, list[str], "str | None", dict, "list[str | None]"]
"""(the samples, each one's reason when unusable, the model, notes, each one's variant: the
lm-eval filter or Inspect scorer it was scored under, None where it names none)."""

WARNINGS = "warnings"
"""The notes' key of sentences about the file a reader must see (the records' ``warnings``,
not a count: :func:`~confeval.ingest.reader.read_records` moves them there)."""

SampleKey = Callable[[Any], "Hashable | None"]
"""What identifies one sample of a format (None: nothing does), so that a repeated one is
known."""


@dataclass(frozen=True)
class Variants:
    """What a format scores one sample several times under (lm-eval's filters, Inspect's
    scorers): each is read on its own, never pooled. ``kind`` names one in messages, ``flag``
    is the option naming one and ``option`` its field."""

    kind: str
    flag: str
    option: str


@dataclass(frozen=True)
class Format:
    """One tool's file format: whether a file is one, its samples (each the object a
    layout's row function takes, or None with its reason), what identifies a sample
    (``key``: a sample logged twice — a line repeated, a response retried — is one), what
    it scores a sample several times under (``variants``) and a sample's ``(id, epoch)``
    (``epoch``: formats that sample an id more than once)."""

    name: str
    looks_like: Callable[[Path], bool]
    samples: Callable[[Path, Layout, str | None, tuple[int, ...]], Samples]
    key: SampleKey = lambda sample: None
    variants: Variants | None = None
    epoch: Callable[[Any], tuple[str, int]] | None = None


def _first_lines(path: Path) -> list[tuple[str, bool]]:
    """Up to five lines of a (possibly gzipped) text file, 1 MB in all at most, each as
    (its first 64 KB, whether that is the whole line); a byte-order mark is no part of the
    first."""
    from .._untrusted import UntrustedFileError, open_text

    lines, budget = [], _PEEK_CHARS
    try:
        with open_text(path) as f:
            while len(lines) < _PEEK_LINES and budget > 0:
                asked = min(_LINE_PEEK, budget)
                line = f.readline(asked)
                if not line:
                    break
                budget -= len(line)
                ended = line.endswith("\n") or len(line) < asked   # shorter: the file ended
                lines.append((line, ended))
                while not ended and budget > 0:   # the rest of a long line, read past
                    rest = f.readline(min(_LINE_PEEK, budget))
                    budget -= len(rest)
                    ended = not rest or rest.endswith("\n")
    except (OSError, EOFError, UntrustedFileError):
        return lines   # what could be read: a damaged file is said so by its reader
    return lines


def _jsonl_like(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith((".jsonl", ".jsonl.gz", ".ndjson",
                                                          ".json"))


def _is_inspect(path: Path) -> bool:
    from .inspect_log import looks_like_log

    return path.is_file() and path.name.lower().endswith((".eval", ".json")) \
        and looks_like_log(path)


def _is_lm_eval(path: Path) -> bool:
    from .lm_eval import looks_like_samples

    # a damaged first line is counted, not taken for another format
    return _jsonl_like(path) and any(looks_like_samples(line, whole)
                                     for line, whole in _first_lines(path))


def _is_openai(path: Path) -> bool:
    from .._untrusted import open_text
    from .openai import looks_like_responses

    if not _jsonl_like(path):
        return False
    lines = _first_lines(path)
    first, whole = lines[0] if lines else ("", True)
    if first.lstrip().startswith("[") and not path.name.lower().endswith(".gz"):
        with open_text(path) as f:
            first = f.read(_PEEK_CHARS)   # a JSON list of responses spans many lines
    return looks_like_responses(first, whole)


_READ_CACHE: dict[tuple, Any] = {}
_READ_CACHE_SIZE = 2


def _read_once(reader: Callable[[Path], Any], path: Path, beside: tuple[Path, ...] = ()
               ) -> Any:
    """``reader(path)``, kept for the next call on the same unchanged file (its path, size
    and modification time, and those of the files ``beside`` it that the reader also reads):
    a file of several filters or scorers is read once, then scored one filter or scorer at a
    time. The two most recent reads are kept."""
    try:
        stats = [(str(p.resolve()), st.st_size, st.st_mtime_ns)
                 for p in (path, *beside) for st in [p.stat()]]
    except OSError:
        return reader(path)
    key = (reader.__module__, reader.__name__, *stats)
    if key not in _READ_CACHE:
        _READ_CACHE[key] = reader(path)
        while len(_READ_CACHE) > _READ_CACHE_SIZE:
            _READ_CACHE.pop(next(iter(_READ_CACHE)))
    return _READ_CACHE[key]


def _read_inspect(path: Path) -> tuple:
    from .inspect_log import read_log

    return read_log(path, with_scorers=True)


def _inspect_samples(path: Path, layout: Layout, data: str | None,
                     levels: tuple[int, ...]) -> Samples:
    samples, reasons, model, scorers = _read_once(_read_inspect, path)
    return list(samples), list(reasons), model, {}, list(scorers)


def _lm_eval_samples(path: Path, layout: Layout, data: str | None,
                     levels: tuple[int, ...]) -> Samples:
    from .lm_eval import read_samples

    # the results files beside it say the model, delimiter and output type: a changed one
    # is a new read
    samples = _read_once(read_samples, path, tuple(sorted(path.parent.glob("results_*.json"))))
    if samples.output_type != "multiple_choice" and not layout.generation:
        raise ValueError(f"{path}: lm-eval samples of a {samples.output_type} task have no "
                         f"options to read {layout.what} from (a multiple_choice task's "
                         "have); `confeval score` reads their per-sample metrics")
    notes: dict = {"lm_eval_targets": {
        "both_a_choice_text_and_an_index": samples.ambiguous_targets,
        "read_as": "the choice whose text the target is (the line's acc, acc_norm and "
                   "acc_bytes fit either reading)"}} if samples.ambiguous_targets else {}
    if samples.warnings:
        notes[WARNINGS] = list(samples.warnings)
    return (list(samples.samples), list(samples.reasons), samples.model, notes,
            list(samples.filters))


def _openai_samples(path: Path, layout: Layout, data: str | None,
                    levels: tuple[int, ...]) -> Samples:
    """Responses matched to the rows of ``data`` they answer (:mod:`.matching`)."""
    from .matching import Answered, read_data_rows
    from .openai import read_responses

    if not data:
        raise ValueError(f"{path}: OpenAI-compatible responses carry no gold answer: name the "
                         "data they answer with --data FILE (matched by custom_id to its "
                         "item_id or id, else by position)")
    rows = read_data_rows(data, questions=layout.data_rows == "questions")
    responses, reasons, model = read_responses(path)
    samples: list = []
    for response, reason in zip(responses, reasons):
        item = rows.find(response) if response is not None else reason
        if isinstance(item, str):
            samples.append(None)
            reasons[len(samples) - 1] = item
            continue
        samples.append(Answered(response, item, levels))
    return samples, reasons, model, {f"data {data}": {
        "data_rows": len(rows.items), "data_rows_without_response": rows.unanswered}}, \
        [None] * len(samples)


def _lm_eval_key(sample) -> Hashable | None:
    return sample.key   # its doc_id under one filter and set of metrics


def _inspect_key(sample) -> Hashable | None:
    return (sample.doc_id, sample.epoch, sample.scorer)


def _inspect_epoch(sample) -> tuple[str, int]:
    return sample.doc_id, sample.epoch


def _openai_key(answered) -> Hashable | None:
    return answered.response.custom_id   # a response matched by position has none


READERS: Registry[Format] = Registry("format", {
    "inspect": Format("inspect", _is_inspect, _inspect_samples, _inspect_key,
                      Variants("scorer", "--scorer", "scorer"), _inspect_epoch),
    "lm-eval": Format("lm-eval", _is_lm_eval, _lm_eval_samples, _lm_eval_key,
                      Variants("filter", "--filter", "filter_name")),
    "openai": Format("openai", _is_openai, _openai_samples, _openai_key),
})
"""Every format confeval reads, in the order a file is tried against them."""

FORMATS = ("auto", *READERS, "none")
"""``--from`` choices."""


def detect(path: str | Path) -> str | None:
    """The format of ``path`` from its content (at most 1 MB of its first lines, 64 KB of
    each), or None."""
    path = Path(path)
    return next((name for name, fmt in READERS.items() if fmt.looks_like(path)), None)


def samples_of(path: str | Path, fmt: str, layout: Layout, data: str | None,
               levels: tuple[int, ...]) -> Samples:
    """The samples of a file of format ``fmt``, as ``layout`` will read them."""
    return READERS[fmt].samples(Path(path), layout, data, levels)
