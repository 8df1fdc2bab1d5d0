"""An OpenAI-compatible streaming chat server with known timings, to try and test the benchmark.

  hyperpod-dpd benchmark fake-server --port 8000 [--prefill-ms-per-token 0.3]
      [--first-token-ms 100] [--tpot-ms 20] [--interference 5] [--transfer-ms 0]

It serves `POST /v1/chat/completions` (stream or not, `stream_options.include_usage`) and
`GET /v1/models`. Its time to first token is `first-token-ms + prefill-ms-per-token x prompt
tokens`; each further token comes `tpot-ms` after the last. Two shapes of a real endpoint:

- colocated (`--interference F`, F > 1): one engine prefills and decodes, so while any request
  is prefilling, every stream's next token takes F times as long;
- disaggregated (`--interference 1`, the default): decode never waits for a prefill, and the
  first token waits `--transfer-ms` more for the KV cache to cross from prefiller to decoder.

Like vLLM, whose automatic prefix caching is on by default (vllm-project/vllm
tests/v1/engine/test_engine_args.py, test_prefix_caching_from_cli), it does not prefill again
what it prefilled before: a prompt's leading tokens it has seen, in whole blocks of 16 (vLLM's
cache keys a block by its tokens and the blocks before it), cost no prefill time. `GET /metrics`
counts the prompt tokens looked up and those found, as vLLM's `vllm:prefix_cache_queries` and
`vllm:prefix_cache_hits` do: a benchmark whose prompts share a beginning shows there.

With the environment variable HYPERPOD_DPD_API_KEY set, it refuses every /v1 request without
`Authorization: Bearer <that key>` with 401, as the traffic split's listener does (specs/traffic/__init__.py).

A prompt's tokens are counted as its whitespace-separated words (the tests' tokenizer is one
token per word); each streamed token is one word. The server runs in the benchmark venv, which
carries aiohttp for the load generator (`python -m hyperpod_dpd.benchmark.fake_server` with
the checkout on PYTHONPATH); nothing here needs a GPU or a model.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import sys
import time

from aiohttp import web

from core import api_key
from core.exits import EXIT_BAD_INPUT
from hyperpod_dpd.benchmark.fake_timings import Timings, add_arguments, timings_of
from specs.slo.series import PREFIX_CACHE_HITS, PREFIX_CACHE_QUERIES

MODEL = "fake-llm"


BLOCK_TOKENS = 16  # a KV cache block: what a prefix cache keeps and finds, whole


class Engine:
    """Counts requests in prefill; decoding streams ask it how long their next token takes.
    Keeps the blocks it prefilled (its prefix cache) and counts what it found there."""

    def __init__(self, timings: Timings):
        self.timings = timings
        self.prefilling = 0
        self.blocks: set[str] = set()  # each prefilled block, keyed with the blocks before it
        self.queried_tokens = 0
        self.hit_tokens = 0

    def cached_tokens(self, tokens: list[str]) -> int:
        """How many of `tokens`' leading ones were prefilled before (whole blocks, from the
        first); all its blocks are kept from now on. The lookup is counted."""
        found, chain, reaching = 0, hashlib.sha256(), True
        for start in range(0, len(tokens) - BLOCK_TOKENS + 1, BLOCK_TOKENS):
            chain.update("\0".join(tokens[start : start + BLOCK_TOKENS]).encode() + b"\1")
            block = chain.hexdigest()
            reaching = reaching and block in self.blocks
            found += BLOCK_TOKENS if reaching else 0
            self.blocks.add(block)
        self.queried_tokens += len(tokens)
        self.hit_tokens += found
        return found

    async def prefill(self, prompt_tokens: int, arrived: float) -> None:
        """Until the first token is due: `ttft_ms` after the request `arrived` (loop time), so
        reading and parsing the body is part of the time to first token, not added to it.
        `prompt_tokens`: those to prefill (not found in the prefix cache)."""
        self.prefilling += 1
        loop = asyncio.get_running_loop()
        try:
            await asyncio.sleep(max(0.0, arrived + self.timings.ttft_ms(prompt_tokens) / 1000
                                    - loop.time()))  # fmt: skip
        finally:
            self.prefilling -= 1

    def next_token_delay(self) -> float:
        slow = self.timings.interference if self.prefilling else 1.0
        return self.timings.tpot_ms * slow / 1000

    async def later_tokens(self, count: int):
        """Yield 1 .. count-1 as each token after the first falls due: a fixed delay after the
        previous one was due (not after it was sent), so the event loop's own lateness does not
        add up over a stream."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        for i in range(1, count):
            due += self.next_token_delay()
            await asyncio.sleep(max(0.0, due - loop.time()))
            yield i


