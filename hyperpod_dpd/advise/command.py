"""`hyperpod-dpd advise`: read the target and the workload (hyperpod_dpd/advise/setting.py),
simulate every layout within the node budget at every load level (one simulator process for the
whole command, aisimulate in its venv), recommend, derive the recommended layout's autoscaling
from the SLO (and, for a stack's endpoint of the other mode, its own mode's best layout's:
`--write` keeps the endpoint's mode), print (text or the JSON contract), draw the frontier chart,
and with --write patch the stack file."""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.exits import EXIT_FAILED, EXIT_OK, UsageProblem
from hyperpod_dpd.advise import chart, engine, measured, patch, render
from hyperpod_dpd.advise.capacity import Probe, Runs, capacities
from hyperpod_dpd.advise.recommend import cheapest_meeting, recommend
from hyperpod_dpd.advise.scaling import Scaling, Start, comment, scaling
from hyperpod_dpd.advise.search import (
    Layout,
    candidate,
    layouts,
    prediction_config,
    traffic,
    write_trace,
)
from hyperpod_dpd.advise.setting import Setting, setting
from hyperpod_dpd.advise.workload import Workload, workload


def compare(args: argparse.Namespace, project_dir: Path) -> int:
    """--measured RUN: the run's layout and workload predicted, beside what it measured; with an
    SLO (--ttft-ms, --tpot-ms), each pool's predicted target beside what the run held."""
    data = measured.read_run(args.measured)
    layout = measured.run_layout(data, args.measured)
    isl, osl = measured.run_lengths(data, args.measured)
    where = setting(args, project_dir)
    levels = sorted(int(level) for level in data["levels"])
    load = workload(isl, osl, None, levels, None, args.ttft_ms, args.tpot_ms, where.context,
                    where.context_key)  # fmt: skip
    configs = [{"id": f"0@{li}", "label": f"{layout.label} at concurrency {level}",
                "config": prediction_config(where.target, layout, traffic(load, level, None))}
               for li, level in enumerate(load.levels)]  # fmt: skip
    with engine.Session() as simulator:
        answer = simulator.simulate(configs)
        predicted = {}
        for result in answer["results"]:
            if "error" in result:
                raise UsageProblem(f"--measured {args.measured}: aisimulate cannot simulate "
                                   f"{layout.label}: {result['error'][:200]}")  # fmt: skip
            li = int(result["id"].split("@")[1])
            c = candidate(layout, load.levels[li], result["summary"], where.target, load,
                          where.hourly)  # fmt: skip
            predicted[float(load.levels[li])] = c.as_json(load)
        found = capacities(Probe(where.target, load, where.sequences), layout,
                           Runs(simulator.simulate))  # fmt: skip
    rows = measured.beside(data, predicted)
    slo = {"ttft": args.ttft_ms, "tpot": args.tpot_ms}
    targets = measured.targets_beside(data, layout, found, slo, where.endpoint_key, args.stack)
    if args.format == "json":
        print(render.as_json({"engine": answer["engine"], "run": data.get("label"),
                              "layout": layout.label, "levels": rows, "targets": targets}))  # fmt: skip
    else:
        print(measured.text(str(data.get("label")), layout, rows))
        if targets:
            print(measured.targets_text(targets))
    return EXIT_OK


@dataclass(frozen=True)
class Advice:
    """A layout to deploy: its autoscaling from the SLO and the patch that deploys both."""

    layout: Layout
    scaling: Scaling | None
    config: dict[str, Any]

    def as_json(self, load: Workload, meets: bool) -> dict[str, Any]:
        return {
            "mode": self.layout.mode,
            "layout": self.layout.label,
            "meetsSlo": meets,
            "config": self.config,
            "autoscaling": None if self.scaling is None else self.scaling.as_json(load),
        }


