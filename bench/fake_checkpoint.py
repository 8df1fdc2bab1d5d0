"""The data set the benchmark uploads: checkpoint-shaped, a few large shards of random bytes plus
the small JSON files of a Hugging Face model."""

from __future__ import annotations

import os
from pathlib import Path

MiB, GiB = 2**20, 2**30


def make_dataset(root: Path, shards: int, shard_size: int) -> dict[str, int]:
    """N safetensors-sized shards of random bytes plus a Hugging Face model's small files."""
    sizes = {f"model-{i + 1:05d}-of-{shards:05d}.safetensors": shard_size for i in range(shards)}
    sizes |= {
        "config.json": 1_400,
        "generation_config.json": 200,
        "tokenizer_config.json": 55_000,
        "tokenizer.json": 9 * MiB,
        "model.safetensors.index.json": 60_000,
    }
    root.mkdir(parents=True, exist_ok=True)
    for name, size in sizes.items():
        with (root / name).open("wb") as f:
            left = size
            while left:
                chunk = min(left, 16 * MiB)
                f.write(os.urandom(chunk))
                left -= chunk
    return sizes
