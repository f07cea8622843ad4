import asyncio
import math

import pytest

from confeval.backends import BackendError, CapabilityError, GenerateParams, get_backend
from confeval.backends.stub_server import StubServer, default_reply

MESSAGES = [{"role": "user", "content": "Pick one. A) 1 B) 2 C) 3 D) 4"}]
SECRET = "sk-test-SECRET-value-123"


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def backend(server, **kw):
    return get_backend("openai:stub-model", base_urls=[server.base_url], **kw)


def run(coro):
    return asyncio.run(coro)


def test_generation_and_normalised_logprobs():
    with StubServer() as server:
        b = backend(server)
        gens = run(b.generate(MESSAGES, GenerateParams(logprobs=True, top_logprobs=4)))
        assert len(gens) == 1
        g = gens[0]
        assert g.text in "ABCD" and g.finish_reason == "stop"
        top = dict(g.tokens[0].top)
        assert set(top) == set("ABCD")
        assert math.isclose(sum(math.exp(v) for v in top.values()), 1.0, rel_tol=1e-9)
        assert g.tokens[0].logprob == top[g.text]
        assert server.bodies[0]["top_logprobs"] == 4 and server.bodies[0]["seed"] == 0
        assert server.auth_headers[0] == f"Bearer {SECRET}"


def test_server_that_ignores_n_is_looped():
    with StubServer(ignore_n=True) as server:
        gens = run(backend(server).generate(MESSAGES, n=3))
        assert len(gens) == 3 and server.requests == 3


def test_missing_logprobs_is_a_clear_capability_error():
    with StubServer(no_logprobs=True) as server, pytest.raises(
            CapabilityError, match="score-token logprobs need top_logprobs; this server"):
        run(backend(server).generate(MESSAGES, GenerateParams(logprobs=True, top_logprobs=5)))


@pytest.fixture
def retry_delays(monkeypatch):
    """The delays the openai client decides to wait before each retry, recorded instead of
    waited (the decision is what the backend relies on; timing the wait would make the test
    depend on the machine's load). ``_calculate_retry_timeout`` is the client's one place
    that turns Retry-After (or its own backoff) into seconds; if a new openai version renames
    it, monkeypatch fails here, loudly."""
    from openai._base_client import BaseClient

    decide = BaseClient._calculate_retry_timeout
    delays: list[float] = []

    def recorded(self, *args, **kwargs):
        delays.append(decide(self, *args, **kwargs))
        return 0.0

    monkeypatch.setattr(BaseClient, "_calculate_retry_timeout", recorded)
    return delays


def test_429_with_retry_after_is_respected(retry_delays):
    # 7 s: far from the client's own backoff (at most 0.5 s on a first retry)
    with StubServer(faults=["429"], retry_after="7") as server:
        gens = run(backend(server).generate(MESSAGES))
        assert gens[0].text and server.requests == 2
    assert retry_delays == [7.0]  # the server's Retry-After, not the default backoff


@pytest.mark.parametrize("fault", ["500", "close"])
def test_server_errors_and_dropped_connections_are_retried(fault):
    with StubServer(faults=[fault, fault]) as server:
        gens = run(backend(server).generate(MESSAGES))
        assert gens[0].text and server.requests == 3


def test_timeouts_are_retried(retry_delays):
    # the first request is never answered while the test runs; the second must be answered
    # within the client's timeout, generous so that a loaded machine does not time it out too
    with StubServer(faults=["slow"], slow_seconds=600.0) as server:
        gens = run(backend(server, timeout=5.0).generate(MESSAGES))
        assert gens[0].text and server.requests == 2
    assert len(retry_delays) == 1


def test_persistent_failure_raises_without_leaking_the_key():
    with StubServer(faults=["500"] * 10) as server:
        with pytest.raises(BackendError) as info:
            run(backend(server, max_retries=1).generate(MESSAGES))
        assert "HTTP 500" in str(info.value) and SECRET not in str(info.value)
        assert server.requests == 2


def test_identity_has_no_secret_and_no_url():
    with StubServer() as server:
        ident = backend(server).identity()
        assert ident == {"kind": "openai", "model": "stub-model"}


def test_missing_key_for_the_real_api_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(BackendError, match="set the environment variable OPENAI_API_KEY"):
        get_backend("openai:gpt-4o-mini")


def test_bounded_concurrency_and_scale_out():
    """Concurrency by counting, never by seconds (a wall-clock bound failed at 1.244 s against
    1.2 s on a loaded machine): each server holds its requests until 3 are in flight at once,
    so the bound is reached whatever the machine's speed, and never exceeded."""
    with StubServer(gate=3) as s1, StubServer(gate=3) as s2:
        b = get_backend("openai:stub", base_urls=[s1.base_url, s2.base_url], concurrency=3)

        async def many():
            return await asyncio.gather(*[b.generate([{"role": "user", "content": str(i)}])
                                          for i in range(24)])

        results = run(many())
        # every answer is its own request's, in order
        assert [r[0].text for r in results] == [
            default_reply({"messages": [{"content": str(i)}]})[0] for i in range(24)]
        assert s1.requests == 12 and s2.requests == 12          # spread evenly
        # bounded per endpoint, and reaching the bound: requests really overlap
        assert s1.max_in_flight == 3 and s2.max_in_flight == 3


