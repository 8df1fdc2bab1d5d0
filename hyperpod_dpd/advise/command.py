"""`hyperpod-dpd advise`: read the target and the workload, simulate every layout within the node
budget at every load level (one subprocess, aisimulate in its venv), recommend, print (text or
the JSON contract), draw the frontier chart, and with --write patch the stack file."""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.exits import EXIT_FAILED, EXIT_OK, UsageProblem
from core.sizing.kv_cache import (
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
)
from hyperpod_dpd.advise import chart, engine, measured, patch, render
from hyperpod_dpd.advise.recommend import recommend
from hyperpod_dpd.advise.search import (
    Memory,
    candidate,
    layouts,
    prediction_config,
    traffic,
    write_trace,
)
from hyperpod_dpd.advise.targets import Target, target
from hyperpod_dpd.advise.workload import Workload, workload

DEFAULT_MODEL, DEFAULT_INSTANCE = "llama-3.3-70b", "ml.p5.48xlarge"


@dataclass(frozen=True)
class Setting:
    """What advise takes from a stack (or the flags and the docs' defaults)."""

    target: Target
    memory: Memory
    hourly: float | None
    groups: dict[str, dict[str, Any]] | None
    endpoint_key: str | None
    context: int
    context_key: str
    stack_path: Path | None


def _from_stack(args: argparse.Namespace, project_dir: Path) -> Setting:
    from hyperpod_dpd.shared.cost import price_table
    from settings.stack_file import read_stack

    stack = read_stack(project_dir, args.stack)
    s = stack.settings
    listed = s.entries()
    if args.endpoint is None and len(listed) > 1:
        raise UsageProblem(f"--endpoint: stack {args.stack} has several endpoints "
                           f"({', '.join(e.label for e in listed)}); name one, e.g. --endpoint "
                           f"{listed[0].key}")  # fmt: skip
    chosen = [e for e in listed if args.endpoint in (None, e.key, e.label)]
    if not chosen:
        raise UsageProblem(f"--endpoint {args.endpoint}: not an endpoint of stack {args.stack} "
                           f"(it has {', '.join(e.label for e in listed)}); name one of them, e.g. "
                           f"--endpoint {listed[0].key or listed[0].label}")  # fmt: skip
    entry = chosen[0]
    e = entry.config
    # The numbers the endpoint runs with (settings/endpoint/numbers.py): the decoder's hold the PD
    # buffer; the shortest context of its pools bounds a request.
    decoder = entry.numbers.of_role("decode")
    context = min((p.max_model_len for p in entry.numbers.pools.values()), key=lambda g: g.value)
    gpu = s.gpu_groups
    instance_type = args.instance_type or (next(iter(gpu.values())).instance_type if gpu else "")
    source = "stack" if args.instance_type is None else "flag"
    t = target(instance_type, args.model or e.model, source if args.model is None else "flag")
    price = price_table(s).get(instance_type) or {}
    return Setting(
        target=t,
        memory=Memory(
            decoder.gpu_memory_utilization.value,
            decoder.max_model_len.value,
            entry.numbers.pd_buffer.value,
        ),
        hourly=price.get("hourly"),
        groups={
            n: {"role": g.role, "instanceType": g.instance_type}
            for n, g in s.instance_groups.items()
        },
        endpoint_key=entry.key,
        context=context.value,
        context_key=context.where,
        stack_path=stack.file.path,
    )


def setting(args: argparse.Namespace, project_dir: Path) -> Setting:
    if args.stack is not None:
        return _from_stack(args, project_dir)
    if args.write:
        raise UsageProblem(
            "--write without --stack: there is no stack file to patch. Add --stack S."
        )
    from hyperpod_dpd.shared.cost import load_prices

    t = target(args.instance_type or DEFAULT_INSTANCE, args.model or DEFAULT_MODEL)
    price = load_prices().get(t.instance_type) or {}
    return Setting(
        target=t,
        memory=Memory(DOCS_GPU_MEMORY_UTILIZATION, DOCS_MAX_MODEL_LEN, DOCS_PD_BUFFER_BYTES),
        hourly=price.get("hourly"),
        groups=None,
        endpoint_key=None,
        context=t.model.context_length,
        context_key=f"the context of {t.model.name}",
        stack_path=None,
    )


