"""What aisimulate can simulate for us: our instance types as its systems, our catalog models as
its bundled model configs. Anything else is refused (exit 2) naming what it can.

Systems: the GPU of each DPD instance type (core/sizing/catalog.py INSTANCES; EC2 DescribeInstanceTypes)
is the SXM part aisimulate measured: p5 H100 SXM, p5e/p5en H200 SXM, p6-b200 B200 SXM.
ml.p6-b300.48xlarge is refused: the issue maps only those three (aisimulate's b300 data has no
vLLM kernel set for the version below).

Models: aisimulate bundles Llama 3.1 8B/70B/405B (model_configs/meta-llama--Meta-Llama-3.1-*).
Llama 3.3 70B is not bundled; its config.json has the 3.1 70B architecture (80 layers, 64 heads,
8 KV heads, hidden 8192, bf16: core/sizing/catalog.py), which is all a kernel-level simulation reads, so
it is simulated as that config. tests/hyperpod_dpd/advise/test_targets.py holds the bundled
configs to our catalog's numbers. Qwen2.5 72B and models given as a config.json path: refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.exits import UsageProblem
from core.sizing.catalog import INSTANCES, MODELS, ModelSpec

# Our instance type -> aisimulate's system name.
SYSTEMS = {
    "ml.p5.48xlarge": "h100_sxm",
    "ml.p5e.48xlarge": "h200_sxm",
    "ml.p5en.48xlarge": "h200_sxm",
    "ml.p6-b200.48xlarge": "b200_sxm",
}
# Our catalog model -> aisimulate's bundled model config.
SIMULATED_MODELS = {
    "llama-3.3-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
}
BACKEND = "vllm"
# The kernel data aisimulate ships for vLLM on all three systems: 0.24.0, 0.25.0, then 0.31.0
# (H100/H200) or 0.27.1 (B200). 0.24.0 is the set closest to the vLLM 0.19.0 the supported DPD
# images carry (the AWS DPD guide's prerequisites, sagemaker-hyperpod-model-deployment-dpd) and
# aisimulate's own `current` for vLLM.
BACKEND_VERSION = "0.24.0"


@dataclass(frozen=True)
class Target:
    """What one `advise` simulates: our names and aisimulate's."""

    instance_type: str
    system: str
    gpus_per_node: int
    model: ModelSpec
    simulated_model: str


def target(instance_type: str, model: str, source: str = "flag") -> Target:
    """The simulation target of `instance_type` and catalog `model`; UsageProblem naming the
    flag (or the stack key, `source` "stack") and what aisimulate can simulate otherwise."""
    type_name = "--instance-type" if source == "flag" else "instanceGroups.<group>.instanceType"
    model_name = "--model" if source == "flag" else "endpoint.model"
    if instance_type not in SYSTEMS:
        why = (
            "not a DPD instance type"
            if instance_type not in INSTANCES
            else "a DPD instance type aisimulate has no vLLM kernel data for"
        )
        raise UsageProblem(
            f"{type_name} {instance_type!r}: {why}; advise simulates "
            f"{', '.join(f'{t} ({s})' for t, s in SYSTEMS.items())}. Pick one of them."
        )
    if model not in SIMULATED_MODELS:
        raise UsageProblem(
            f"{model_name} {model!r}: aisimulate bundles no model config for it (it would fetch "
            f"one from a hub, which advise never does); it simulates {', '.join(SIMULATED_MODELS)}"
            ". Pick one of them (a config.json path is not simulated)."
        )
    return Target(
        instance_type=instance_type,
        system=SYSTEMS[instance_type],
        gpus_per_node=INSTANCES[instance_type].gpu_count,
        model=MODELS[model],
        simulated_model=SIMULATED_MODELS[model],
    )
