"""Shared by the OpenAI-response tests: a chat.completion with one token and its top
alternatives, and a JSONL writer taking objects or raw (damaged) lines."""

import json


def chat_response(token, tops, model="m"):
    return {"object": "chat.completion", "model": model, "choices": [{
        "index": 0, "message": {"role": "assistant", "content": token},
        "logprobs": {"content": [{"token": token, "logprob": tops[0][1], "top_logprobs": [
            {"token": t, "logprob": v} for t, v in tops]}]}}]}


def write_lines(path, lines):
    path.write_text("".join((json.dumps(x) if not isinstance(x, str) else x) + "\n"
                            for x in lines), encoding="utf-8")
    return path
