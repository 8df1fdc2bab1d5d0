"""`hyperpod-dpd size`: PD buffer and GPU memory sizing of a DPD endpoint, without any cloud.

  hyperpod-dpd size [--model llama-3.3-70b|PATH/config.json] [--instance-type ml.p5.48xlarge]
                    [--tp 8] [--prompt-tokens N] [--pd-buffer 8GiB] [--in-flight N]
                    [--gpu-memory-utilization 0.75] [--max-model-len 16384] [--format text|json]

Defaults are the AWS DPD docs' example (Llama 3.3 70B, TP 8, 8 GiB buffer, the decoder log line's
prompt: DOCS_PROMPT_TOKENS in core/kv_cache.py). Exit codes: 0 printed, 2 bad input (the message
names the flag).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.catalog import GIB, MODELS, SizingError, instance_spec, load_model
from core.gpu_memory import RoleBudget
from core.kv_cache import DOCS_PROMPT_TOKENS
from core.sizing import SizingReport, size
from core.units import parse_byte_size

EXIT_BAD_INPUT = 2  # the same code `plan` uses for bad configuration


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `size` to the hyperpod-dpd command line."""
    p = subparsers.add_parser("size", help="PD buffer and GPU memory sizing (offline)")
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
        default=DOCS_PROMPT_TOKENS,
        help="typical prompt length in tokens",
    )
    p.add_argument("--pd-buffer", default="8GiB", help="PD_BUFFER_SIZE per TP rank, e.g. 16GiB")
    p.add_argument("--gpu-memory-utilization", type=float, default=0.75)
    p.add_argument("--max-model-len", type=int, default=16384)
    p.add_argument(
        "--in-flight", type=int, help="KV transfers expected at once: adds a buffer size advice"
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path | None) -> int:
    try:
        report = size(
            load_model(args.model),
            instance_spec(args.instance_type),
            tp=args.tp,
            prompt_tokens=args.prompt_tokens,
            pd_buffer_bytes=_buffer(args.pd_buffer),
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=args.max_model_len,
            in_flight=args.in_flight,
        )
    except SizingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(render_text(report))
    return 0


def _buffer(value: str) -> int:
    try:
        return parse_byte_size(value)
    except ValueError as exc:
        raise SizingError(
            "pd_buffer", value, f"not a valid byte size ({exc})", "Use e.g. 8GiB or 8589934592."
        ) from exc


def _gib(size_bytes: int) -> str:
    return f"{size_bytes / GIB:.2f} GiB"


def render_text(r: SizingReport) -> str:
    chunk_mib = r.chunk_bytes / 2**20
    fits = "fits" if r.pd_buffer_chunks >= r.max_model_len_chunks else "DOES NOT FIT"
    multiple = "a whole number of chunks" if r.pd_buffer_is_chunk_multiple else "rounded down"
    lines = [
        f"DPD sizing: {r.model} ({r.hf_id}) on {r.instance_type} "
        f"({r.gpus_per_node} x {r.gpu_model}), TP {r.tensor_parallel_size}",
        "",
        "KV transfer, per TP rank",
        f"  KV per token               {r.kv_bytes_per_token_per_rank:,} B",
        f"  LMCache chunk              {r.chunk_tokens} tokens = {r.chunk_bytes:,} B "
        f"({chunk_mib:g} MiB)",
        f"  prompt of {r.prompt_tokens:,} tokens".ljust(29)
        + f"{r.prompt_chunks} chunks = {r.transfer_bytes:,} B ({r.transfer_gib:.4f} GiB)",
        f"  PD_BUFFER_SIZE             {r.pd_buffer_bytes:,} B = {r.pd_buffer_chunks} chunks "
        f"({multiple})",
        f"  transfers in flight        {r.transfers_in_flight} in whole chunks "
        f"(docs' estimate: buffer / prompt KV = {r.transfers_in_flight_unchunked:.2f} ~ "
        f"{round(r.transfers_in_flight_unchunked)})",
        f"  max-model-len {r.max_model_len:,}".ljust(29)
        + f"{r.max_model_len_chunks} chunks: {fits}",
    ]
    if r.recommended_pd_buffer_bytes is not None:
        lines.append(
            f"  for {r.expected_in_flight} in flight".ljust(29)
            + f"PD_BUFFER_SIZE {r.recommended_pd_buffer_bytes:,} "
            f"({r.recommended_pd_buffer_bytes // GIB} GiB)"
        )
    lines += ["", f"GPU memory per GPU (--gpu-memory-utilization {r.gpu_memory_utilization:g})"]
    lines += _budget_table(r.prefill, r.decode)
    a = r.assumptions
    lines += [
        "",
        f"Assumed per GPU: overhead {_gib(a['overheadBytesPerGpu'])} (CUDA context, NCCL/NIXL "
        f"buffers); activation reserve {_gib(a['prefillActivationReserveBytes'])} prefill, "
        f"{_gib(a['decodeActivationReserveBytes'])} decode",
    ]
    lines += ["", f"Warnings ({len(r.warnings)}):" if r.warnings else "Warnings: none"]
    lines += [f"  - {w}" for w in r.warnings]
    return "\n".join(lines)


def _budget_table(prefill: RoleBudget, decode: RoleBudget) -> list[str]:
    rows = [
        ("GPU memory", "gpu_memory_bytes"),
        ("vLLM share", "vllm_share_bytes"),
        ("  weights", "weights_bytes"),
        ("  activation reserve", "activation_reserve_bytes"),
        ("  KV cache", "kv_cache_bytes"),
        ("PD buffer", "pd_buffer_bytes"),
        ("overhead (assumed)", "overhead_bytes"),
        ("headroom", "headroom_bytes"),
    ]
    out = [f"  {'':<24}{'prefill':>12}{'decode':>12}"]
    out += [
        f"  {label:<24}{_gib(getattr(prefill, a)):>12}{_gib(getattr(decode, a)):>12}"
        for label, a in rows
    ]
    out.append(
        f"  {'KV cache tokens':<24}{prefill.kv_cache_tokens:>12,}{decode.kv_cache_tokens:>12,}"
    )
    return out
