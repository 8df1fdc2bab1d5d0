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


def vllm_version() -> str:
    return _data()["vllm"]


def canonical(name: str) -> str:
    """vLLM's own spelling of a long flag: '_' reads as '-' up to the first '.' (vLLM's
    FlexibleArgumentParser), and a dotted sub-key ('--compilation-config.mode') names its flag."""
    return name.split(".", 1)[0].replace("_", "-")
