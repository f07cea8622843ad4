"""The authors' dataset layout and record files: counted exclusions, never a text-only item,
never an image outside the dataset."""

import json

import numpy as np
import pytest
from PIL import Image

from confeval.records import RecordSet
from confeval.suites.diagnose import load_mmerror_items, normalise_type, read_diagnosis_records

# the dataset fixture holds one broken file on purpose; the tests about it assert its warning
pytestmark = pytest.mark.filterwarnings("ignore:.*item file\\(s\\) could not be read")


def _item(qid, label="B_Reasoning_Error", **extra):
    return {"question_id": qid, "question": f"Q {qid}?", "correct_answer": "12",
            "error_reason": "Step 1 reads 21 from the chart.", "label": label,
            "domain": "ML", "subdomain": "charts", **extra}


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "mmerror"
    (root / "jsons").mkdir(parents=True)
    (root / "images").mkdir()
    items = [_item("MMErroR_00001"), _item("MMErroR_00002", "D_Knowledge_Deployment_Error"),
             _item("MMErroR_00003", ""), _item("MMErroR_00004", "Banana_Error"),
             _item("MMErroR_00005"), _item("../../etc/passwd"), _item("MMErroR_00007", "KAE"),
             _item("MMErroR_00008")]
    for it in items:
        name = it["question_id"].replace("/", "_")
        (root / "jsons" / f"{name}.json").write_text(json.dumps(it))
    (root / "jsons" / "MMErroR_all.json").write_text(json.dumps(items))  # ignored, as theirs
    (root / "jsons" / "broken.json").write_text("{not json")
    for qid, suffix in (("MMErroR_00001", ".png"), ("MMErroR_00002", ".webp"),
                        ("MMErroR_00003", ".png"), ("MMErroR_00004", ".png"),
                        ("MMErroR_00007", ".jpg")):
        Image.new("RGB", (6, 4), "white").save(root / "images" / f"{qid}{suffix}")
    (root / "images" / "MMErroR_00008.png").write_bytes(b"\x89PNG fake")  # not decodable
    return root


def test_authors_layout_with_counted_exclusions(dataset):
    with pytest.warns(UserWarning, match=r"1 item file\(s\) could not be read and are left "
                                         r"out: broken.json \(JSONDecodeError\)$"):
        items = load_mmerror_items(dataset)
    assert [it["item_id"] for it in items] == ["MMErroR_00001", "MMErroR_00002",
                                               "MMErroR_00007"]
    assert [it["gold_type"] for it in items] == ["re", "kde", "kde"]
    assert items[0]["chain"].startswith("Step 1") and items[1]["image"].endswith(".webp")
    assert items.excluded == {"missing_label": 1, "unknown_label": 1, "missing_image": 1,
                              "missing_question_id": 1, "unreadable_file": 1,
                              "unreadable_image": 1}
    with pytest.warns(UserWarning, match="broken.json"):
        assert len(load_mmerror_items(dataset, n=2)) == 2


def test_an_item_file_naming_a_key_twice_is_counted_not_read(dataset):
    """Its label named twice: which one the authors meant, no reader can say."""
    path = dataset / "jsons" / "MMErroR_00001.json"
    path.write_text(path.read_text().replace('"label": ', '"label": "KAE", "label": ', 1))
    with pytest.warns(UserWarning, match=r"2 item file\(s\) .* left out: MMErroR_00001.json "
                                         r"\(key 'label' appears twice in one object "
                                         r"\(\"KAE\", then \"B_Reasoning_Error\"\): a "
                                         r"reader may take either value\); broken.json "
                                         r"\(JSONDecodeError\)$"):
        items = load_mmerror_items(dataset)
    assert "MMErroR_00001" not in [it["item_id"] for it in items]
    assert items.excluded["duplicate_key_file"] == 1 and items.excluded["unreadable_file"] == 1


def test_the_authors_results_naming_a_key_twice_is_one_error_naming_it(tmp_path):
    from confeval.records import RecordsError
    from confeval.suites.diagnose.inputs import load_diagnoses

    path = tmp_path / "latest.json"
    path.write_text('{"results": [{"id": 1, "gt_label": "re", "pred_label": "kde", '
                    '"pred_label": "re", "status": "ok"}]}')
    with pytest.raises(RecordsError, match=f"{path}: key 'pred_label' appears twice in one "
                                           r'object \("kde", then "re"\)'):
        load_diagnoses(path)
    # a number past Python's digit limit is a plain ValueError, not a JSONDecodeError
    path.write_text('{"results": [{"id": ' + "9" * 5000 + "}]}")
    with pytest.raises(RecordsError, match=f"{path}: not a readable JSON document"):
        load_diagnoses(path)


