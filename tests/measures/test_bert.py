"""confeval's own BERT encoder (``measures/_bert.py``) against transformers' ``BertModel`` and
``BertTokenizer``, the reference it transcribes: token ids, attention masks and last hidden
states on a tiny random BERT and on the offline embedding model where it is installed, with
texts that are padded, truncated and neither; folders it does not read as transformers does go
to transformers."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="model-based similarity needs the 'local' extra")
transformers = pytest.importorskip("transformers")

from confeval.measures._bert import BertEncoder, unsupported_encoder_reason  # noqa: E402
from confeval.measures.semantic import (  # noqa: E402
    SentenceEncoder,
    SimilarityModelError,
    default_embedding_path,
)

from ..child import fresh_python  # noqa: E402

F32 = {"rtol": 2e-5, "atol": 2e-5}
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog", "sat", "a", "bank",
         "river", "money", "is", "on", "what", "##s", "##ing"]
TEXTS = ["The cat sat on the river bank.", "what", "", "DOGS sitting on a bank " * 12,
         "émigré naïve – “quotes” 数学", "  the   cat  "]


def _tiny_bert(folder):
    tokenizer = transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)})
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=32,
                                     max_position_embeddings=64, initializer_range=0.5)
    transformers.BertModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=["tiny", "minilm"])
def folder(request, tmp_path_factory):
    if request.param == "tiny":
        return _tiny_bert(tmp_path_factory.mktemp("bert"))
    try:
        return default_embedding_path()
    except SimilarityModelError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("texts, max_length", [(TEXTS, 64), (TEXTS, 9), (TEXTS[:1], 64),
                                                ([TEXTS[0], TEXTS[0]], 32)])
def test_ids_masks_and_hidden_states_equal_transformers(folder, texts, max_length):
    assert unsupported_encoder_reason(folder) is None
    ours = BertEncoder(folder)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    net = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length,
                      return_tensors="pt")
    ids, mask = ours.tokenize(texts, max_length)
    assert torch.equal(ids, batch["input_ids"]) and torch.equal(mask, batch["attention_mask"])
    assert ids.shape[1] < 64 or max_length == 64   # the long text is cut
    with torch.no_grad():
        theirs = net(**batch).last_hidden_state
        mine = ours(ids, mask)
    real = mask.bool()   # padded positions are never read (mean pooling masks them)
    np.testing.assert_allclose(mine[real].numpy(), theirs[real].numpy(), **F32)


def _edited(folder, tmp_path, file, **changes):
    copy = tmp_path / "edited"
    shutil.copytree(folder, copy)
    data = json.loads((copy / file).read_text())
    data.update(changes)
    (copy / file).write_text(json.dumps(data))
    return copy


@pytest.mark.parametrize("file, changes, reason", [
    ("config.json", {"model_type": "roberta"}, "model_type"),
    ("config.json", {"position_embedding_type": "relative_key"}, "relative position"),
    ("config.json", {"is_decoder": True}, "a decoder"),
    ("config.json", {"hidden_act": "relu"}, "hidden_act"),
    ("tokenizer_config.json", {"do_lower_case": False}, "casing options"),
    ("tokenizer_config.json", {"tokenizer_class": "RobertaTokenizer"}, "tokenizer_class"),
])
def test_a_folder_read_otherwise_goes_to_transformers(tmp_path, file, changes, reason):
    edited = _edited(_tiny_bert(tmp_path / "bert"), tmp_path, file, **changes)
    assert reason in unsupported_encoder_reason(edited)
    if file == "tokenizer_config.json" and "do_lower_case" in changes:
        encoder = SentenceEncoder(edited)   # transformers loads it as it is
        assert encoder._own is None and encoder.encode(["the cat"]).shape == (1, 16)


def test_damaged_weights_are_a_clear_error(tmp_path):
    folder = _tiny_bert(tmp_path / "bert")
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:500])
    with pytest.raises(SimilarityModelError, match="model.safetensors"):
        SentenceEncoder(folder)


def test_embeddings_never_import_transformers(tmp_path):
    """What the encoder saves a measures run: sentence embeddings with torch, safetensors and
    tokenizers alone (a fresh process, its modules listed)."""
    folder = _tiny_bert(tmp_path / "bert")
    code = ("import sys\n"
            "from confeval.measures.semantic import SentenceEncoder\n"
            f"v = SentenceEncoder({str(folder)!r}).encode(['the cat sat', 'a dog'])\n"
            "print(v.shape[0], 'transformers' in sys.modules)\n")
    assert fresh_python(code) == ["2", "False"]


def test_texts_are_cut_at_the_models_positions(tmp_path):
    """A max_length past the model's position embeddings (64 here) cuts the texts there: a
    longer row would index past the table (transformers' model fails on it)."""
    ours = BertEncoder(_tiny_bert(tmp_path / "bert"))
    ids, mask = ours.tokenize([TEXTS[3] * 3, "the cat"], 256)
    assert ids.shape == (2, 64) and int(mask[0].sum()) == 64 and ids[0, -1] == 3   # [SEP]
    assert ours(ids, mask).shape == (2, 64, 16)
