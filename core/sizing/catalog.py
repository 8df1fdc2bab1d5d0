"""What the sizing needs to know about models and about the five DPD instance types.

Models come from a small built-in catalog or from a Hugging Face `config.json`; instance data
is the public EC2 DescribeInstanceTypes data for the only types DPD supports (AWS DPD docs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.problems import ConfigError, ConfigProblem

GIB = 2**30
MIB = 2**20

# Where each sizing input lives in the stack config and on the `size` command line, so one error
# message serves both: users of either see the name they typed.
FIELDS = {
    "model": ("endpoint.model", "--model"),
    "instance_type": ("instanceGroups.<group>.instanceType", "--instance-type"),
    "tp": ("endpoint.tensorParallelSize", "--tp"),
    "prompt_tokens": ("endpoint.expectedPromptTokens", "--prompt-tokens"),
    "pd_buffer": ("endpoint.pdBufferSize", "--pd-buffer"),
    "gpu_memory_utilization": ("endpoint.gpuMemoryUtilization", "--gpu-memory-utilization"),
    "max_model_len": ("endpoint.maxModelLen", "--max-model-len"),
    "in_flight": ("endpoint.expectedInFlightTransfers", "--in-flight"),
}


class SizingError(ConfigError):
    """Bad sizing input: one ConfigProblem keyed by the `size` command's flag (what that command
    prints); `key`/`flag` name the stack-config key and the flag at fault, for the settings to
    key the same problem by the stack's own key (settings/endpoint/sizing.py)."""

    def __init__(
        self, field: str, value: Any, problem: str, fix: str, suggestion: Any = None
    ) -> None:
        self.field = field  # the sizing input at fault, a key of FIELDS
        self.key, self.flag = FIELDS[field]
        self.value, self.problem, self.fix = value, problem, fix
        self.suggestion = suggestion  # a value that passes, for a fix that names one
        super().__init__([ConfigProblem(self.flag, value, problem, fix)], "sizing input")


@dataclass(frozen=True)
class ModelSpec:
    """The architecture numbers that decide KV cache and weight sizes."""

    name: str
    hf_id: str
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    bytes_per_element: int  # of weights and KV cache: bf16 = 2
    num_params: float
    moe: bool = False
    context_length: int = 0  # max_position_embeddings: vLLM refuses a longer --max-model-len
    # The MLP's inner width one token goes through (config.json intermediate_size; a mixture of
    # experts: its routed and shared experts' widths): what one step's activations need
    # (core/sizing/gpu_memory.py). 0: unknown, taken as 4 x hidden_size.
    intermediate_size: int = 0
    # The residual stream's width (config.json hidden_size). 0: heads x head_dim, as for every
    # catalog model.
    hidden_size: int = 0
    # Hub repositories whose weights are this architecture (hf_id first): what may be staged
    # for it (the sizing would be wrong for any other checkpoint).
    repo_ids: tuple[str, ...] = ()

    @property
    def hidden(self) -> int:
        """The residual stream's width."""
        return self.hidden_size or self.num_attention_heads * self.head_dim

    @property
    def mlp_width(self) -> int:
        """The MLP's inner width: intermediate_size, or 4 x hidden when unknown."""
        return self.intermediate_size or 4 * self.hidden

    @property
    def repositories(self) -> tuple[str, ...]:
        return (self.hf_id, *(r for r in self.repo_ids if r != self.hf_id))


