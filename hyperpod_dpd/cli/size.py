"""`hyperpod-dpd size`: PD buffer and GPU memory sizing of a DPD endpoint, without any cloud.

  hyperpod-dpd size [--model llama-3.3-70b|PATH/config.json] [--instance-type ml.p5.48xlarge]
                    [--tp 8] [--prompt-tokens N] [--pd-buffer 8GiB] [--in-flight N]
                    [--gpu-memory-utilization 0.75] [--max-model-len 16384] [--format text|json]

Defaults are the AWS DPD docs' example (Llama 3.3 70B, TP 8, 8 GiB buffer, the decoder log line's
prompt: DOCS_PROMPT_TOKENS in core/sizing/kv_cache.py). Exit codes: 0 printed, 2 bad input (the message
names the flag). The report itself: hyperpod_dpd/size.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described
from core.sizing.catalog import MODELS
from core.sizing.kv_cache import (
    DOCS_GPU_MEMORY_UTILIZATION,
    DOCS_MAX_MODEL_LEN,
    DOCS_PD_BUFFER_BYTES,
    DOCS_PROMPT_TOKENS,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `size` to the hyperpod-dpd command line."""
    p = subparsers.add_parser(
        "size",
        help="PD buffer and GPU memory sizing (offline)",
        description="Size the PD buffer and each role's GPU memory, without any cloud. The "
        "defaults are the AWS DPD documentation's example (Llama 3.3 70B on ml.p5.48xlarge, TP 8, "
        "an 8 GiB buffer); exit 2 when the flags give a worker vLLM would not start.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    described(
        p,
        ["hyperpod-dpd size",
         "hyperpod-dpd size --instance-type ml.p5e.48xlarge --tp 4 --max-model-len 32768",
         "hyperpod-dpd size --pd-buffer 16GiB --in-flight 64 --format json"],
        {0: "sized (warnings allowed)",
         2: "bad input, or a worker vLLM would not start at these flags (with what to change)"},
    )  # fmt: skip
    p.add_argument(
        "--model",
        default="llama-3.3-70b",
        help=f"catalog name ({', '.join(MODELS)}) or path to a Hugging Face config.json",
    )
    p.add_argument("--instance-type", default="ml.p5.48xlarge", help="a DPD instance type")
    p.add_argument("--tp", type=int, default=8, help="vLLM --tensor-parallel-size")
    p.add_argument(
        "--prompt-tokens",
        type=int,
        default=None,
        help=f"typical prompt length in tokens (default: the AWS docs' example, {DOCS_PROMPT_TOKENS},"
        " or --max-model-len if that is shorter, as the stack's endpoint.expectedPromptTokens)",
    )
    p.add_argument(
        "--pd-buffer",
        default=f"{DOCS_PD_BUFFER_BYTES // 2**30}GiB",
        help="PD_BUFFER_SIZE per TP rank, e.g. 16GiB",
    )
    p.add_argument(
        "--gpu-memory-utilization",
        type=inputs.finite_float,
        default=DOCS_GPU_MEMORY_UTILIZATION,
        help="vLLM's share of each GPU (both roles)",
    )
    p.add_argument(
        "--max-model-len", type=int, default=DOCS_MAX_MODEL_LEN, help="vLLM --max-model-len"
    )
    p.add_argument(
        "--in-flight", type=int, help="KV transfers expected at once: adds a buffer size advice"
    )
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path | None) -> int:
    from hyperpod_dpd.size.command import run as size

    return size(args, project_dir)
