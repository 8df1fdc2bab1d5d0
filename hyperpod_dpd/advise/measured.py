"""Predicted beside measured: `advise --measured RUN` simulates the layout and the workload a
`benchmark run` recorded (its results.json: scenario, endpoint mode, replicas, TP, levels) and
sets each prediction beside the measurement, flagging a gap over 25%.

results.json is read as data (its schema, hyperpod-dpd/benchmark-results/v1, is the benchmark's:
hyperpod_dpd/benchmark/results.py); this room does not import the benchmark's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core.exits import UsageProblem
from hyperpod_dpd.advise.capacity import SATURATION, round_down
from hyperpod_dpd.advise.search import Layout

SCHEMA = "hyperpod-dpd/benchmark-results/v1"
GAP = 0.25
# (our name, predicted key of a candidate, measured value of a results.json level)
METRICS = (
    ("TTFT p50 ms", "ttftMs", lambda lvl: lvl["ttft"]["p50"]),
    ("TPOT p50 ms", "tpotMs", lambda lvl: lvl["tpot"]["p50"]),
    ("E2E p50 ms", "e2eMs", lambda lvl: lvl["e2e"]["p50"]),
)
WHERE_TO_LOOK = {
    "TTFT p50 ms": "the prefill queue depth and, for DPD, the KV transfer time (HyperPod inference "
    "dashboard); a measured TTFT far above the prediction with a deep queue means too few prefill "
    "replicas, without one the deployment (EFA, routing threshold) is off",
    "TPOT p50 ms": "the decode batch (running requests against --max-num-seqs) and the ITL "
    "percentiles; a measured TPOT far from the prediction with a full batch points at the "
    "simulator, with a small one at the deployment (CUDA graphs, TP)",
    "E2E p50 ms": "TTFT and TPOT above: E2E is their sum over the output",
}


def read_run(path: Path) -> dict[str, Any]:
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as exc:  # JSON errors and bytes that are no UTF-8 text
        raise UsageProblem(f"--measured {path}: cannot read a results.json there ({exc}). "
                           "Give a `hyperpod-dpd benchmark run --out` directory.") from exc  # fmt: skip
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UsageProblem(f"--measured {path}: not a benchmark results.json ({SCHEMA}). "
                           "Give a `hyperpod-dpd benchmark run --out` directory.")  # fmt: skip
    return data


def run_layout(run: dict[str, Any], path: Path) -> Layout:
    e = run.get("endpoint") or {}
    if "mode" not in e or "replicas" not in e:
        raise UsageProblem(f"--measured {path}: the run recorded no endpoint layout (it ran "
                           "without --stack). Rerun the benchmark with --stack S.")  # fmt: skip
    tp = int(e.get("tensorParallelSize", 8))
    if e["mode"] == "dpd":
        prefill, decode = (int(x) for x in str(e["replicas"]).split("/"))
        return Layout("dpd", prefill, tp, decode, tp)
    return Layout("colocated", int(e["replicas"]), tp)


def run_lengths(run: dict[str, Any], path: Path) -> tuple[int, int]:
    match = re.fullmatch(r"D\((\d+),(\d+)\)", str(run.get("scenario", "")))
    if not match:
        raise UsageProblem(f"--measured {path}: scenario {run.get('scenario')!r} is not D(IN,OUT)."
                           " Give a run of fixed lengths.")  # fmt: skip
    return int(match[1]), int(match[2])


def beside(run: dict[str, Any], predicted: dict[float, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per level: each metric predicted and measured, the gap (measured over predicted - 1)
    and whether it is over 25%."""
    out = []
    for level, measured in sorted(run["levels"].items(), key=lambda kv: int(kv[0])):
        p = predicted.get(float(level))
        if p is None:
            continue
        rows = []
        pairs = [(name, p[key], get(measured)) for name, key, get in METRICS]
        gpus = p["gpus"]
        pairs.append(("output tok/s", p["outputTokensPerSecondPerGpu"] * gpus,
                      measured["outputTokensPerSecond"]))  # fmt: skip
        for name, pred, meas in pairs:
            gap = (meas / pred - 1) if pred else None
            rows.append({"metric": name, "predicted": round(pred, 2), "measured": round(meas, 2),
                         "gapPercent": None if gap is None else round(gap * 100, 1),
                         "flagged": gap is not None and abs(gap) > GAP})  # fmt: skip
        out.append({"concurrency": int(level), "metrics": rows})
    return out


def text(label: str, layout: Layout, levels: list[dict[str, Any]]) -> str:
    lines = [f"predicted beside measured: {label} ({layout.label})"]
    flagged = set()
    for level in levels:
        lines.append(f"\nconcurrency {level['concurrency']}")
        lines.append(f"  {'metric':<14}{'predicted':>11}{'measured':>11}{'gap':>9}")
        for r in level["metrics"]:
            gap = "n/a" if r["gapPercent"] is None else f"{r['gapPercent']:+.0f}%"
            mark = "  <- over 25%" if r["flagged"] else ""
            lines.append(
                f"  {r['metric']:<14}{r['predicted']:>11.1f}{r['measured']:>11.1f}{gap:>9}{mark}"
            )
            if r["flagged"]:
                flagged.add(r["metric"])
    for metric in sorted(flagged):
        lines.append(f"\n{metric}: the simulator or the deployment is off; look at "
                     f"{WHERE_TO_LOOK.get(metric, 'the error count and the concurrency reached')}.")  # fmt: skip
    return "\n".join(lines)


