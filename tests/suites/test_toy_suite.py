"""The recipe for a new suite is true: one package and one registration line give it
``score``, ``compare``, ``guarantee`` (and ``guarantee apply``), ``rerun``, a report section, a
terminal table and its command-line group — without touching any other file of confeval.

The toy suite scores a confidence against a 0/1 outcome (its own column names). The only
places it registers are the one line ``register(SUITE)`` (library) and, for the command line,
importing its package before the app is built: nothing else names it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

TOY = textwrap.dedent('''
    """A toy suite: a score in [0, 1] and a 0/1 outcome per item."""
    import dataclasses

    import numpy as np

    from confeval.metrics.compare import PairedMetric
    from confeval.suites import register
    from confeval.suites.base import Comparison, Decided, Decision, Suite
    from confeval.suites.options import Options, option


    @dataclasses.dataclass(frozen=True)
    class ToyOptions(Options):
        score_col: str = option("score", "The score column.", stages=("score",))
        outcome_col: str = option("outcome", "The 0/1 outcome column.", stages=("score",))


    def read(rs, options):
        score = rs.numeric([options.score_col], what="score", lo=0.0, hi=1.0)[:, 0]
        outcome = rs.numeric([options.outcome_col], what="outcome", lo=0.0, hi=1.0)[:, 0]
        keep = rs.mask
        return {"score": score[keep], "outcome": outcome[keep]}


    def metrics(aligned, options):
        outcome = {m: [a["outcome"]] for m, a in aligned.items()}
        return {"accuracy": PairedMetric(np.mean, outcome, True, test="mcnemar_exact")}


    def calibrate(rs, options, choice):
        got = read(rs, options)
        return Decided(rs, got["score"], got["outcome"])


    def confidence(rs, options, choice):
        return rs.numeric([options.score_col], what="score", lo=0.0, hi=1.0)[:, 0]


    def section(section):
        return "<p class='toy'>" + ", ".join(
            f"{name}: {res['accuracy']:.4f}" for name, res in section["results"].items()) + "</p>"


    def table(results):
        from confeval.report.terminal import simple_table

        out = simple_table("Toy")
        out.add_column("file")
        out.add_column("accuracy")
        for name, res in results.items():
            out.add_row(name, f"{res['accuracy']:.4f}")
        return out


    class ToySuite(Suite):
        name = "toy"
        title = "A toy suite"
        Options = ToyOptions
        help = "A toy suite."
        score_help = "Score the toy."

        def score(self, rs, options):
            got = read(rs, options)
            return {**rs.summary(), "accuracy": float(got["outcome"].mean()),
                    "mean_score": float(got["score"].mean())}

        def comparison(self):
            return Comparison(read, metrics)

        def decision(self):
            return Decision(calibrate, confidence,
                            lambda options, choice: {"act": "Accept", "item": "accepted items",
                                                     "error": "failed"},
                            lambda options, choice: {"confidence": options.score_col})

        def report_section(self):
            return section

        def terminal_table(self):
            return table


    SUITE = register(ToySuite())    # the one registration line
''')


def _records(path, seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    score = rng.uniform(0.3, 1.0, n).round(4)
    outcome = (rng.uniform(size=n) < score).astype(int)
    pd.DataFrame({"item": np.arange(n), "score": score, "outcome": outcome}).to_csv(
        path, index=False)
    return score, outcome


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """The toy package written into a temporary tree and registered; every registry restored
    afterwards."""
    from confeval.report import SECTION_RENDERERS, TERMINAL_TABLES
    from confeval.suites import SUITES

    SECTION_RENDERERS._fill()
    TERMINAL_TABLES._fill()
    for registry in (SUITES, SECTION_RENDERERS, TERMINAL_TABLES):
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    package = tmp_path / "pkg" / "toysuite"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    monkeypatch.delitem(sys.modules, "toysuite", raising=False)
    import toysuite

    yield toysuite
    sys.modules.pop("toysuite", None)


def test_a_toy_suite_gets_every_cross_suite_command_from_one_registration(toy, tmp_path):
    from confeval.guarantee import ltt_threshold
    from confeval.report import render_report
    from confeval.runs import RunFolder
    from confeval.verbs.apply import apply_policy
    from confeval.verbs.compare import CompareOptions, compare_files
    from confeval.verbs.guarantee import (
        GuaranteeOptions,
        certify_input,
        guarantee_metrics,
        guarantee_run_config,
        policy,
    )
    from confeval.verbs.rerun import differences, rerun
    from confeval.verbs.score import score_inputs, scoring_command

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    score_a, outcome_a = _records(a, 0)
    _records(b, 1)
    # score: the suite's scoring command, found by name like every other suite's
    scored = score_inputs(scoring_command("toy score"), [[a]], {})
    assert scored.results[str(a)]["accuracy"] == pytest.approx(outcome_a.mean(), abs=0)
    assert scored.section["kind"] == "toy" and scored.config["command"] == "toy score"
    # a scoring folder reruns from its run.json
    folder = RunFolder(tmp_path / "scored")
    folder.write_run(scored.config)
    metrics = scored.metrics()
    folder.write_metrics(metrics)
    assert differences(metrics, rerun(folder.path)) == []
    # its report section renders through the report
    assert "<p class='toy'>" in render_report(metrics, None)
    # compare: aligned by --id-col, the toy's comparison
    doc = compare_files([("A", a), ("B", b)], CompareOptions(id_col="item", suite="toy",
                                                             bootstrap=50))
    assert doc["suite"] == "toy" and doc["n_items_shared"] == 400
    assert doc["metrics"]["accuracy"]["models"]["A"]["value"] == pytest.approx(
        outcome_a.mean())
    # guarantee: the toy's decision, equal to LTT on its columns
    options = GuaranteeOptions(target=0.3, suite="toy")
    certified = certify_input(a, options, {})
    expected = ltt_threshold(score_a, outcome_a.astype(float), target=0.3, delta=0.1)
    assert certified.result["threshold"] == expected.threshold is not None
    assert certified.result["guarantee"].startswith("Accept when the confidence")
    # the guarantee folder reruns, and its policy applies to new records
    g = RunFolder(tmp_path / "g")
    g.write_run(guarantee_run_config([a], options, {}))
    g.write_metrics(guarantee_metrics([a], [certified]))
    assert differences(guarantee_metrics([a], [certified]), rerun(g.path)) == []
    g.write_json("policy.json", policy(certified, a))
    frame, counts = apply_policy(g.file("policy.json"), b)
    assert counts["answer"] == int((pd.read_csv(b)["score"] >= expected.threshold).sum())
    assert set(frame["decision"]) <= {"answer", "abstain"}


def test_the_command_line_builds_a_group_for_the_toy_suite(toy, tmp_path):
    """Importing the package before the app is built is all the command line needs."""
    a = tmp_path / "a.csv"
    _, outcome = _records(a, 0)
    code = ("import sys, toysuite\n"
            "from confeval.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    env_path = str(tmp_path / "pkg")
    done = subprocess.run([sys.executable, "-c", code, "toy", "score", str(a), "--json"],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": env_path})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["results"][str(a)]
    assert result["accuracy"] == pytest.approx(outcome.mean())
    table = subprocess.run([sys.executable, "-c", code, "toy", "score", str(a)],
                           capture_output=True, text=True, timeout=300,
                           env={**__import__("os").environ, "PYTHONPATH": env_path})
    assert table.returncode == 0 and "Toy" in table.stdout
    # and the root page lists it (confeval --help is printed from an index of the built-in
    # commands only while no suite is loaded: confeval.cli._root)
    page = subprocess.run([sys.executable, "-c", code, "--help"],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": env_path})
    assert page.returncode == 0 and "  toy " in page.stdout and "A toy suite." in page.stdout
