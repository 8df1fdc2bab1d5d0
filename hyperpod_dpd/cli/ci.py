"""`hyperpod-dpd ci --stack S [--job deploy|preview]`: what a GitHub workflow job needs to know
of a stack, read from its stack file (hyperpod-dpd:ci, aws:region), as `key=value` lines for
"$GITHUB_OUTPUT" (or one JSON object): runs-on (JSON: the runner where the stack's API answers),
region, the role the job assumes and the Pulumi organization. `--bootstrap`: the targeted
`pulumi up` that brings a CodeBuild runner up before the stack's first deploy from CI.

Exit codes: 0 printed; 2 bad input, naming the key the job lacks (no deploy role, a preview of a
stack pull requests may not preview, a private API with a GitHub-hosted runner)."""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ci",
        help="what a workflow job needs of a stack (runner, role), or its first deploy",
        description=__doc__.split("\n\n")[0],
    )
    described(
        parser,
        ['hyperpod-dpd ci --stack prod >> "$GITHUB_OUTPUT"',
         "hyperpod-dpd ci --stack prod --job preview --format json",
         "hyperpod-dpd ci --stack prod --bootstrap"],
        {0: "printed", 2: "bad input: the key the job lacks (a deploy role, a runner), named"},
    )  # fmt: skip
    parser.add_argument(
        "--stack", required=True, type=inputs.stack_name, help="reads Pulumi.<stack>.yaml"
    )
    parser.add_argument(
        "--job",
        choices=["deploy", "preview"],
        default="deploy",
        help="deploy (the deploy role) or preview (a pull request's read-only role)",
    )
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="print the first phase of the stack's first deploy (pulumi up --target ...)",
    )
    parser.add_argument("--run-id", help="the workflow run's id (default: $GITHUB_RUN_ID)")
    parser.add_argument(
        "--run-attempt", help="the workflow run's attempt (default: $GITHUB_RUN_ATTEMPT)"
    )
    parser.add_argument(
        "--format",
        choices=["github", "json"],
        default="github",
        help="github: key=value lines for $GITHUB_OUTPUT; json: one object",
    )
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.ci.command import run as ci

    return ci(args, project_dir)
