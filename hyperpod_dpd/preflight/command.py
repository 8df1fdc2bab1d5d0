"""`hyperpod-dpd preflight`, run: the stack read once, each AWS check, the report. The parser is
hyperpod_dpd/cli/preflight.py."""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace
from pathlib import Path

from core.exits import EXIT_FAILED, EXIT_OK
from core.json_output import dumps
from core.pulumi_commands import naming_stack
from hyperpod_dpd.preflight import checks as aws_checks
from hyperpod_dpd.shared import boot_script
from settings.stack_file import read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    settings = read_stack(project_dir, args.stack).settings
    factory = args.client_factory or aws_checks.boto3_factory(settings.region)
    boot = boot_script.deployed(project_dir, args.stack)
    # The fixes' Pulumi commands name this stack (core/pulumi_commands.py), as the plan's do.
    checks = [replace(c, fix=naming_stack(c.fix, args.stack)) if c.fix else c
              for c in aws_checks.run_checks(settings, factory, boot)]  # fmt: skip
    if args.format == "json":
        print(dumps([asdict(c) for c in checks]))
    else:
        print(aws_checks.render(checks))
    return EXIT_FAILED if any(c.result == aws_checks.FAIL for c in checks) else EXIT_OK