def _advice(layout: Layout, where: Setting, load: Workload, runs: Runs) -> Advice:
    probe = Probe(where.target, load, where.sequences)
    before = runs.count
    found = capacities(probe, layout, runs)
    if found:
        print(f"advise: {layout.label}'s autoscaling targets from {runs.count - before} more "
              "predictions", file=sys.stderr)  # fmt: skip
    within = (
        f"{load.shape()} ({runs.engine['name']} {runs.engine['version']})"
        if runs.engine
        else load.shape()
    )
    start = Start(where.target.model.name, where.target.instance_type, *where.caches)
    derived = scaling(layout, found, where.room, within, start)
    keys = None if derived is None else derived.config_keys()
    deploys = patch.config_patch(layout, where.target.instance_type, where.groups,
                                 where.endpoint_key, keys, where.grown(layout))  # fmt: skip
    config = patch.changes(deploys, _config_block(where.stack_path))
    return Advice(layout, derived, config)


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
    with tempfile.TemporaryDirectory() as tmp, engine.Session() as simulator:
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
        answer = simulator.simulate(configs)
        candidates, refused = [], []
        for result in answer["results"]:
            i, li = (int(x) for x in result["id"].split("@"))
            if "error" in result:
                refused.append(f"{found[i].label}: {result['error'][:120]}")
                continue
            candidates.append(candidate(found[i], load.levels[li], result["summary"],
                                        where.target, load, where.hourly))  # fmt: skip
        rec = recommend(candidates, load)
        runs = Runs(simulator.simulate)
        advice = kept = None
        if rec is not None and rec.meets:  # a layout that misses the SLOs gets no patch
            advice = _advice(rec.layout, where, load, runs)
            # --write keeps the endpoint's mode: its own mode's best layout, when the overall
            # recommendation is the other.
            if where.mode is not None and rec.layout.mode != where.mode:
                own = cheapest_meeting(candidates, where.mode)
                kept = None if own is None else _advice(own, where, load, runs)
    document = render.contract(answer["engine"], load, candidates, rec, advice, kept, where.mode)
    chart_path = None
    if args.chart is not None and candidates:
        title = (
            f"{where.target.model.name} on {where.target.instance_type}: {load.describe()} "
            f"(predicted by {answer['engine']['name']}, p50)"
        )
        data = chart.chart_data(title, load, candidates, rec.layout.label if rec else None)
        chart_path = str(chart.draw(data, args.chart))
    if args.format == "json":
        print(render.as_json(document))
    else:
        print(render.text(document, load, candidates, refused, chart_path, args.all))
    sys.stdout.flush()  # the report, then what --write did: its confirmation comes last
    if rec is None or not rec.meets:
        if args.write:
            print("advise: wrote nothing: no layout meets the SLOs", file=sys.stderr)
        return EXIT_FAILED
    if args.write and where.stack_path is not None:
        written = advice if rec.layout.mode == where.mode else kept
        if written is None:
            print(f"advise: wrote nothing: --write keeps the endpoint's mode {where.mode}, and no "
                  f"{where.mode} layout within the node budget meets the SLOs; the recommendation "
                  f"is {rec.layout.mode} {rec.layout.label}: set its patch above by hand to switch",
                  file=sys.stderr)  # fmt: skip
            return EXIT_FAILED
        note = None
        if written.scaling is not None:
            path = patch.endpoint_path(where.endpoint_key)
            note = (path, comment(load, answer["engine"], written.layout))
        patch.write(where.stack_path, written.config, note)
        scaled = "" if written.scaling is None else " and its autoscaling"
        grown = where.grown(written.layout)
        if grown:  # shared groups: say so, the plan prices them
            scaled += " (the nodes it needs: " + ", ".join(
                f"instanceGroups.{g}.instanceCount {n}" for g, n in grown.items()) + ")"  # fmt: skip
        print(f"advise: wrote {written.layout.mode} {written.layout.label}{scaled} into "
              f"{where.stack_path}; `hyperpod-dpd plan --stack {args.stack}` shows the change",
              file=sys.stderr)  # fmt: skip
    return EXIT_OK


def _config_block(stack_path: Path | None) -> dict[str, Any]:
    """The stack file's `config:` block as written (nothing: no stack)."""
    if stack_path is None:
        return {}
    from settings.yaml_files import safe_load

    return (safe_load(stack_path.read_text()) or {}).get("config") or {}


__all__ = ["Workload", "run"]