def test_a_symlinked_image_that_leaves_the_dataset_is_refused(dataset, tmp_path):
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"x")
    (dataset / "images" / "MMErroR_00005.png").symlink_to(outside)
    items = load_mmerror_items(dataset)
    assert "MMErroR_00005" not in [it["item_id"] for it in items]
    assert items.excluded["image_outside_dataset"] == 1


def test_not_a_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        load_mmerror_items(tmp_path / "nope")


@pytest.mark.parametrize(("text", "key"), [("A_Visual_Perception_Error", "vpe"), ("RE", "re"),
                                           ("question comprehension", "qce"),
                                           ("Knowledge Application Error", "kde"),
                                           ("E_NoError", "no_error"), ("no_error", "no_error"),
                                           ("", None), ("maybe", None)])
def test_normalise_type(text, key):
    assert normalise_type(text) == key


def test_records_with_predictions_or_raw_replies(tmp_path):
    path = tmp_path / "r.jsonl"
    rows = [{"item_id": "a", "gold_type": "B_Reasoning_Error", "pred_type": "re",
             "reply": "The answer is B.", "domain": "ML"},
            {"item_id": "b", "gold_type": "kde", "pred_type": None, "reply": "hmm",
             "domain": "PE"},
            {"item_id": "c", "gold_type": "", "pred_type": "re", "reply": "B", "domain": "PE"},
            {"item_id": "d", "gold_type": "alien", "pred_type": "re", "reply": "B"},
            {"item_id": "e", "gold_type": "vpe", "pred_type": "banana", "reply": "Option A",
             "domain": "ML"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = read_diagnosis_records(RecordSet.read(path), id_col="item_id")
    assert data.gold.tolist() == ["re", "kde", "vpe"]
    assert data.pred.tolist() == ["re", None, None]
    assert data.failures == {"unparseable": 1, "unknown_prediction": 1}
    assert data.records.excluded == {"missing_gold": 1, "unknown_gold": 1}
    parsed = read_diagnosis_records(RecordSet.read(path), pred_col=None, reply_col="reply")
    assert parsed.pred.tolist() == ["re", None, "vpe"]
    assert parsed.failures == {"no_answer": 1}
    assert np.array_equal(parsed.domains, np.array(["ML", "PE", "ML"], dtype=object))


def test_a_rows_own_letters_are_used_or_the_row_is_not_parsed():
    import json as _json

    import pandas as pd

    from confeval.records import RecordSet
    from confeval.suites.diagnose.inputs import parse_replies

    permuted = {"A": "re", "B": "vpe", "C": "kde", "D": "qce"}
    frame = pd.DataFrame({"reply": ["Answer: A"] * 7, "letters": [
        _json.dumps(permuted),                        # its own order: A is re
        None,                                          # none: the fixed order (A = vpe)
        '{"A": "banana", "B": "vpe", "C": "kde", "D": "qce"}',   # not a type
        '{"A": "re", "B": "re", "C": "kde", "D": "qce"}',        # a type twice
        "{not json",
        '{"A": "re", "B": "vpe"}',                     # too few letters for ETC
        # A named twice: json keeps re, which makes a whole mapping, but vpe was said first
        '{"A": "vpe", "A": "re", "B": "vpe", "C": "kde", "D": "qce"}']})
    out, summary = parse_replies(RecordSet.from_frame(frame), protocol="etc")
    assert out["pred_type"].tolist()[:2] == ["re", "vpe"]
    assert out["parse_failure"].tolist()[2:] == ["invalid_letters"] * 5
    assert summary["unparseable"] == {"invalid_letters": 5}


def test_a_repeated_item_is_counted_not_scored_twice():
    import pandas as pd

    from confeval.records import RecordSet
    from confeval.suites.diagnose.inputs import read_diagnosis_records

    frame = pd.DataFrame({"item_id": [1, 2, 1, 3], "gold_type": ["re", "vpe", "re", "kde"],
                          "pred_type": ["re", "re", "vpe", "kde"]})
    data = read_diagnosis_records(RecordSet.from_frame(frame), id_col="item_id")
    assert data.records.excluded == {"duplicate_item": 1}
    assert data.pred.tolist() == ["re", "re", "kde"]