def compare(args: argparse.Namespace, project_dir: Path) -> int:
    """--measured RUN: the run's layout and workload predicted, beside what it measured."""
    data = measured.read_run(args.measured)
    layout = measured.run_layout(data, args.measured)
    isl, osl = measured.run_lengths(data, args.measured)
    where = setting(args, project_dir)
    levels = sorted(int(level) for level in data["levels"])
    load = workload(isl, osl, None, levels, None, None, None, where.context, where.context_key)
    configs = [{"id": f"0@{li}", "label": f"{layout.label} at concurrency {level}",
                "config": prediction_config(where.target, layout, traffic(load, level, None))}
               for li, level in enumerate(load.levels)]  # fmt: skip
    answer = engine.simulate(configs)
    predicted = {}
    for result in answer["results"]:
        if "error" in result:
            raise UsageProblem(f"--measured {args.measured}: aisimulate cannot simulate "
                               f"{layout.label}: {result['error'][:200]}")  # fmt: skip
        li = int(result["id"].split("@")[1])
        c = candidate(layout, load.levels[li], result["summary"], where.target, load, where.hourly)
        predicted[float(load.levels[li])] = c.as_json(load)
    rows = measured.beside(data, predicted)
    if args.format == "json":
        print(render.as_json({"engine": answer["engine"], "run": data.get("label"),
                              "layout": layout.label, "levels": rows}))  # fmt: skip
    else:
        print(measured.text(str(data.get("label")), layout, rows))
    return EXIT_OK


def run(args: argparse.Namespace, project_dir: Path) -> int:
    if args.measured is not None:
        return compare(args, project_dir)
    if args.max_nodes < 1:
        raise UsageProblem(f"--max-nodes {args.max_nodes}: at least 1 node. Give 1 or more.")
    where = setting(args, project_dir)
    load = workload(args.isl, args.osl, args.trace, args.concurrency, args.rps, args.ttft_ms,
                    args.tpot_ms, where.context, where.context_key)  # fmt: skip
    found = layouts(where.target, where.memory, args.max_nodes)
    if not found:
        raise UsageProblem(
            f"{where.target.model.name} fits no TP on one {where.target.instance_type} at "
            f"--gpu-memory-utilization {where.memory.gpu_memory_utilization:g} and max model length "
            f"{where.memory.max_model_len} (hyperpod-dpd size shows why). Pick a larger GPU."
        )
    print(f"advise: {len(found)} layouts x {len(load.levels)} levels on "
          f"{where.target.instance_type} ({where.target.system})", file=sys.stderr)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        configs = []
        for li, level in enumerate(load.levels):
            trace = None
            if load.trace is not None:
                rps = None if load.load == "concurrency" else level
                trace = write_trace(load, Path(tmp) / f"trace-{li}.jsonl", rps)
            shape = traffic(load, level, trace)
            configs += [{"id": f"{i}@{li}", "label": f"{lay.label} at {load.load} {level:g}",
                         "config": prediction_config(where.target, lay, shape)}
                        for i, lay in enumerate(found)]  # fmt: skip
        answer = engine.simulate(configs)
    candidates, refused = [], []
    for result in answer["results"]:
        i, li = (int(x) for x in result["id"].split("@"))
        if "error" in result:
            refused.append(f"{found[i].label}: {result['error'][:120]}")
            continue
        candidates.append(candidate(found[i], load.levels[li], result["summary"], where.target,
                                    load, where.hourly))  # fmt: skip
    rec = recommend(candidates, load)
    config = None
    if rec is not None and rec.meets:  # a layout that misses the SLOs gets no patch
        config = patch.changes(
            patch.config_patch(
                rec.layout, where.target.instance_type, where.groups, where.endpoint_key
            ),
            _config_block(where.stack_path),
        )
    document = render.contract(answer["engine"], load, candidates, rec, config)
    chart_path = None
    if args.chart is not None and candidates:
        title = (
            f"{where.target.model.name} on {where.target.instance_type}: {load.describe()} "
            f"(predicted by {answer['engine']['name']}, p50)"
        )
        data = chart.chart_data(title, load, candidates, rec.layout.label if rec else None)
        chart_path = str(chart.draw(data, args.chart))
    if args.write and rec is not None and config is not None and where.stack_path is not None:
        patch.write(where.stack_path, config)
        print(f"advise: wrote the patch into {where.stack_path}", file=sys.stderr)
    if args.format == "json":
        print(render.as_json(document))
    else:
        print(render.text(document, load, candidates, refused, chart_path))
    if rec is None or not rec.meets:
        if args.write:
            print("advise: wrote nothing: no layout meets the SLOs", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _config_block(stack_path: Path | None) -> dict[str, Any]:
    """The stack file's `config:` block as written (nothing: no stack)."""
    if stack_path is None:
        return {}
    from settings.yaml_files import safe_load

    return (safe_load(stack_path.read_text()) or {}).get("config") or {}


__all__ = ["Workload", "run"]
