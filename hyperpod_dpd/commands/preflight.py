"""`hyperpod-dpd preflight --stack S [--format text|json]`: before the first `pulumi up`, ask
AWS whether the stack can work (GPU types offered in the AZ, HyperPod quotas, training plans,
pinned add-on versions). Exit 1 on any FAIL."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("preflight", help="check AWS capacity, quotas, plans (boto3)")
    parser.add_argument("--stack", required=True)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--project-dir", type=Path)
    parser.set_defaults(handler=run, client_factory=None)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.preflight import FAIL, boto3_factory, render, run_checks
    from hyperpod_dpd.stackfile import load_stack
    from settings import parse_settings

    stack = load_stack(project_dir, args.stack)
    settings = parse_settings(stack.decoded(), stack.secret_keys)
    factory = args.client_factory or boto3_factory(settings.region)
    checks = run_checks(settings, factory)
    if args.format == "json":
        print(json.dumps([asdict(c) for c in checks], indent=2))
    else:
        print(render(checks))
    return 1 if any(c.result == FAIL for c in checks) else 0
