"""`benchmark run --target URL`: one run of aiperf from this machine, written as results.json.

`execute` is also what the in-cluster Job runs (hyperpod_dpd/benchmark/in_cluster.py, against
the router), so a local run and an in-cluster run produce the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import api_key
from core.exits import EXIT_FAILED, EXIT_OK
from hyperpod_dpd.benchmark import results
from hyperpod_dpd.benchmark.loadgen import (
    REQUIREMENTS,
    LoadRun,
    base_url,
    export_of,
    loadtest_venv,
    run_aiperf,
)
from hyperpod_dpd.benchmark.scenario import (
    BenchmarkArgError,
    Scenario,
    StopRule,
    default_requests,
    parse_concurrency,
    parse_scenario,
)


class RunError(RuntimeError):
    """The load generator or the endpoint failed; the message says where to look."""


# The files without which no tokenizer loads (a fast tokenizer, or a SentencePiece model).
TOKENIZER_REQUIRED_ANY = ("tokenizer.json", "tokenizer.model")


def tokenizer_dir(path: Path | None) -> Path:
    """The directory a tokenizer loads from: `path` itself, or the directory of a tokenizer.json."""
    if path is None:
        raise BenchmarkArgError(
            "--tokenizer", None, "a local tokenizer directory or tokenizer.json",
            "give the model's tokenizer, e.g. --tokenizer ./Llama-3.3-70B-Instruct (nothing is "
            "fetched from a hub)",
        )  # fmt: skip
    if path.is_file() and path.name == "tokenizer.json":
        return path.parent.resolve()
    if path.is_dir() and any((path / f).exists() for f in TOKENIZER_REQUIRED_ANY):
        return path.resolve()
    raise BenchmarkArgError(
        "--tokenizer", str(path), "a directory holding tokenizer.json (or tokenizer.model), or "
        "that tokenizer.json", "point it at the model's files, e.g. the staged checkpoint's",
    )  # fmt: skip


def check_target(url: str) -> str:
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise BenchmarkArgError(
            "--target", url, "an http:// or https:// URL of an OpenAI-compatible server",
            "for example --target http://localhost:8000 (kubectl port-forward to the router)",
        )  # fmt: skip
    return url


def served_model(base_url: str, key: str | None = None, timeout: float = 10.0) -> str:
    """The first model the server lists at /v1/models (asked with the API key, if any)."""
    url = f"{base_url}/v1/models"
    request = urllib.request.Request(url, headers=api_key.headers(key))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listed = json.load(response).get("data") or []
    except urllib.error.HTTPError as exc:
        if exc.code != 401:
            raise RunError(f"cannot list the served models at {url}: {exc}; is --target "
                           "right? (or give --model)") from exc  # fmt: skip
        said = "refused the API key in" if key else "wants an API key: none set in"
        raise RunError(
            f"{url} answered 401: it {said} {api_key.ENV}. The traffic split takes the stack's "
            f"key: export {api_key.ENV}=$(pulumi stack output {api_key.OUTPUT} --show-secrets "
            "--stack STACK) and run again"
        ) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise RunError(f"cannot list the served models at {url}: {exc}; is --target right? "
                       "(or give --model)") from exc  # fmt: skip
    if not listed or not isinstance(listed[0], dict) or not listed[0].get("id"):
        raise RunError(f"{url} lists no model; give --model NAME")
    return str(listed[0]["id"])


def stack_settings(project_dir: Path, stack_name: str) -> Any:
    """The stack's typed settings, as the program sees them (read once per command)."""
    from settings.stack_file import read_stack

    return read_stack(project_dir, stack_name).settings