# --- autoscaling targets: predicted beside what the run held ------------------------------

POOL_SLO = {"prefill": ("ttft", "TTFT"), "decode": ("tpot", "TPOT")}


def _per_replica(level: dict[str, Any], concurrency: int, pool: str, layout: Layout) -> float:
    """What one replica of `pool` carried at a level, in its target's unit: prompt tokens/s per
    prefill worker; requests running per decode worker (those in flight times the share of a
    request's time past its first token: Little's law over aiperf's closed loop); per colocated
    worker, every request in flight."""
    if pool == "prefill":
        return level["requestsPerSecond"] * level["inputTokens"] / layout.replicas
    if pool == "colocated":
        return concurrency / layout.replicas
    e2e, ttft = level["e2e"]["mean"], level["ttft"]["mean"]
    share = (e2e - ttft) / e2e if e2e > 0 else 1.0
    return concurrency * share / layout.decode_replicas


def held(
    run: dict[str, Any], layout: Layout, pool: str, slo: dict[str, float | None]
) -> dict[str, Any]:
    """How far the run's levels held the pool's SLO (p50s; `slo`: {"ttft": ms, "tpot": ms}),
    in the pool's target unit: the most one replica carried at the levels that held it (every
    level below included), and the least at the first level that missed it."""
    checks = [POOL_SLO[pool]] if pool in POOL_SLO else list(POOL_SLO.values())
    checks = [(key, name) for key, name in checks if slo.get(key)]
    out: dict[str, Any] = {"heldUpTo": None, "atConcurrency": None, "missedAt": None,
                           "missedAtConcurrency": None}  # fmt: skip
    for level_key, level in sorted(run["levels"].items(), key=lambda kv: int(kv[0])):
        c = int(level_key)
        load = round(_per_replica(level, c, pool, layout), 2)
        misses = [f"{name} {level[key]['p50']:.1f} ms" for key, name in checks
                  if level[key]["p50"] > slo[key]]  # fmt: skip
        if misses:
            out |= {"missedAt": load, "missedAtConcurrency": c, "missed": ", ".join(misses)}
            break
        out |= {"heldUpTo": load, "atConcurrency": c}
    return out


def suggestion(predicted: float | None, measured: dict[str, Any], cap: float | None) -> tuple:
    """(the target to set, or None, and why) from the predicted target and what the run held;
    `cap`: the most a target may be (an overloaded replica's reading over SATURATION)."""
    up_to, missed = measured["heldUpTo"], measured["missedAt"]
    if up_to is None:
        return None, ("the run's lowest level already missed the SLO: rerun the benchmark at "
                      "lower concurrency to find what one replica holds")  # fmt: skip
    if missed is None:
        if predicted is not None and up_to >= predicted:
            return predicted, "the run held the SLO beyond the predicted target: keep it"
        return None, ("the run held the SLO at every level, below the predicted target: rerun "
                      "at higher concurrency to see where it stops")  # fmt: skip
    target = min(up_to, cap) if cap else up_to
    if predicted is not None and target >= predicted:
        return predicted, "the run held the SLO up to the predicted target: keep it"
    return target, ("the run missed the SLO below the predicted target: set the target to "
                    "what one replica held")  # fmt: skip


def targets_text(rows: list[dict[str, Any]]) -> str:
    lines = ["\nautoscaling targets, predicted beside what the run held (per replica):"]
    for r in rows:
        m = r["measured"]
        ran = (f"held {r['limit']} up to {m['heldUpTo']:g} (concurrency {m['atConcurrency']})"
               if m["heldUpTo"] is not None else f"never held {r['limit']}")  # fmt: skip
        if m["missedAt"] is not None:
            ran += f", missed it at {m['missedAt']:g} (concurrency {m['missedAtConcurrency']}: {m['missed']})"
        predicted = "none" if r["predicted"] is None else f"{r['predicted']:g}"
        lines.append(f"  {r['pool']} {r['metric']}: predicted {predicted}; the run {ran}")
        lines.append(f"    {r['why']}" + (f": {r['fix']}" if r.get("fix") else ""))
    return "\n".join(lines)


def targets_beside(run: dict[str, Any], layout: Layout, found: dict[str, Any],
                   slo: dict[str, float | None], endpoint_key: str | None,
                   stack: str | None) -> list[dict[str, Any]]:  # fmt: skip
    """Each pool's predicted target (`found`: hyperpod_dpd/advise/capacity.py's) beside what the
    run held, and the target to set, with the commands that set it on `stack`'s endpoint."""
    from settings.config.errors import full_key

    rows = []
    for pool, cap in found.items():
        carried = held(run, layout, pool, slo)
        ceiling = None if cap.saturation is None else cap.saturation / SATURATION
        target, why = suggestion(cap.target, carried, ceiling)
        row = {"pool": pool, "metric": cap.metric, "limit": cap.limit, "predicted": cap.target,
               "measured": carried, "suggestedTarget": target, "why": why}  # fmt: skip
        if target is not None and target != cap.target:
            base = ("endpoints", endpoint_key) if endpoint_key else ("endpoint",)
            scope = () if pool == "colocated" else (pool,)
            keys = [full_key((*base, "autoscaling", *scope, *name))
                    for name in (("target",), ("capacity", "perReplica"))]  # fmt: skip
            row["fix"] = " && ".join(f"pulumi config set --stack {stack or '<stack>'} --path "
                                     f"'{k}' {round_down(target):g}" for k in keys)  # fmt: skip
        rows.append(row)
    return rows
