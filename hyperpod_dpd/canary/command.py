"""`hyperpod-dpd canary`: read both sides over the window, judge, print, exit by the verdict."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.colour import PLAIN, Palette
from core.exits import EXIT_FAILED, EXIT_HOLD, EXIT_OK, UsageProblem
from core.json_output import dumps
from core.problems import MISSING, ConfigError, ConfigProblem
from core.vocabulary import PROJECT
from hyperpod_dpd.canary.measures import Pool, measure
from hyperpod_dpd.canary.prometheus import Prometheus, stack_workspace
from hyperpod_dpd.canary.verdict import Measures, Verdict, judge
from specs.traffic_steps import candidates_of

if TYPE_CHECKING:
    from settings.stack_file import Stack

EXIT_CODES = {"promote": EXIT_OK, "rollback": EXIT_FAILED, "hold": EXIT_HOLD}
WINDOW = re.compile(r"^[1-9][0-9]*[smhd]$")


@dataclass(frozen=True)
class Assessment:
    """The canary's judgement of a candidate against its baseline over one window: what
    `hyperpod-dpd canary` prints and `hyperpod-dpd rollout` acts on."""

    candidate: str  # the candidate's label
    baselines: list[str]  # the baseline's endpoints' labels
    window: str
    traffic: dict[str, int]  # the split judged (the stack file's hyperpod-dpd:traffic)
    mine: Measures
    theirs: Measures
    verdict: Verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict.verdict]


def assess(
    read: Stack,
    endpoint: str | None,
    baseline: list[str] | None,
    window: str,
    prometheus_url: str | None,
) -> Assessment:
    """Judge `endpoint` of the stack `read` against `baseline` (default: the split's other
    endpoints) over `window`, on `prometheus_url` (default: the stack's AMP workspace).
    UsageProblem (exit 2) naming the flag or key on bad input."""
    from hyperpod_dpd.shared.endpoints import choose_endpoint, gpus_and_hourly_cost
    from settings.endpoint.slo import effective_slo

    if not WINDOW.match(window):
        raise UsageProblem(f"--window {window!r}: a Prometheus duration such as 30m, 2h or 1d")
    stack, settings = read.name, read.settings
    traffic = dict(settings.traffic)
    candidate = choose_endpoint(settings, stack, endpoint or _candidate(settings, stack))
    keys = baseline or [k for k in traffic if k != candidate.key]
    if not keys:
        raise _nothing_to_compare(settings, stack, candidate)
    baselines = [choose_endpoint(settings, stack, key) for key in keys]
    slo = effective_slo(settings.slo, candidate.config.slo)
    if slo is None:
        key = candidate.config_key("slo")
        raise UsageProblem(
            f"{key}: not set, nor {PROJECT}:slo; the canary judges by an SLO: pulumi config set "
            f"--stack {stack} --path '{PROJECT}:slo.minRequests' 1000 (the other "
            "objectives at their defaults)"
        )
    if prometheus_url:
        prom = Prometheus(prometheus_url, "--prometheus-url")
    else:
        prom = stack_workspace(settings.region, stack)

    def pools(entries) -> list[Pool]:
        out = []
        for entry in entries:
            gpus, cost = gpus_and_hourly_cost(settings, entry)
            c = entry.config
            out.append(Pool(c.name, c.namespace, c.mode, gpus, cost))
        return out

    mine = measure(prom, pools([candidate]), window)
    theirs = measure(prom, pools(baselines), window)
    verdict = judge(candidate.label, mine, theirs, slo, traffic, stack)
    return Assessment(
        candidate.label, [b.label for b in baselines], window, traffic, mine, theirs, verdict
    )


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from settings.stack_file import read_stack

    a = assess(
        read_stack(project_dir, args.stack),
        args.endpoint,
        args.baseline,
        args.window,
        args.prometheus_url,
    )
    report = {
        "verdict": a.verdict.verdict,
        "window": a.window,
        "baseline": {"endpoints": a.baselines, **a.theirs.report()},
        "candidate": {"endpoints": [a.candidate], **a.mine.report()},
        "reasons": a.verdict.reasons,
        "next": a.verdict.next,
    }
    if args.format == "json":
        print(dumps(report))
    else:
        print(_text(report, Palette(sys.stdout)))
    return a.exit_code


def _candidate(settings, stack: str) -> str | None:
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
            f"hyperpod-dpd canary --stack {stack} --endpoint {keys[0]}",
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
