"""The fake server keeps the prompts it served, as vLLM's automatic prefix caching does: a prompt
sent again is found in its cache, and its /metrics counts the tokens looked up and found under
vLLM's own names. What a benchmark sends is judged by those counts (test_job_run.py)."""

from __future__ import annotations

import json
import urllib.request


def _chat(url: str, text: str) -> dict:
    body = {"model": "fake-llm", "messages": [{"role": "user", "content": text}], "max_tokens": 2}
    request = urllib.request.Request(f"{url}/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def test_a_prompt_sent_again_is_found_in_the_prefix_cache(fake_server):
    server = fake_server(first_token_ms=1, prefill_ms_per_token=0.01, tpot_ms=1)
    assert server.prefix_cache() == {"queries": 0, "hits": 0}
    _chat(server.url, "one two three")
    _chat(server.url, "four five six seven")
    assert server.prefix_cache() == {"queries": 7, "hits": 0}
    answer = _chat(server.url, "one two three")
    assert answer["usage"]["prompt_tokens"] == 3
    assert server.prefix_cache() == {"queries": 10, "hits": 3}
