"""`hyperpod-dpd canary`: read both sides over the window, judge, print, exit by the verdict."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from core.colour import PLAIN, Palette
from core.exits import EXIT_FAILED, EXIT_HOLD, EXIT_OK, UsageProblem
from core.json_output import dumps
from core.problems import MISSING, ConfigError, ConfigProblem
from core.vocabulary import PROJECT
from hyperpod_dpd.canary.measures import Pool, measure
from hyperpod_dpd.canary.prometheus import Prometheus, stack_workspace
from hyperpod_dpd.canary.verdict import judge
from specs.traffic_steps import candidates_of

EXIT_CODES = {"promote": EXIT_OK, "rollback": EXIT_FAILED, "hold": EXIT_HOLD}
WINDOW = re.compile(r"^[1-9][0-9]*[smhd]$")


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.shared.endpoints import choose_endpoint, gpus_and_hourly_cost
    from settings.endpoint.slo import effective_slo
    from settings.stack_file import read_stack

    if not WINDOW.match(args.window):
        raise UsageProblem(f"--window {args.window!r}: a Prometheus duration such as 30m, 2h or 1d")
    settings = read_stack(project_dir, args.stack).settings
    traffic = dict(settings.traffic)
    candidate = choose_endpoint(settings, args.stack, args.endpoint or _candidate(settings, args))
    keys = args.baseline or [k for k in traffic if k != candidate.key]
    if not keys:
        raise _nothing_to_compare(settings, args.stack, candidate)
    baselines = [choose_endpoint(settings, args.stack, key) for key in keys]
    slo = effective_slo(settings.slo, candidate.config.slo)
    if slo is None:
        key = candidate.config_key("slo")
        raise UsageProblem(
            f"{key}: not set, nor {PROJECT}:slo; the canary judges by an SLO: pulumi config set "
            f"--stack {args.stack} --path '{PROJECT}:slo.minRequests' 1000 (the other "
            "objectives at their defaults)"
        )
    if args.prometheus_url:
        prom = Prometheus(args.prometheus_url, "--prometheus-url")
    else:
        prom = stack_workspace(settings.region, args.stack)

    def pools(entries) -> list[Pool]:
        out = []
        for entry in entries:
            gpus, cost = gpus_and_hourly_cost(settings, entry)
            c = entry.config
            out.append(Pool(c.name, c.namespace, c.mode, gpus, cost))
        return out

    mine = measure(prom, pools([candidate]), args.window)
    theirs = measure(prom, pools(baselines), args.window)
    verdict = judge(candidate.label, mine, theirs, slo, traffic, args.stack)
    report = {
        "verdict": verdict.verdict,
        "window": args.window,
        "baseline": {"endpoints": [b.label for b in baselines], **theirs.report()},
        "candidate": {"endpoints": [candidate.label], **mine.report()},
        "reasons": verdict.reasons,
        "next": verdict.next,
    }
    if args.format == "json":
        print(dumps(report))
    else:
        print(_text(report, Palette(sys.stdout)))
    return EXIT_CODES[verdict.verdict]


def _candidate(settings, args: argparse.Namespace) -> str | None:
    """The endpoint to judge when --endpoint is not given: the split's one candidate (None:
    the stack's one endpoint, or let choose_endpoint say which keys there are)."""
    if not settings.endpoints:
        return None
    candidates = candidates_of(settings.traffic) if settings.traffic else []
    if len(candidates) == 1:
        return candidates[0]
    keys = candidates or list(settings.endpoints)
    raise ConfigError(
        [ConfigProblem(
            "--endpoint", MISSING,
            f"the candidate to judge: one of {', '.join(keys)}",
            f"hyperpod-dpd canary --stack {args.stack} --endpoint {keys[0]}",
        )],
        "--endpoint",
    )  # fmt: skip


def _nothing_to_compare(settings, stack: str, candidate) -> UsageProblem:
    """No baseline: the stack serves one endpoint, or splits no traffic (then another of its
    endpoints can be named)."""
    others = [k for k in settings.endpoints if k != candidate.key]
    if not others:
        return UsageProblem(
            f"--stack {stack}: its one endpoint ({candidate.label}) has nothing to compare with: "
            f"a canary judges a candidate of {PROJECT}:traffic against the split's baseline, "
            "as Pulumi.canary.yaml declares them (docs/canary.md); e.g. hyperpod-dpd canary "
            "--stack canary --endpoint candidate"
        )
    return UsageProblem(
        f"--baseline: stack {stack} splits no traffic between {candidate.label} and another "
        f"endpoint ({PROJECT}:traffic); name the endpoint to compare with: hyperpod-dpd canary "
        f"--stack {stack} --endpoint {candidate.key} --baseline {others[0]}"
    )


VERDICT_COLOUR = {"promote": "green", "hold": "yellow", "rollback": "red"}


def _text(r: dict, palette: Palette = PLAIN) -> str:
    rows = [
        ("requests", "requests", "{:d}"),
        ("errors", "errors", "{:d}"),
        ("error rate", "errorRate", "{:.2%}"),
        ("TTFT p50 ms", "ttftP50Ms", "{:.0f}"),
        ("TTFT p99 ms", "ttftP99Ms", "{:.0f}"),
        ("ITL p50 ms", "itlP50Ms", "{:.1f}"),
        ("ITL p99 ms", "itlP99Ms", "{:.1f}"),
        ("output tok/s per GPU", "outputTokensPerSecondPerGpu", "{:.1f}"),
        ("USD per 1M output tok", "usdPerMillionOutputTokens", "{:.2f}"),
    ]
    b, c = r["baseline"], r["candidate"]
    lines = [
        f"canary over {r['window']}: {', '.join(c['endpoints'])} against "
        f"{', '.join(b['endpoints'])}",
        f"  {'':22} {'baseline':>12} {'candidate':>12}",
    ]
    for label, key, fmt in rows:
        cells = ["n/a" if side[key] is None else fmt.format(side[key]) for side in (b, c)]
        lines.append(f"  {label:22} {cells[0]:>12} {cells[1]:>12}")
    paint = getattr(palette, VERDICT_COLOUR[r["verdict"]])
    lines.append(f"verdict: {paint(r['verdict'])}")
    lines += [f"  - {reason}" for reason in r["reasons"]]
    lines.append(f"next: {r['next']}")
    return "\n".join(lines)
