"""The ingest readers as a suite calls them: ``read_records(path, "sets", ...)`` reads with the
sets suite's layout, and a format a suite has no layout for names the commands that read it,
as every command says it."""

from __future__ import annotations

from confeval.ingest import import_records as _import_records
from confeval.ingest import read_records as _read_records
from confeval.suites import SUITES
from confeval.verbs.score import load_layout_error


def read_records(path, suite: str, *args, **kwargs):
    with load_layout_error():
        return _read_records(path, SUITES[suite].layout(), *args, what=f"{suite} records",
                             **kwargs)


def import_records(path, suite: str, *args, **kwargs):
    with load_layout_error():
        return _import_records(path, SUITES[suite].layout(), *args, **kwargs)
