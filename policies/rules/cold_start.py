"""hyperpod-dpd-cold-start (advisory): an autoscaled pool whose new worker starts slower than a
burst can wait for it. Per-role autoscaling adds a worker when demand rises; a 70B worker takes
5-10 minutes to read its weights from S3 (AWS DPD troubleshooting, "Pod startup issues"), plus
the image pull, and the pool keeps extra replicas only for its scale-down stabilization window
once demand falls (scaleDownStabilizationTime; Kubernetes' HPA default is 300 s). A worker that
is ready only after that window arrives when a burst of that length is over. The estimate is
core/cold_start.py's, as the endpoint's caches have it; with the operator's weights and image
caches (modelCacheConfig, operator 3.3) a warm node starts the worker in about a minute."""

from __future__ import annotations

from core.aws.ec2_instances import INSTANCE_FACTS
from core.cold_start import checkpoint_bytes, cold_start
from policies.rules import views
from policies.rules.base import Finding, Rule

HPA_STABILIZATION_SECONDS = 300  # kube-controller-manager's downscale stabilization default


def check(resources, limits):
    for iec in views.endpoints(resources):
        cache = views.spec(iec).get("modelCacheConfig") or {}
        weights = bool((cache.get("weightsCache") or {}).get("enabled"))
        image = bool((cache.get("imageCache") or {}).get("enabled"))
        if weights and image:
            continue
        model = views.annotation(iec, "sizing-model")
        size = checkpoint_bytes(model) if model else None
        if size is None:
            continue  # the model-size rule reports a model it cannot size
        for pool, auto in views.scaled_pools(iec):
            role = "decode" if pool == "colocated" else pool  # the views' name of its numbers
            kind = views.role_instance_type(iec, resources, role)
            facts = INSTANCE_FACTS.get(kind or "")
            tp = views.role_numbers(iec, role).tensor_parallel_size or 1
            if facts is None:
                continue
            start = cold_start(size, tp, facts.network_gbps, weights_cached=weights,
                               image_cached=image)  # fmt: skip
            wait = views.as_int(auto.get("scaleDownStabilizationTime"))
            wait = HPA_STABILIZATION_SECONDS if wait is None else wait
            if start.total <= wait:
                continue
            phases = ", ".join(f"{k} {v} s" for k, v in start.to_json().items() if k != "total")
            yield Finding(
                iec.urn,
                f"the {pool} pool autoscales, but a new worker on {kind} takes about "
                f"{round(start.total)} s to be ready ({phases}): longer than the {wait} s the "
                "pool keeps replicas after a burst, so the scale-up arrives after a burst of that "
                f"length is over. Set {views.endpoint_key(iec, 'cache', 'weights')} and "
                f"{views.endpoint_key(iec, 'cache', 'image')} to true (operator 3.3, NVMe "
                "instance store: a warm node starts it in about a minute), or hold more "
                "minReplicas",
            )


RULE = Rule(
    "hyperpod-dpd-cold-start",
    "an autoscaled pool's new worker is ready before a burst is over",
    "advisory",
    check,
)