def endpoint_facts(settings: Any, stack_name: str, entry: Any = None) -> dict[str, Any]:
    """The endpoint fields a comparison needs, from the stack's settings: `entry` (one of
    `settings.entries()`; None: the stack's only endpoint), its GPUs and what they cost."""
    from hyperpod_dpd.shared.cost import hourly_cost, total
    from hyperpod_dpd.shared.endpoints import gpus_and_hourly_cost, pool_nodes

    entry = entry or settings.entries()[0]
    e = entry.config
    numbers = entry.numbers  # what the workers run with (settings/endpoint/numbers.py)
    nodes = pool_nodes(settings, entry)
    facts: dict[str, Any] = {
        # What the whole stack bills per hour (the plan's estimate): the price of these tokens.
        "hourlyCostUsd": round(total(hourly_cost(settings)), 2),
        "stack": stack_name,
        "name": e.name,
        "namespace": e.namespace,
        "mode": e.mode,
        "tensorParallelSize": numbers.of_role("decode").tensor_parallel_size.value,
        "image": e.image,
        # Each worker owns its node: replicas x GPUs per node, per pool (fixed replicas).
        "gpus": sum(n.gpus for n in nodes),
        "gpusPerPool": {n.pool: n.gpus for n in nodes},
    }
    if entry.key is not None:
        # Several endpoints share the stack: the price of these tokens is this endpoint's nodes.
        own = gpus_and_hourly_cost(settings, entry)[1]
        facts |= {"endpoint": entry.key, "hourlyCostUsd": own,
                  "stackHourlyCostUsd": facts["hourlyCostUsd"]}  # fmt: skip
    if e.mode == "dpd":
        facts |= {
            "replicas": f"{entry.replicas('prefill')}/{entry.replicas('decode')}",
            "roleTensorParallelSize": {
                role: numbers.of_role(role).tensor_parallel_size.value
                for role in ("prefill", "decode")
            },
            "routingThreshold": e.routing_threshold,
            "pdBufferSize": numbers.pd_buffer.value,
        }
    else:
        facts["replicas"] = str(entry.replicas("colocated"))
        facts["chunkedPrefill"] = e.colocated.describe()
    return facts


def _pinned(package: str) -> str:
    for line in REQUIREMENTS.read_text().splitlines():
        if line.lower().startswith(f"{package}=="):
            return line.split("==", 1)[1].strip()
    return "unknown"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class RunPlan:
    """A run's workload and where it writes, checked before anything runs or is written."""

    scenario: Scenario
    levels: list[int]
    stop: StopRule
    out: Path
    label: str
    model: str | None  # None: the server's first /v1/models


def run_plan(args: argparse.Namespace) -> RunPlan:
    scenario = parse_scenario(args.scenario)
    levels = parse_concurrency(args.concurrency)
    stop = StopRule(args.requests, args.duration)
    if stop.requests is None and stop.duration is None:
        stop = StopRule(requests=default_requests(levels))
    out: Path = args.out
    if (out / "results.json").exists():
        raise BenchmarkArgError(
            "--out", str(out), "a new directory or one without results.json",
            "choose another --out (an earlier run is never overwritten)",
        )  # fmt: skip
    return RunPlan(scenario, levels, stop, out, args.label or out.resolve().name, args.model)


def stack_endpoint(args: argparse.Namespace, project_dir: Path) -> tuple[Any, Any]:
    """The stack's settings and the endpoint `--endpoint` names (None, None without --stack)."""
    from hyperpod_dpd.shared.endpoints import choose_endpoint

    if not args.stack:
        if args.endpoint is not None:
            raise BenchmarkArgError(
                "--endpoint", args.endpoint, "an endpoint key of the stack given with --stack",
                f"add --stack S (or drop --endpoint: --target {args.target} says where it is)",
            )  # fmt: skip
        return None, None
    settings = stack_settings(project_dir, args.stack)
    return settings, choose_endpoint(settings, args.stack, args.endpoint)


def endpoint_record(
    args: argparse.Namespace, settings: Any | None, entry: Any = None
) -> dict[str, Any] | None:
    """What results.json records about the endpoint: the stack's facts (`settings` and its
    `entry`, None without --stack), the hourly cost (the endpoint's estimate, or --hourly-cost)
    and its GPUs (replicas x GPUs per node, or --gpus)."""
    endpoint = endpoint_facts(settings, args.stack, entry) if settings is not None else None
    if args.hourly_cost is not None:
        if args.hourly_cost <= 0:
            raise BenchmarkArgError(
                "--hourly-cost", args.hourly_cost, "US dollars per hour > 0",
                "for example --hourly-cost 196.6 (two p5.48xlarge on demand)",
            )  # fmt: skip
        endpoint = {**(endpoint or {}), "hourlyCostUsd": args.hourly_cost}
    gpus = getattr(args, "gpus", None)
    if gpus is not None:
        if gpus < 1:
            raise BenchmarkArgError(
                "--gpus", gpus, "the endpoint's GPUs, a whole number >= 1",
                "for example --gpus 16 (one prefill and one decode p5.48xlarge)",
            )  # fmt: skip
        endpoint = {**(endpoint or {}), "gpus": gpus}
        endpoint.pop("gpusPerPool", None)  # the stack's split no longer adds up to it
    return endpoint