def test_image_parts_pass_through_unchanged():
    url = "data:image/png;base64,iVBORw0KGgo="
    msgs = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": "A or B?"}]}]
    with StubServer() as server:
        run(backend(server).generate(msgs))
        assert server.bodies[0]["messages"][0]["content"][0]["image_url"]["url"] == url


def test_backend_survives_several_event_loops():
    with StubServer() as server:
        b = backend(server)
        for _ in range(3):  # each asyncio.run has its own loop
            assert run(b.generate(MESSAGES))[0].text
        run(b.aclose())


def test_raw_prompts_use_legacy_completions_and_echo_gives_token_scores():
    import asyncio as aio

    from confeval.backends import CapabilityError, raw_prompt
    from confeval.backends.openai_compat import OpenAIBackend
    from confeval.backends.stub_server import StubServer, stub_tokens, token_logprob

    with StubServer() as server:
        backend = OpenAIBackend("stub", base_urls=[server.base_url])
        prompt = raw_prompt("Q: 'How many legs has a spider?'\nA:")
        gens = aio.run(backend.generate(prompt, GenerateParams(max_tokens=3, logprobs=True,
                                                               top_logprobs=2), n=2))
        assert len(gens) == 2 and gens[0].tokens[0].top
        assert server.bodies[-1]["prompt"] == prompt[0]["content"]
        scored = aio.run(backend.score_tokens(prompt, [" eight legs", " 8"]))
        assert scored[0].tokens == tuple(stub_tokens(" eight legs"))
        assert list(scored[0].logprobs) == [token_logprob(t) for t in (" eight", " legs")]
        body = server.bodies[-1]
        assert body["echo"] is True and body["prompt"].endswith(("eight legs", " 8"))
        with pytest.raises(BackendError, match="tokenised the prompt's end"):
            aio.run(backend.score_tokens(raw_prompt("It is: ("), ["A"]))
        with pytest.raises(CapabilityError, match="need a raw prompt"):
            aio.run(backend.score_tokens([{"role": "user", "content": "hi"}], ["x"]))


@pytest.mark.parametrize("body, content_type, kind", [
    (b"<!DOCTYPE html><html><body>Sign in</body></html>", "text/html", "HTML"),
    (b'{"status": "ok"}', "application/json", "text")])
def test_a_200_that_is_no_api_answer_is_one_clear_error(body, content_type, kind):
    """A login page or another service answering 200 at --base-url: one BackendError naming
    the address and what came back, never an AttributeError from deep inside."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        backend = get_backend("openai:m", base_urls=[url])
        with pytest.raises(BackendError, match=f"{url}: answered with {kind}, not an "
                                               "OpenAI-compatible JSON response"):
            asyncio.run(backend.generate([{"role": "user", "content": "hi"}],
                                         GenerateParams(max_tokens=3)))
    finally:
        server.shutdown()


def _image_message():
    import base64
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (4, 4), "blue").save(png, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                         {"type": "text", "text": "Which? A or B"}]}]


def test_a_server_refusing_images_is_found_out_once():
    """The first image request fails (HTTP 500, as llama.cpp's server for a text-only model),
    one text probe succeeds: the backend is text-only from then on, and later image requests
    never reach the server."""
    from confeval.backends import ImagesRefused

    with StubServer(text_only=True) as server:
        backend = get_backend("openai:m", base_urls=[server.base_url], max_retries=0)
        assert "images" in backend.capabilities
        with pytest.raises(ImagesRefused, match="treated as text-only"):
            asyncio.run(backend.generate(_image_message(), GenerateParams(max_tokens=2)))
        assert "images" not in backend.capabilities
        sent = server.requests                        # the image request and the probe
        assert sent == 2
        with pytest.raises(ImagesRefused):
            asyncio.run(backend.generate(_image_message(), GenerateParams(max_tokens=2)))
        assert server.requests == sent                # never sent again
        text = asyncio.run(backend.generate([{"role": "user", "content": "A or B?"}],
                                            GenerateParams(max_tokens=2)))
        assert text[0].text


def test_a_server_that_is_down_is_not_taken_for_text_only():
    with StubServer(faults=["500", "500"]) as server:
        backend = get_backend("openai:m", base_urls=[server.base_url], max_retries=0)
        with pytest.raises(BackendError) as info:
            asyncio.run(backend.generate(_image_message(), GenerateParams(max_tokens=2)))
        assert "HTTP 500" in str(info.value) and "images" in backend.capabilities
