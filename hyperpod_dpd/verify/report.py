"""What `hyperpod-dpd verify` prints: the report as a table (with cause, fix and reference of
each failure and warning) or as JSON for CI."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hyperpod_dpd.verify.results import FAIL, PASS, SKIP, WARN, Check, Report


def report_json(report: Report) -> dict[str, Any]:
    return {
        "endpoint": {
            "name": report.target.name,
            "namespace": report.target.namespace,
            "routingThreshold": report.threshold,
            "thresholdSource": report.threshold_source,
            "modelLocation": report.model_location,
        },
        "prompts": report.prompts_via,
        "checks": [asdict(c) for c in report.checks],
        "passed": report.count(PASS),
        "failed": report.count(FAIL),
        "skipped": report.count(SKIP),
        "warned": report.count(WARN),
        "exitCode": report.exit_code,
    }


def render_text(report: Report) -> str:
    t = report.target
    width = max(len(c.name) for c in report.checks)
    indent = " " * (width + 10)
    lines = [
        f"DPD endpoint {t.namespace}/{t.name}: routing threshold {report.threshold} "
        f"(from {report.threshold_source})",
        f"prompts: {report.prompts_via}",
        "",
        f"{'CHECK'.ljust(width)}  RESULT  DETAIL",
    ]
    for c in report.checks:
        lines.append(f"{c.name.ljust(width)}  {c.result.ljust(6)}  {c.detail}")
        lines += _cause_lines(c, indent)
    lines += [
        "",
        f"serves: {report.model_location or 'no modelLocation in the IEC'}",
        f"{report.count(PASS)} passed, {report.count(FAIL)} failed, {report.count(SKIP)} skipped"
        + (f", {report.count(WARN)} warned" if report.count(WARN) else ""),
    ]
    return "\n".join(lines)


def _cause_lines(c: Check, indent: str) -> list[str]:
    if c.result not in (FAIL, WARN):
        return []
    return [f"{indent}cause: {c.cause}", f"{indent}fix:   {c.fix}", f"{indent}see:   {c.ref}"]
