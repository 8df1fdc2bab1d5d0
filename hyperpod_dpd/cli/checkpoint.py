"""`hyperpod-dpd checkpoint upload|verify`: stage a model checkpoint in S3 and check it.

  hyperpod-dpd checkpoint upload --source hf://ORG/NAME --revision SHA --dest s3://BUCKET/PREFIX
                                 [--region R] [--endpoint-url URL] [--concurrency N] ...
  hyperpod-dpd checkpoint verify --dest s3://BUCKET/PREFIX [--deep]

The same commands run in the cluster as `python -m checkpoint ...` (the staging Job).
Exit codes: 0 done, 1 transfer or check failed (rerun to resume), 2 bad input, 3 internal error.
"""

from __future__ import annotations

import argparse

from checkpoint.program import add_commands
from core.cli_help import described


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `checkpoint` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "checkpoint",
        help="stage a model checkpoint in S3 (upload, verify)",
        description="Stage a model checkpoint in S3 (resumable, every object verified, the "
        "manifest written last) and check a staged copy; the stack's staging Job runs the same.",
    )
    described(
        p,
        ["hyperpod-dpd checkpoint upload --source hf://meta-llama/Llama-3.3-70B-Instruct "
         "--revision 6f6073b423013f6a7d4d9f39144961bfbfbc386b --dest s3://my-bucket/models/llama",
         "hyperpod-dpd checkpoint verify --dest s3://my-bucket/models/llama --deep"],
        {0: "done", 1: "a transfer or a check failed (rerun to resume)", 2: "bad input, named"},
    )  # fmt: skip
    add_commands(p.add_subparsers(dest="checkpoint_command", required=True))
