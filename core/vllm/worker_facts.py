"""The numbers of one endpoint's workers that the policy rules judge, typed.

The settings reconcile them once (settings/endpoint/numbers.py: a typed key, a role's args or
environmentVariables) and the desired state carries them (specs/endpoint.py), so the gate's rules
read numbers, never the manifest's text. The CrossGuard pack has only what is deployed, and reads
the same numbers back from the manifest (policies/rules/views.py); a test holds the two readings
equal for every way of giving a number (tests/settings/endpoint/test_numbers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RoleNumbers:
    """What vLLM runs with on one role (None: not a number the rules can use)."""

    tensor_parallel_size: int | None
    gpu_memory_utilization: float | None
    max_model_len: int | None
    max_num_seqs: int | None


# The vLLM flag that carries each number of RoleNumbers: where the settings read a role's
# override, and where the pack reads the deployed value.
NUMBER_FLAGS = {
    "tensor_parallel_size": "--tensor-parallel-size",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_model_len": "--max-model-len",
    "max_num_seqs": "--max-num-seqs",
}


@dataclass(frozen=True)
class WorkerFacts:
    pd_buffer_bytes: int | None  # PD_BUFFER_SIZE, per TP rank
    roles: Mapping[str, RoleNumbers]  # "prefill", "decode" (colocated: both the one worker's)
    # Where the user sets each number, as a fix names it: "pd_buffer_bytes" or
    # "<role>.<number>" -> a config key, or "<flag> in <args key>" where role args override the
    # setting. Only the settings know it; the pack's reading of a manifest has none (the rules
    # then name the endpoint's own keys). Not part of the numbers' equality.
    keys: Mapping[str, str] = field(default_factory=dict, compare=False)