# Numbers from each model's config.json on the Hugging Face Hub (num_hidden_layers,
# num_attention_heads, num_key_value_heads, hidden_size / num_attention_heads, torch_dtype,
# intermediate_size) and parameter counts from the model cards (safetensors totals):
#   meta-llama/Llama-3.3-70B-Instruct: 80 layers, 64 heads, 8 KV, 8192/64 = 128, bfloat16,
#     MLP 28672, 70.6B
#   meta-llama/Llama-3.1-8B-Instruct: 32 layers, 32 heads, 8 KV, 4096/32 = 128, bfloat16,
#     MLP 14336, 8.03B
#   meta-llama/Llama-3.1-405B-Instruct: 126 layers, 128 heads, 8 KV, 16384/128 = 128, bf16,
#     MLP 53248, 405.9B
#   Qwen/Qwen2.5-72B-Instruct: 80 layers, 64 heads, 8 KV, 8192/64 = 128, bfloat16, MLP 29568,
#     72.7B
# Context lengths: max_position_embeddings of the same files (131072 for the Llama 3.x models,
# 32768 for Qwen2.5-72B-Instruct, whose longer contexts need rope_scaling set by hand). The
# Llama 3.1 base repositories have the instruct models' architecture and context.
MODELS: dict[str, ModelSpec] = {
    m.name: m
    for m in (
        ModelSpec(
            "llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct", 80, 64, 8, 128, 2, 70.6e9,
            context_length=131072, intermediate_size=28672,
        ),
        ModelSpec(
            "llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", 32, 32, 8, 128, 2, 8.03e9,
            context_length=131072, intermediate_size=14336, repo_ids=("meta-llama/Llama-3.1-8B",),
        ),
        ModelSpec(
            "llama-3.1-405b", "meta-llama/Llama-3.1-405B-Instruct", 126, 128, 8, 128, 2, 405.9e9,
            context_length=131072, intermediate_size=53248, repo_ids=("meta-llama/Llama-3.1-405B",),
        ),
        ModelSpec(
            "qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", 80, 64, 8, 128, 2, 72.7e9,
            context_length=32768, intermediate_size=29568,
        ),
    )
}  # fmt: skip

