"""The fake server keeps what it prefilled, as vLLM's automatic prefix caching does: a prompt's
leading tokens it has seen before, in whole blocks of 16, are found in its cache, and its /metrics
counts the tokens looked up and found under vLLM's own names. What a benchmark sends is judged by
those counts (test_job_run.py)."""

from __future__ import annotations

import json
import urllib.request


def _chat(url: str, text: str) -> dict:
    body = {"model": "fake-llm", "messages": [{"role": "user", "content": text}], "max_tokens": 2}
    request = urllib.request.Request(f"{url}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def test_only_a_shared_beginning_is_found_in_the_prefix_cache(fake_server):
    server = fake_server(first_token_ms=1, prefill_ms_per_token=0.01, tpot_ms=1)
    assert server.prefix_cache() == {"queries": 0, "hits": 0}
    words = [f"w{i}" for i in range(40)]  # two whole blocks and 8 tokens
    _chat(server.url, " ".join(words))
    assert server.prefix_cache() == {"queries": 40, "hits": 0}
    answer = _chat(server.url, " ".join(words))  # the same prompt: its two whole blocks
    assert answer["usage"]["prompt_tokens"] == 40
    assert server.prefix_cache() == {"queries": 80, "hits": 32}
    _chat(server.url, " ".join(words[:20] + ["other"] * 20))  # the same first block only
    assert server.prefix_cache() == {"queries": 120, "hits": 48}
    _chat(server.url, " ".join(["[rid:1]", *words]))  # a marker at token 0: nothing shared
    assert server.prefix_cache() == {"queries": 161, "hits": 48}
