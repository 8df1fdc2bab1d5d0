"""`hyperpod-dpd size`, run: the sizing report of core/sizing/report.py for the flags, as text or
JSON. The parser is hyperpod_dpd/cli/size.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.colour import PLAIN, Palette
from core.exits import EXIT_BAD_INPUT, EXIT_OK
from core.json_output import dumps
from core.sizing.catalog import GIB, SizingError, instance_spec, load_model
from core.sizing.gpu_memory import OVERHEAD_BYTES, RoleBudget, worker_fit
from core.sizing.kv_cache import assumed_prompt_tokens, buffer_in_chunks
from core.sizing.report import SizingReport, size
from core.units import parse_byte_size
from core.vocabulary import DPD_ROLES
from core.worker_advice import (
    Names,
    cannot_start,
    common_range,
    unfit_advice,
    utilization_range,
)


def run(args: argparse.Namespace, project_dir: Path | None) -> int:
    """Print the report; EXIT_BAD_INPUT naming the flag when the inputs cannot be sized."""
    if args.prompt_tokens is None:  # as the settings take an unset expectedPromptTokens
        args.prompt_tokens = assumed_prompt_tokens(args.max_model_len)
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
    unfit = cannot_start_problems(args)
    if unfit:
        error = Palette(sys.stderr).red("error:")
        print("\n".join(f"{error} {problem}" for problem in unfit), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.format == "json":
        print(dumps(report.to_json()))
    else:
        print(render_text(report, Palette(sys.stdout)))
    return EXIT_OK


FLAGS = Names(
    "--tp",
    "--max-model-len",
    "--instance-type",
    lambda size: f"--pd-buffer to {size // GIB}GiB",
)


def cannot_start_problems(args: argparse.Namespace) -> list[str]:
    """Each role whose worker vLLM would refuse to start at the flags, with the advice the
    plan's gpu-memory policy gives (core/worker_advice.py), said in flags. Every flag applies to
    both roles: the advice is one step that starts both."""
    model, instance = load_model(args.model), instance_spec(args.instance_type)
    buffer = _buffer(args.pd_buffer)
    fits = {
        role: worker_fit(role, model, instance, args.tp, args.max_model_len, buffer)
        for role in DPD_ROLES
    }
    utilization = args.gpu_memory_utilization

    def starts(fit) -> bool:  # vLLM's share holds it, and what is left holds buffer and overhead
        return fit.holds(utilization) and fit.leaves_room(utilization)

    if all(starts(f) for f in fits.values()):
        return []
    shared = common_range(list(fits.values()))
    out = []
    for role, fit in fits.items():
        if starts(fit):
            continue
        if fit.holds(utilization):  # the share holds it; the PD buffer beside it does not fit
            left = (fit.gpu_memory_bytes - fit.share(utilization)) / GIB
            said = (
                f"{role} workers cannot start: the PD buffer and overhead "
                f"({fit.outside_bytes / GIB:.1f} GiB) do not fit the {left:.1f} GiB each "
                f"{instance.gpu_model} leaves at --gpu-memory-utilization {utilization:g}; "
            )
        else:
            said = cannot_start(
                f"{role} workers", model, instance, args.tp, args.max_model_len, utilization, fit
            )
        if shared:
            advice = utilization_range("--gpu-memory-utilization", *shared)
        else:
            advice = unfit_advice(
                role, fit, model, instance, args.tp, args.max_model_len, buffer,
                OVERHEAD_BYTES, FLAGS, utilization, DPD_ROLES, args.prompt_tokens,
            )  # fmt: skip
        out.append(said + advice)
    return out


def _buffer(value: str) -> int:
    try:
        return parse_byte_size(value)
    except ValueError as exc:
        raise SizingError(
            "pd_buffer", value, f"not a valid byte size ({exc})", "Use e.g. 8GiB or 8589934592."
        ) from exc


def _gib(size_bytes: int) -> str:
    return f"{size_bytes / GIB:.2f} GiB"


def render_text(r: SizingReport, palette: Palette = PLAIN) -> str:
    chunk_mib = r.chunk_bytes / 2**20
    fits = "fits" if r.pd_buffer_chunks >= r.max_model_len_chunks else "DOES NOT FIT"
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
        f"  PD_BUFFER_SIZE             {r.pd_buffer_bytes:,} B = "
        f"{buffer_in_chunks(r.pd_buffer_bytes, r.kv_bytes_per_token_per_rank)}",
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
    lines += [
        "",
        palette.yellow(f"Warnings ({len(r.warnings)}):") if r.warnings else "Warnings: none",
    ]
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
