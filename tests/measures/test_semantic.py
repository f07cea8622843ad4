"""Embedding and NLI similarity matrices: exact rules (labels from id2label, temperature,
symmetrisation, same-text pairs) against a direct pair-by-pair transcription on a tiny local
model, and the offline embedding model against plain mean pooling."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="model-based similarity needs the 'local' extra")
transformers = pytest.importorskip("transformers")

from confeval.measures.semantic import (  # noqa: E402
    NLIModel,
    SentenceEncoder,
    SimilarityModelError,
    default_embedding_path,
    embedding_similarity,
    nli_similarity,
)

from ..float32 import ABS as F32_ABS  # noqa: E402

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "dog", "sat", "a", "bank",
         "river", "money", "is", "on", "what"]


def _tiny_nli(folder, id2label):
    tokenizer = transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)})
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, initializer_range=1.0, num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()})
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def nli(tmp_path_factory):
    folder = _tiny_nli(tmp_path_factory.mktemp("nli"),
                       {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"})
    return NLIModel(folder, batch_size=3)


def _pair_probs(model, premise, hypothesis, temperature):
    batch = model.tokenizer(premise, hypothesis, return_tensors="pt")
    with torch.no_grad():
        logits = model.net(**batch).logits[0].double().numpy()
    z = np.exp(logits / temperature - (logits / temperature).max())
    return z / z.sum()


def test_nli_similarity_matches_the_pairwise_definition(nli):
    texts = ["the cat sat", "a dog sat", "the cat sat", "river bank"]
    q = "what sat"
    sim = nli_similarity(texts, nli, question=q, temperature=3.0)
    m = len(texts)
    entail, contra = np.ones((m, m)), np.ones((m, m))
    for i in range(m):
        for j in range(m):
            if texts[i] != texts[j]:
                p = _pair_probs(nli, f"{q} {texts[i]}", f"{q} {texts[j]}", 3.0)
                entail[i, j], contra[i, j] = p[0], 1 - p[2]  # labels as id2label says
    np.testing.assert_allclose(sim.entailment, (entail + entail.T) / 2, atol=F32_ABS)
    np.testing.assert_allclose(sim.contradiction, (contra + contra.T) / 2, atol=F32_ABS)
    assert (sim.entailment[0, 2], sim.entailment[2, 0]) == (1.0, 1.0)  # same text
    raw = nli_similarity(texts, nli, question=q, temperature=3.0, symmetric=False)
    np.testing.assert_allclose(raw.entailment, entail, atol=F32_ABS)
    assert np.abs(raw.entailment - raw.entailment.T).max() > 1e-3
    sharp = nli_similarity(texts, nli, temperature=0.5)
    assert np.abs(sharp.entailment - nli_similarity(texts, nli).entailment).max() > 1e-3
    with pytest.raises(ValueError):
        nli_similarity(texts, nli, temperature=0)


def test_nli_labels_come_from_id2label(tmp_path):
    folder = _tiny_nli(tmp_path / "odd", {0: "neutral", 1: "contradiction", 2: "entailment"})
    model = NLIModel(folder)
    assert (model.entailment, model.contradiction) == (2, 1)
    bad = _tiny_nli(tmp_path / "bad", {0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(SimilarityModelError, match="entail"):
        NLIModel(bad)
    with pytest.raises(SimilarityModelError):
        NLIModel(tmp_path / "missing")


def _embedding_or_skip():
    try:
        return default_embedding_path()
    except SimilarityModelError as exc:
        pytest.skip(str(exc))


def test_embedding_similarity_is_mean_pooled_cosine_clipped(tmp_path):
    path = _embedding_or_skip()
    texts = ["The cat sat.", "A dog sat.", "The cat sat.", "river bank"]
    encoder = SentenceEncoder(path, batch_size=2)
    sim = embedding_similarity(texts, encoder)
    tok = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    net = transformers.AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    vectors = []
    for t in texts:  # one at a time: no padding at all
        batch = tok(t, return_tensors="pt")
        with torch.no_grad():
            h = net(**batch).last_hidden_state[0].double().numpy()
        v = h.mean(0)
        vectors.append(v / np.linalg.norm(v))
    expected = np.clip(np.array(vectors) @ np.array(vectors).T, 0, 1)
    np.fill_diagonal(expected, 1.0)
    expected[0, 2] = expected[2, 0] = 1.0
    np.testing.assert_allclose(sim, expected, atol=F32_ABS)
    assert sim[0, 1] > sim[0, 3]  # cat/dog sat closer than a river bank
    assert np.array_equal(sim, sim.T) and (sim >= 0).all()