def _prompt_text(body: dict) -> str:
    """The messages' text, one message per line (content parts joined by spaces)."""
    lines = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        lines.append(str(content or ""))
    return "\n".join(lines)


def _chunk(created: int, delta: dict, finish: str | None = None, usage: dict | None = None):
    choices = [] if usage is not None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    chunk = {
        "id": f"chatcmpl-{created}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL,
        "choices": choices,
    }
    if usage is not None:
        chunk["usage"] = usage
    return f"data: {json.dumps(chunk)}\n\n".encode()


async def chat(request: web.Request) -> web.StreamResponse:
    engine: Engine = request.app["engine"]
    arrived = asyncio.get_running_loop().time()
    try:
        body = await request.json()
    except json.JSONDecodeError:
        return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
    tokens = _prompt_text(body).split()
    prompt = len(tokens)
    out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
    if out < 1:
        return web.json_response({"error": {"message": "max_tokens must be >= 1"}}, status=400)
    usage = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
    created = int(time.time())
    await engine.prefill(prompt - engine.cached_tokens(tokens), arrived)
    if not body.get("stream"):
        async for _ in engine.later_tokens(out):
            pass
        message = {"role": "assistant", "content": " ".join(["tok"] * out)}
        return web.json_response({
            "id": f"chatcmpl-{created}", "object": "chat.completion", "created": created,
            "model": MODEL, "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
        })  # fmt: skip
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(_chunk(created, {"role": "assistant", "content": "tok"}))
    async for i in engine.later_tokens(out):
        finish = "length" if i == out - 1 else None
        await response.write(_chunk(created, {"content": " tok"}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        await response.write(_chunk(created, {}, usage=usage))
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def models(_request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})


async def metrics(request: web.Request) -> web.Response:
    """The prefix cache's two counters, in Prometheus' text format, labelled as vLLM labels them."""
    engine: Engine = request.app["engine"]
    labels = f'{{model_name="{MODEL}",engine="0"}}'
    lines = [f"{PREFIX_CACHE_QUERIES}{labels} {engine.queried_tokens}",
             f"{PREFIX_CACHE_HITS}{labels} {engine.hit_tokens}"]  # fmt: skip
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")


def key_check(key: str):
    """A middleware refusing /v1 requests that do not present `key` (401, OpenAI-style body)."""

    @web.middleware
    async def check(request: web.Request, handler):
        given = request.headers.get(api_key.HEADER, "")
        if request.path.startswith("/v1") and not hmac.compare_digest(
            given.encode(), api_key.bearer(key).encode()
        ):
            error = {"message": "missing or unknown API key", "type": "authentication_error"}
            return web.json_response({"error": {**error, "code": 401}}, status=401)
        return await handler(request)

    return check


def app(timings: Timings, key: str | None = None) -> web.Application:
    application = web.Application(middlewares=[key_check(key)] if key else [])
    application["engine"] = Engine(timings)
    application.router.add_post("/v1/chat/completions", chat)
    application.router.add_get("/v1/models", models)
    application.router.add_get("/metrics", metrics)
    return application


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    timings = timings_of(args)
    print(f"fake OpenAI-compatible server on http://{args.host}:{args.port}", flush=True)
    key = os.environ.get(api_key.ENV) or None
    if key:
        print(f"requests must carry {api_key.HEADER}: {api_key.SCHEME} ${api_key.ENV}", flush=True)
    try:
        web.run_app(app(timings, key), host=args.host, port=args.port, print=None)
    except OSError as exc:  # the address is taken (an earlier server still running), or refused
        print(f"error: --port {args.port}: cannot listen on {args.host}:{args.port} "
              f"({exc.strerror or exc}); give another --port, or stop what listens there",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(EXIT_BAD_INPUT) from None


if __name__ == "__main__":
    main()
