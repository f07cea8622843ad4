"""OpenAI-compatible responses saved to a file, and the data they answer.

Two shapes of file are read, whatever server wrote them (OpenAI, vLLM, SGLang, llama.cpp):

* the **batch API's output** (JSONL): one ``{"custom_id", "response": {"status_code",
  "body"}, "error"}`` per line, ``body`` a response object;
* **plain response objects** (``"object": "chat.completion"`` or ``"text_completion"``), one
  per JSONL line or as a JSON list.

From a response: the model, and the first choice's generated tokens with their
log-probabilities and top alternatives — chat: ``logprobs.content[*].{token, logprob,
top_logprobs}``; completions: ``logprobs.{tokens, token_logprobs, top_logprobs}``. The suites'
own token readers then find the answer in them (option letters:
:func:`confeval.parse.option_tokens.extract_from_tokens`; ratings:
:func:`confeval.parse.score_tokens.extract_score`), exactly as for a live run against a server.

A response carries no gold answer, so it is read with the data it answers (``--data FILE``):
a batch line's ``custom_id`` is matched to the data's ``item_id`` (or ``id``); a response
without a ``custom_id`` is matched to the data row at its own position (the n-th response
answers the n-th row). Why no library: the ``openai`` client's types validate a response as
it arrives from a server, not a file a user kept (a batch line is no type of it), and a plain
``json`` reading with a type check per field is what untrusted text needs.

Every line is checked on its own: a line that is no JSON object, an error or a non-2xx status,
a response without choices or without log-probabilities becomes an excluded row under its
reason (``openai_*``), and one with a log-probability that is none (above 0, NaN, +-inf: a
top alternative at +5.0 would otherwise be renormalised and used) one under
``impossible_logprob``, never a crash or a silent drop. A batch line repeating a ``custom_id``
(a retried request appended) is the same sample: :func:`confeval.ingest.read_records` keeps
the first usable one. The file is read as UTF-8 (a byte-order mark ignored, CRLF line ends
read as LF), a ``.gz`` one decompressed under the caps of :mod:`confeval._untrusted`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._numeric import as_logprob
from .._untrusted import DuplicateKeyError, bounded_lines, loads_unique, open_text, top_level_fields

__all__ = ["MAX_LINE_CHARS", "Response", "looks_like_responses", "read_responses"]

MAX_LINE_CHARS = 20_000_000
"""A longer line is excluded unread (``openai_line_too_long``): model output is untrusted."""

_OBJECTS = ("chat.completion", "text_completion")


@dataclass
class Response:
    """One response: the batch line's ``custom_id`` (None for a plain response), its position
    in the file (1-based), the model, the reply text and the generated tokens (None: the
    response had no log-probabilities)."""

    custom_id: str | None
    position: int
    model: str | None
    text: str
    tokens: list | None


def looks_like_responses(head: str, complete: bool = True) -> bool:
    """A batch output line (``custom_id`` and a ``response`` object), a response object, or
    the start of a JSON list of them (``head``: a file's first line, or its first megabyte
    when that is a list). ``complete=False``: ``head`` is the start of a longer line,
    recognised by the top-level keys it holds."""
    stripped = head.lstrip()
    if stripped.startswith("["):
        return any(f'"{name}"' in stripped[:1 << 20] for name in _OBJECTS) or \
            '"custom_id"' in stripped[:1 << 20]
    if not complete:
        fields = top_level_fields(head)
        return ("custom_id" in fields and "response" in fields and fields["response"] is None) \
            or (fields.get("object") in _OBJECTS and "choices" in fields)
    try:
        obj = json.loads(head)
    except (ValueError, RecursionError):   # a number past the digit limit too
        return False
    return isinstance(obj, dict) and (
        ("custom_id" in obj and isinstance(obj.get("response"), dict))
        or (obj.get("object") in _OBJECTS and "choices" in obj))


class _Impossible(ValueError):
    """A log-probability that is none (above 0, NaN, +-inf): the response is excluded."""


def _number(value: Any) -> float | None:
    """A JSON number read as a log-probability (None: no number, left out as before); a
    number that cannot be one raises :class:`_Impossible`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        logprob = as_logprob(float(value))
    except OverflowError:   # an integer beyond a float
        logprob = None
    if logprob is None:
        raise _Impossible(value)
    return logprob


