"""An endpoint's autoscaling as the operator takes it: `autoScalingSpec` (colocated) or
`pdSpec.autoScalingSpec.{prefillAutoScaling, decodingAutoScaling}` (DPD, each pool on its own).

The operator turns each into a KEDA ScaledObject whose prometheus trigger queries the stack's
Amazon Managed Prometheus workspace. KEDA authenticates to it as its own service account
(`hyperpod-inference-system:keda-operator`) through IRSA: the add-on's `keda.auth.aws.irsa`
(HyperPod inference operator setup docs, "KEDA role"), whose role may query that one workspace
(aps:QueryMetrics, GetLabels, GetSeries, GetMetricMetadata: specs/operator.py).

The named metrics are vLLM's own Prometheus series (core/vllm/scaling_signals.py, from the pinned
vLLM's source), summed or averaged over the pool's pods: those of the pool's Deployment alone
(core/vllm/pod_names.py), never a sibling endpoint's whose name only starts like this one's.

With `autoscaling.ratio` the follower pool (settings/endpoint/scaling_pair.py) has a second trigger,
`<name>-<pool>-pair`: its share of the leader's reporting pods at an AverageValue target of 1.
KEDA's prometheus scaler hands the query's value to the HPA as an external metric
(kedacore/keda pkg/scalers/prometheus_scaler.go); for an AverageValue target the HPA asks for
ceil(value / target) replicas (kubernetes/kubernetes pkg/controller/podautoscaler/
replica_calculator.go, GetExternalPerPodMetricReplicas) unless value / (target x replicas) is
within its tolerance of 1 (0.1 by default, --horizontal-pod-autoscaler-tolerance): a floor of 11 or
more replicas may stay one short. Of the two triggers the HPA takes the larger count.
"""

from __future__ import annotations

import json
from typing import Any

from core.vllm.pod_names import pod_name_pattern, worker_deployment
from core.vllm.scaling_signals import SIGNALS, pair_query, signal_query
from core.vocabulary import DPD_ROLES
from settings.endpoint.autoscaling import ScalingConfig
from settings.endpoint.entries import scaling_of
from settings.endpoint.model import EndpointConfig
from specs.iec import PrometheusTrigger, RoleAutoScaling


def server_address(region: str, workspace_id: Any) -> str:
    """The workspace's query address as the CRD's pattern wants it (no trailing slash)."""
    return f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace_id}"


def query_of(e: EndpointConfig, pool: str, scaling: ScalingConfig) -> tuple[str, str]:
    """(PromQL, metricType) of the pool's signal: the user's query, or the named metric over
    the pool's pods."""
    if scaling.query is not None:
        return scaling.query, "Average"
    signal = SIGNALS[scaling.metric or "running-requests"]
    pods = pod_name_pattern(worker_deployment(e.name, pool))
    return signal_query(signal, e.namespace, pods), signal.metric_type


def pool_autoscaling(e: EndpointConfig, pool: str, server: Any) -> RoleAutoScaling | None:
    """The operator's <AutoScaling> of one pool of `e` (None: fixed replicas)."""
    scaling = scaling_of(e, pool)
    if scaling is None or scaling.max_replicas is None or scaling.target is None:
        return None
    query, metric_type = query_of(e, pool, scaling)
    pair = pair_trigger(e, pool, server)
    return RoleAutoScaling(
        min_replica_count=scaling.min_replicas,
        max_replica_count=scaling.max_replicas,
        trigger=PrometheusTrigger(
            name=f"{e.name}-{pool}",
            server_address=server,
            query=query,
            target_value=scaling.target,
            metric_type=metric_type,  # type: ignore[arg-type]
        ),
        cooldown_period=scaling.cooldown_seconds,
        scale_down_stabilization_time=scaling.scale_down_stabilization_seconds,
        more_triggers=() if pair is None else (pair,),
    )


def pair_trigger(e: EndpointConfig, pool: str, server: Any) -> PrometheusTrigger | None:
    """The trigger holding `pool` at its share of the other pool's replicas: only the follower
    of a DPD endpoint's `autoscaling.ratio` has one."""
    ratio = None if e.autoscaling is None else e.autoscaling.ratio
    if e.mode != "dpd" or ratio is None or ratio.follower != pool:
        return None
    leader = pod_name_pattern(worker_deployment(e.name, ratio.leader))
    return PrometheusTrigger(
        name=f"{e.name}-{pool}-pair",
        server_address=server,
        query=pair_query(e.namespace, leader, ratio.share(pool), ratio.share(ratio.leader)),
        target_value=1,
        metric_type="Average",
    )


CAPACITY_ANNOTATION = "slo-capacity-{pool}"


def capacity_annotations(e: EndpointConfig) -> dict[str, str]:
    """What `advise` recorded each autoscaled pool's replica holds within the SLO (annotation
    name without the prefix -> JSON {metric, perReplica, within}): the autoscaling-capacity rule
    reads it from the manifest beside the pool's target, in the plan and the pack alike."""
    out = {}
    for pool in DPD_ROLES if e.mode == "dpd" else ("colocated",):
        scaling = scaling_of(e, pool)
        if scaling is None or scaling.capacity is None:
            continue
        c = scaling.capacity
        record = {"metric": c.metric, "perReplica": c.per_replica, "within": c.within}
        out[CAPACITY_ANNOTATION.format(pool=pool)] = json.dumps(record, sort_keys=True)
    return out
