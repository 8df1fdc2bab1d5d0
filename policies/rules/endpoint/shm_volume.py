"""hyperpod-dpd-shm-volume (advisory): with TP > 1 NCCL needs a large /dev/shm; the 64 MB default
fails with "Error while creating shared memory segment" (vllm-project/vllm#6574,
vllm-project/production-stack#276 and #899)."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        tp = views.role_numbers(iec, "decode").tensor_parallel_size
        volumes = (views.spec(iec).get("kubernetes") or {}).get("volumes") or []
        memory_backed = any((v.get("emptyDir") or {}).get("medium") == "Memory" for v in volumes)
        if tp and tp > 1 and not memory_backed:
            yield Finding(
                iec.urn,
                f"tensor parallelism {tp} without a memory-backed volume for /dev/shm; NCCL may "
                "fail to create shared memory segments",
            )


RULE = Rule("hyperpod-dpd-shm-volume", "memory-backed /dev/shm with TP > 1", "advisory", check)
