"""The one program that imports aisimulate: run in the advise venv, never in the project's.

  build/advise-venv/bin/python hyperpod_dpd/advise/simulate.py < REQUEST.json > ANSWER.json

  build/advise-venv/bin/python hyperpod_dpd/advise/simulate.py --serve

REQUEST: `{"configs": [{"id": ..., "label": ..., "config": {aisimulate prediction config}}]}`.
ANSWER: `{"engine": {"name", "version"}, "results": [{"id", "summary": {...}} or {"id",
"error": "..."}]}`: one result per config, in order; a layout the engine refuses (e.g. no room
for the KV cache) is an error of its own, not the end of the search. Progress goes to stderr,
one line per config. Only aisimulate and the standard library: this file runs where the project
is not installed.

--serve: one REQUEST a line on stdin, each ANSWER a line on stdout as soon as it is ready, until
stdin closes: a search that picks its next load from the last answer (hyperpod_dpd/advise/
capacity.py) pays the start-up and the kernel tables' load once.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version

# The summary's keys the advisor reads (aisimulate's names).
KEYS = (
    "median_ttft_ms",
    "p90_ttft_ms",
    "mean_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "median_e2e_latency_ms",
    "mean_e2e_latency_ms",
    "output_throughput_tok_s",
    "input_throughput_tok_s",
    "request_throughput_rps",
)


def _summary(result) -> dict:
    summary = result.summary
    get = summary.get if isinstance(summary, dict) else lambda k: getattr(summary, k, None)
    return {k: get(k) for k in KEYS}


def answer(configs: list, factory) -> dict:
    from aisimulate import CorePredictionConfig
    from aisimulate.predict import run_prediction

    results = []
    for n, item in enumerate(configs, 1):
        started = time.monotonic()
        try:
            cfg = CorePredictionConfig.model_validate(item["config"])
            summary = _summary(run_prediction(cfg, stack="engine", runner_factory=factory))
            results.append({"id": item["id"], "summary": summary})
            note = f"{time.monotonic() - started:.2f} s"
        except Exception as exc:  # the engine's refusal of one layout: reported, not fatal
            message = " ".join(str(exc).split())[:300] or type(exc).__name__
            results.append({"id": item["id"], "error": message})
            note = f"not simulated: {message[:80]}"
        print(f"advise: [{n}/{len(configs)}] {item.get('label', item['id'])}: {note}",
              file=sys.stderr, flush=True)  # fmt: skip
    return {"engine": {"name": "aisimulate", "version": version("aisimulate")}, "results": results}


def main(argv: list[str]) -> int:
    from aisimulate import EngineReplayRunnerFactory

    factory = EngineReplayRunnerFactory()  # one for all: its per-GPU tables load once
    if argv[:1] != ["--serve"]:
        json.dump(answer(json.load(sys.stdin)["configs"], factory), sys.stdout)
        return 0
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line)["configs"], factory)) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
