"""`hyperpod-dpd preflight`, run: the stack read once, each AWS check, the report. The parser is
hyperpod_dpd/cli/preflight.py."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK
from core.json_output import dumps
from hyperpod_dpd.preflight import checks as aws_checks
from hyperpod_dpd.shared import boot_script
from settings.stack_file import read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    settings = read_stack(project_dir, args.stack).settings
    factory = args.client_factory or aws_checks.boto3_factory(settings.region)
    boot = boot_script.deployed(project_dir, args.stack)
    checks = aws_checks.run_checks(settings, factory, boot)
    if args.format == "json":
        print(dumps([asdict(c) for c in checks]))
    else:
        print(aws_checks.render(checks))
    return EXIT_FAILED if any(c.result == aws_checks.FAIL for c in checks) else EXIT_OK