def _alternatives(top: Any) -> tuple[tuple[str, float], ...]:
    """Chat's ``[{token, logprob}, ...]`` or completions' ``{token: logprob}``; entries that
    are not a text and a number are left out."""
    pairs = top.items() if isinstance(top, dict) else (
        ((t.get("token"), t.get("logprob")) for t in top if isinstance(t, dict))
        if isinstance(top, list) else ())
    return tuple((tok, lp) for tok, lp in ((t, _number(v)) for t, v in pairs)
                 if isinstance(tok, str) and lp is not None)


def _chat_tokens(logprobs: dict) -> list | None:
    from ..backends.base import TokenLogprob

    content = logprobs.get("content")
    if not isinstance(content, list) or not content:
        return None
    return [TokenLogprob(t["token"], lp, _alternatives(t.get("top_logprobs")))
            for t in content if isinstance(t, dict) and isinstance(t.get("token"), str)
            and (lp := _number(t.get("logprob"))) is not None]


def _completion_tokens(logprobs: dict) -> list | None:
    from ..backends.base import TokenLogprob

    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or not tokens:
        return None
    tops = logprobs.get("top_logprobs")
    tops = tops if isinstance(tops, list) else [None] * len(tokens)
    return [TokenLogprob(tok, lp, _alternatives(top))
            for tok, value, top in zip(tokens, values, tops)
            if isinstance(tok, str) and (lp := _number(value)) is not None]


def _response(obj: dict, position: int) -> tuple[Response | None, str]:
    """One line (a batch line or a response object) -> a response, or the reason it is none."""
    custom_id = None
    if "custom_id" in obj:
        custom_id = str(obj["custom_id"])
        if obj.get("error"):
            return None, "openai_error"
        wrapper = obj.get("response")
        if not isinstance(wrapper, dict):
            return None, "openai_no_response"
        status = wrapper.get("status_code", 200)
        if not isinstance(status, int) or not 200 <= status < 300:
            return None, "openai_error"
        obj = wrapper.get("body")
        if not isinstance(obj, dict):
            return None, "openai_no_response"
    if obj.get("error"):
        return None, "openai_error"
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None, "openai_no_choices"
    choice = choices[0]
    message = choice.get("message")
    chat = isinstance(message, dict)
    text = (message.get("content") if chat else choice.get("text")) or ""
    logprobs = choice.get("logprobs")
    tokens = None
    if isinstance(logprobs, dict):
        try:
            tokens = _chat_tokens(logprobs) if "content" in logprobs else \
                _completion_tokens(logprobs)
        except _Impossible:
            return None, "impossible_logprob"
    if not tokens:
        return None, "openai_no_logprobs"
    model = obj.get("model")
    return Response(custom_id, position, str(model) if isinstance(model, str) else None,
                    str(text), tokens), ""


def _objects(path: Path):
    """(position, parsed object or None, reason) per response of the file."""
    with open_text(path) as f:
        head = f.read(1 << 16).lstrip()
    if head.startswith("["):
        try:
            with open_text(path) as f:
                items = loads_unique(f.read())
        except DuplicateKeyError as exc:   # one document: which value it means, none can say
            raise ValueError(f"{path}: a JSON list of responses in which {exc}") from None
        except (ValueError, RecursionError) as exc:   # a number past the digit limit too
            raise ValueError(f"{path}: not a readable JSON list of responses ({exc})") from None
        if not isinstance(items, list):
            raise ValueError(f"{path}: not a JSON list of responses")
        yield from ((i, obj if isinstance(obj, dict) else None, "openai_not_a_json_object")
                    for i, obj in enumerate(items, start=1))
        return
    with open_text(path) as f:
        position = 0
        for line in bounded_lines(f, MAX_LINE_CHARS):
            if line is not None and not line.strip():
                continue
            position += 1
            if line is None:
                yield position, None, "openai_line_too_long"
                continue
            try:   # keys named twice not checked per line: as records.py's _read_jsonl
                obj = json.loads(line)
            except (ValueError, RecursionError):   # a number past the digit limit too
                obj = None
            yield position, obj if isinstance(obj, dict) else None, "openai_not_a_json_object"


def read_responses(path: str | Path) -> tuple[list[Response | None], list[str], str | None]:
    """(each response or None, the reason of each unusable one, the model the file names)."""
    path = Path(path)
    responses: list[Response | None] = []
    reasons: list[str] = []
    for position, obj, why in _objects(path):
        if obj is None:
            responses.append(None)
            reasons.append(why)
            continue
        response, reason = _response(obj, position)
        responses.append(response)
        reasons.append(reason)
    models = {r.model for r in responses if r is not None and r.model}
    return responses, reasons, (models.pop() if len(models) == 1 else None)