def local_run(args: argparse.Namespace, project_dir: Path) -> int:
    plan = run_plan(args)
    target = check_target(args.target)
    tokenizer = tokenizer_dir(args.tokenizer)
    settings, entry = stack_endpoint(args, project_dir)
    return execute(plan, target, tokenizer, endpoint_record(args, settings, entry))


def execute(plan: RunPlan, target: str, tokenizer: Path, endpoint: dict[str, Any] | None) -> int:
    """One run of aiperf against `target`, written as `plan.out`/results.json: the same code
    on a laptop and in the cluster's Job. 1 when any request failed (after writing)."""
    out = plan.out
    out.mkdir(parents=True, exist_ok=True)
    venv = loadtest_venv()
    # The traffic split's API key, when the caller has one (the Job's from the stack's Secret).
    key = os.environ.get(api_key.ENV) or None
    model = plan.model or served_model(base_url(target), key)
    load = LoadRun(
        target=target, tokenizer=tokenizer, model=model, scenario=plan.scenario,
        levels=plan.levels, stop=plan.stop, artifacts=out / "aiperf", key=key,
    )  # fmt: skip
    levels, stop = plan.levels, plan.stop
    print(f"benchmark {plan.scenario.text} at concurrency {levels} against {target} ({model})")
    started, cpu = time.time(), _children_cpu()
    proc = run_aiperf(load, venv, out / "aiperf.log")
    client_cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        raise RunError(f"aiperf exited {proc.returncode}; its output is in {out / 'aiperf.log'}")
    per_level = {}
    for level in levels:
        source = export_of(load.artifacts, level, levels)
        if not source.exists():
            raise RunError(f"aiperf wrote no summary for concurrency {level} ({source}); "
                           f"see {out / 'aiperf.log'}")  # fmt: skip
        per_level[str(level)] = results.level_results(json.loads(source.read_text()), source)
    data = {
        "schema": results.SCHEMA,
        "label": plan.label,
        "scenario": plan.scenario.text,
        "target": target,
        "model": model,
        "endpoint": endpoint,
        "loadGenerator": {"name": "aiperf", "version": _pinned("aiperf")},
        "stop": {"requests": stop.requests, "durationSeconds": stop.duration},
        "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wallSeconds": round(time.time() - started, 3),
        "clientCpuSeconds": round(client_cpu, 3),
        "levels": per_level,
    }
    results.write(out / "results.json", data)
    print(summary(data))
    print(f"wrote {out / 'results.json'}")
    failed = sum(level["errors"] for level in per_level.values())
    if failed:
        print(f"error: {failed} request(s) failed; see {out / 'aiperf.log'}")
        return EXIT_FAILED
    return EXIT_OK


def summary(data: dict[str, Any]) -> str:
    lines = [f"{'concurrency':>11} {'TTFT p50':>9} {'TPOT p50':>9} {'ITL p50':>8} "
             f"{'E2E p50':>8} {'out tok/s':>10} {'req/s':>6} {'errors':>6}"]  # fmt: skip
    for level, r in data["levels"].items():
        lines.append(
            f"{level:>11} {r['ttft']['p50']:>7.1f}ms {r['tpot']['p50']:>7.1f}ms "
            f"{r['itl']['p50']:>6.1f}ms {r['e2e']['p50']:>6.0f}ms "
            f"{r['outputTokensPerSecond']:>10.1f} {r['requestsPerSecond']:>6.2f} {r['errors']:>6}"
        )
    return "\n".join(lines)
