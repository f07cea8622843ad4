"""Validate a run folder's run.json and metrics.json against the JSON Schemas the
documentation publishes (docs/schemas/); shared by the schema tests and the live-run tests."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@cache
def validator(name: str):
    import jsonschema  # the dev extra: every test run that reaches here has it

    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_holds_schemas(folder: Path) -> set[str]:
    """Assert run.json and metrics.json of ``folder`` hold their schemas; return the section
    kinds of metrics.json."""
    folder = Path(folder)
    for name in ("run", "metrics"):
        doc = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.path))
        assert not errors, (f"{folder.name}/{name}.json", list(errors[0].path),
                            errors[0].message)
    return {s["kind"] for s in doc["sections"]}