_DTYPE_BYTES = {
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float32": 4,
    "float": 4,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
# Keys under which config.json files name the expert count of a mixture-of-experts model.
_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def load_model(name_or_path: str | Path) -> ModelSpec:
    """A catalog model by name, or the model a Hugging Face `config.json` describes."""
    if str(name_or_path) in MODELS:
        return MODELS[str(name_or_path)]
    path = Path(name_or_path)
    try:
        if path.is_dir():
            path = path / "config.json"
        found = path.is_file()
    except (OSError, ValueError):  # a name the file system refuses (too long, NUL, ...)
        found = False
    if found:
        return _from_config_json(path)
    raise SizingError(
        "model",
        str(name_or_path),
        f"not a catalog model (known: {', '.join(MODELS)}) nor a path to a config.json",
        "Use one of the known names, or the path of the model's Hugging Face config.json.",
    )


def _from_config_json(path: Path) -> ModelSpec:
    try:
        config = json.loads(path.read_text())
    except (OSError, ValueError) as exc:  # JSONDecodeError, or bytes that are not UTF-8 text
        raise SizingError(
            "model",
            str(path),
            f"cannot read it as JSON ({type(exc).__name__}: {exc})"[:300],
            "Point to a valid config.json.",
        ) from None
    if not isinstance(config, dict):
        raise SizingError("model", str(path), "is not a JSON object", "Point to a config.json.")
    # Multimodal configs (e.g. Llama 4, Qwen2.5-VL) keep the language model under text_config.
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config

    def need(*keys: str) -> Any:
        for key in keys:
            if text.get(key) is not None:
                return text[key]
        raise SizingError(
            "model",
            str(path),
            f"config.json lacks field '{keys[0]}'",
            f"Add '{keys[0]}' to {path} (see the model's config on the Hugging Face Hub) or "
            f"use a catalog name ({', '.join(MODELS)}).",
        )

    layers = int(need("num_hidden_layers"))
    heads = int(need("num_attention_heads"))
    kv_heads = int(text.get("num_key_value_heads") or heads)  # no GQA: one KV head per head
    head_dim = text.get("head_dim") or int(need("hidden_size")) // heads
    # transformers >= 4.56 writes "dtype"; older files "torch_dtype".
    dtype = str(need("torch_dtype", "dtype"))
    if dtype not in _DTYPE_BYTES:
        raise SizingError(
            "model",
            str(path),
            f"torch_dtype '{dtype}' is not one of {', '.join(_DTYPE_BYTES)}",
            "Set torch_dtype to the dtype the weights are served in.",
        )
    moe = any(text.get(k) for k in _EXPERT_KEYS)
    return ModelSpec(
        name=path.parent.name or str(path),
        hf_id=str(config.get("_name_or_path") or path),
        num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=int(head_dim),
        bytes_per_element=_DTYPE_BYTES[dtype],
        num_params=_estimate_params(text, heads, kv_heads, int(head_dim), moe, need),
        moe=moe,
        context_length=int(text.get("max_position_embeddings") or 0),
        intermediate_size=_mlp_width_per_token(text, moe),
        hidden_size=int(text.get("hidden_size") or 0),
    )


def _mlp_width_per_token(text: dict, moe: bool) -> int:
    """config.json's intermediate_size; for a mixture of experts, the widths of the experts one
    token goes through (num_experts_per_tok routed, plus shared ones). 0 when absent: read as
    4 x hidden_size (ModelSpec.mlp_width). A dense model's file always has it (the parameter
    estimate needs it)."""
    width = int(
        (text.get("moe_intermediate_size") if moe else None) or text.get("intermediate_size") or 0
    )
    if moe:
        width *= int(text.get("num_experts_per_tok") or 1) + int(text.get("n_shared_experts") or 0)
    return width


def _estimate_params(
    text: dict, heads: int, kv_heads: int, head_dim: int, moe: bool, need: Callable[..., Any]
) -> float:
    """Parameter count of a Llama-style decoder, since config.json does not state it.

    Embeddings (twice unless tied) + per layer: Q, K, V, O projections and a gated MLP (three
    matrices; one per expert plus shared experts for MoE). Norms and biases are < 0.01% and left
    out. Gives 70.55e9 for Llama 3.3 70B (card: 70.6B).
    """
    hidden = int(need("hidden_size"))
    vocab = int(need("vocab_size"))
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    if moe:
        experts = int(next(text[k] for k in _EXPERT_KEYS if text.get(k)))
        expert_size = int(text.get("moe_intermediate_size") or need("intermediate_size"))
        shared = int(text.get("n_shared_experts") or 0)
        mlp = 3 * hidden * expert_size * (experts + shared)
    else:
        mlp = 3 * hidden * int(need("intermediate_size"))
    embeddings = vocab * hidden * (1 if text.get("tie_word_embeddings") else 2)
    return float(embeddings + int(need("num_hidden_layers")) * (attention + mlp))


@dataclass(frozen=True)
class InstanceSpec:
    """One DPD-capable instance type (EC2 DescribeInstanceTypes numbers)."""

    name: str
    gpu_model: str
    gpu_count: int
    gpu_memory_mib: int  # per GPU
    vcpus: int
    memory_mib: int
    efa_interfaces: int
    # The catalog's (EC2 NetworkPerformance); 0 for a type core/sizing/gpu_types.py builds from EC2's
    # numbers, which do not record it as one number. Nothing sizes with it.
    network_gbps: int = 0

    @property
    def gpu_memory_bytes(self) -> int:
        return self.gpu_memory_mib * MIB


# DPD needs NVLink between GPUs and EFA with RDMA read and write: these five and no others
# (AWS DPD docs). G6/G6e/G7e have EFA RDMA but only PCIe between GPUs.
INSTANCES: dict[str, InstanceSpec] = {
    i.name: i
    for i in (
        InstanceSpec("ml.p5.48xlarge", "H100", 8, 81920, 192, 2 * 1024 * 1024, 32, 3200),
        InstanceSpec("ml.p5e.48xlarge", "H200", 8, 144384, 192, 2 * 1024 * 1024, 32, 3200),
        InstanceSpec("ml.p5en.48xlarge", "H200", 8, 144384, 192, 2 * 1024 * 1024, 16, 3200),
        InstanceSpec("ml.p6-b200.48xlarge", "B200", 8, 183359, 192, 2 * 1024 * 1024, 8, 3200),
        InstanceSpec("ml.p6-b300.48xlarge", "B300", 8, 275040, 192, 4 * 1024 * 1024, 16, 6400),
    )
}
DPD_INSTANCE_TYPES: tuple[str, ...] = tuple(INSTANCES)


def instance_spec(instance_type: str) -> InstanceSpec:
    """The spec of a DPD instance type; SizingError for any other type."""
    if instance_type in INSTANCES:
        return INSTANCES[instance_type]
    hint = ""
    if f"ml.{instance_type}" in INSTANCES:
        hint = f" HyperPod types carry the 'ml.' prefix: use ml.{instance_type}."
    raise SizingError(
        "instance_type",
        instance_type,
        f"DPD supports only {', '.join(DPD_INSTANCE_TYPES)} (NVLink and EFA RDMA read/write)",
        f"Pick one of them.{hint}",
        f"ml.{instance_type}" if hint else DPD_INSTANCE_TYPES[0],
    )
