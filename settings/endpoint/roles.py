"""The per-role settings of an endpoint (prefill, decode: replicas, parallelism, vLLM flags) and
vLLM's chunked-prefill knobs of colocated mode."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from settings.config.fields import (
    SettingsModel,
)
from settings.config.unique import RepeatsCheckedBy


class RoleConfig(SettingsModel):
    replicas: int = Field(1, ge=1, description="Worker replicas of the role.")
    tensor_parallel_size: int | None = Field(
        None,
        ge=1,
        description="vLLM --tensor-parallel-size of the role (a parallelism per phase). "
        "Default: the endpoint's tensorParallelSize.",
    )
    args: Annotated[
        list[str], RepeatsCheckedBy("a value may follow two flags; vllm_args refuses a flag twice")
    ] = Field(
        default_factory=list,
        description="Extra vLLM flags for the role (replace the same flag in the shared args). "
        "A number given here (--max-model-len, --gpu-memory-utilization, "
        "--tensor-parallel-size, --max-num-seqs...) is bounded as its own key is (maxModelLen, "
        "...), and is the number the plan sizes, judges and shows.",
    )
    max_num_seqs: int = Field(ge=1, description="vLLM --max-num-seqs for the role.")


class PrefillConfig(RoleConfig):
    max_num_seqs: int = Field(16, ge=1, description="vLLM --max-num-seqs on the prefiller.")


class DecodeConfig(RoleConfig):
    max_num_seqs: int = Field(32, ge=1, description="vLLM --max-num-seqs on the decoder.")


class ColocatedConfig(SettingsModel):
    """vLLM's chunked-prefill knobs for colocated mode: the tuned baseline DPD must beat."""

    max_num_batched_tokens: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --max-num-batched-tokens, the token budget of one "
        "engine step. Smaller means long prefills are cut into more chunks and interfere less "
        "with decoding (lower TPOT, higher TTFT). At most what one step's activations leave "
        "room for beside the weights and one maxModelLen sequence of KV cache (the refusal "
        "names the number). Default: vLLM's own.",
        examples=[2048],
    )
    max_num_partial_prefills: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --max-num-partial-prefills, prompts that may be "
        "prefilled in chunks at once. Default: vLLM's own (1).",
    )
    long_prefill_token_threshold: int | None = Field(
        None,
        ge=1,
        description="Colocated mode only: vLLM --long-prefill-token-threshold, prompts longer "
        "than this count as long for partial prefills. Default: vLLM's own.",
        examples=[2048],
    )

    def settings(self) -> list[tuple[str, str, int]]:
        """(vLLM flag, config key under endpoint.colocated, value) of each knob that is set."""
        return [
            ("--" + name.replace("_", "-"), field.alias or name, getattr(self, name))
            for name, field in type(self).model_fields.items()
            if getattr(self, name) is not None
        ]

    def flags(self) -> list[str]:
        """The vLLM flags these settings stand for, in the fields' order (each field is named
        after its flag)."""
        return [part for flag, _, value in self.settings() for part in (flag, str(value))]

    def describe(self) -> str:
        flags = self.flags()
        return " ".join(flags) if flags else "vLLM defaults"
