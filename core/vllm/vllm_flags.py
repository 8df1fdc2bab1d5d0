"""The command-line flags of the worker images' vLLM (core/versions.py WORKER_VLLM_VERSION), as
scripts/extract_vllm_args.py extracted them from vLLM's source into vllm_flags.json.

Each long flag maps to what it takes: 'none' (a switch), 'one' word, 'optional' (one word or
none) or 'several' words; `aliases` maps vLLM's short forms (-tp) to their long flag.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("vllm_flags.json")


@cache
def _data() -> dict:
    return json.loads(DATA.read_text())


def vllm_flags() -> dict[str, str]:
    """Long flag -> what it takes ('none', 'one', 'optional', 'several')."""
    return _data()["flags"]


def vllm_aliases() -> dict[str, str]:
    """Short form -> long flag ('-tp' -> '--tensor-parallel-size')."""
    return _data()["aliases"]


def default_batched_tokens(gpu_memory_mib: int, gpu_model: str) -> int:
    """`vllm serve`'s --max-num-batched-tokens when none is given (chunked prefill on, the
    default performance mode), on a GPU of `gpu_memory_mib` named `gpu_model`: the pinned
    vLLM's EngineArgs.get_batch_defaults, as the extraction recorded it (batch_defaults)."""
    d = _data()["batch_defaults"]
    large = gpu_memory_mib >= d["large_gpu_gib"] * 1024 and d["not_named"] not in gpu_model.lower()
    return d["large" if large else "other"]["max_num_batched_tokens"]


def vllm_version() -> str:
    return _data()["vllm"]


def canonical(name: str) -> str:
    """vLLM's own spelling of a long flag: '_' reads as '-' up to the first '.' (vLLM's
    FlexibleArgumentParser), and a dotted sub-key ('--compilation-config.mode') names its flag."""
    return name.split(".", 1)[0].replace("_", "-")
