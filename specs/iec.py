"""Typed `InferenceEndpointConfig` (inference.sagemaker.aws.amazon.com/v1), the parts users set.

Field names and enums follow the operator's CRD (v3.3, and v3.2 where the field exists there;
see specs/schema/). `InferenceEndpointConfig.to_manifest()` is the one place a manifest dict
is built. Values may be Pulumi Outputs (bucket names, AZ names): the manifest is then a Pulumi
input, resolved by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.vocabulary import IEC_API_VERSION as API_VERSION
from core.vocabulary import IEC_KIND as KIND
from core.vocabulary import ROUTER_HEALTH_PATH

RoutingStrategy = Literal["prefixaware", "kvaware", "session", "roundrobin"]


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass(frozen=True)
class Resources:
    requests: dict[str, str]
    limits: dict[str, str]

    def to_manifest(self) -> dict[str, Any]:
        return {"requests": dict(self.requests), "limits": dict(self.limits)}


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str

    def to_manifest(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value}


@dataclass(frozen=True)
class HttpProbe:
    path: str
    port: int
    initial_delay_seconds: int = 0
    period_seconds: int = 10
    failure_threshold: int = 3
    timeout_seconds: int = 5

    def to_manifest(self) -> dict[str, Any]:
        return {
            "httpGet": {"path": self.path, "port": self.port},
            "initialDelaySeconds": self.initial_delay_seconds,
            "periodSeconds": self.period_seconds,
            "failureThreshold": self.failure_threshold,
            "timeoutSeconds": self.timeout_seconds,
        }


@dataclass(frozen=True)
class Probes:
    startup: HttpProbe | None = None
    readiness: HttpProbe | None = None
    liveness: HttpProbe | None = None

    def to_manifest(self) -> dict[str, Any]:
        return _drop_none(
            {
                "startupProbe": self.startup.to_manifest() if self.startup else None,
                "readinessProbe": self.readiness.to_manifest() if self.readiness else None,
                "livenessProbe": self.liveness.to_manifest() if self.liveness else None,
            }
        )


@dataclass(frozen=True)
class Worker:
    image: str
    args: tuple[str, ...]
    environment_variables: tuple[EnvVar, ...]
    resources: Resources
    container_port: int = 8000
    model_volume_name: str = "model-weights"
    model_mount_path: str = "/opt/ml/model"
    probes: Probes | None = None

    def to_manifest(self) -> dict[str, Any]:
        return _drop_none(
            {
                "image": self.image,
                "args": list(self.args),
                "environmentVariables": [e.to_manifest() for e in self.environment_variables],
                "modelInvocationPort": {"containerPort": self.container_port, "name": "http"},
                "modelVolumeMount": {
                    "name": self.model_volume_name,
                    "mountPath": self.model_mount_path,
                },
                "resources": self.resources.to_manifest(),
                "probes": self.probes.to_manifest() if self.probes else None,
            }
        )


@dataclass(frozen=True)
class S3ModelSource:
    bucket_name: Any  # str or Output[str]
    region: str
    model_location: str
    prefetch_enabled: bool = False

    def to_manifest(self) -> dict[str, Any]:
        return {
            "modelSourceType": "s3",
            "modelLocation": self.model_location,
            "prefetchEnabled": self.prefetch_enabled,
            "s3Storage": {"bucketName": self.bucket_name, "region": self.region},
        }


@dataclass(frozen=True)
class HuggingFaceModelSource:
    model_id: str
    commit_sha: str | None = None
    token_secret_name: str | None = None
    token_secret_key: str = "token"

    def to_manifest(self) -> dict[str, Any]:
        model = _drop_none({"modelId": self.model_id, "commitSHA": self.commit_sha})
        if self.token_secret_name:
            model["tokenSecretRef"] = {"name": self.token_secret_name, "key": self.token_secret_key}
        return {"modelSourceType": "huggingface", "huggingFaceModel": model}


@dataclass(frozen=True)
class RoleSpec:
    replicas: int
    args: tuple[str, ...]
    node_selector: dict[str, str]
    resources: Resources

    def to_manifest(self) -> dict[str, Any]:
        return {
            "replicas": self.replicas,
            "args": list(self.args),
            "nodeSelector": dict(self.node_selector),
            "resources": self.resources.to_manifest(),
        }


@dataclass(frozen=True)
class TopologySpec:
    same_az: bool = True
    availability_zone: Any = None  # AZ name (the nodes' topology.kubernetes.io/zone label)
    placement_group: Any = None

    def to_manifest(self) -> dict[str, Any]:
        return _drop_none(
            {
                "sameAZ": self.same_az,
                "availabilityZone": self.availability_zone,
                "placementGroup": self.placement_group,
            }
        )


@dataclass(frozen=True)
class PrometheusTrigger:
    """A KEDA prometheus trigger on the stack's Amazon Managed Prometheus workspace."""

    name: str
    server_address: Any  # https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-...
    query: str
    target_value: float
    metric_type: Literal["Value", "Average"] = "Average"  # Average: per replica

    def to_manifest(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "serverAddress": self.server_address,
            "query": self.query,
            "targetValue": self.target_value,
            "metricType": self.metric_type,
        }


@dataclass(frozen=True)
class RoleAutoScaling:
    """The operator's <AutoScaling>: an endpoint's (colocated) or one role's replica bounds.

    One trigger renders as `prometheusTrigger`; with more (a DPD pool held at its share of the
    other pool's replicas: specs/scaling.py) all render as `prometheusTriggerList`, which the
    operator takes over prometheusTrigger when both are given (its CRD, and its Python model in
    aws/sagemaker-hyperpod-cli src/sagemaker/hyperpod/inference/config/hp_endpoint_config.py:
    "Multiple Prometheus metric triggers ... Takes priority over PrometheusTrigger"); KEDA
    turns each into a metric of one HPA, which scales to the largest replica count any of them
    asks for (Kubernetes docs, "Horizontal Pod Autoscaling", "Scaling on multiple metrics")."""

    min_replica_count: int
    max_replica_count: int
    trigger: PrometheusTrigger | None = None
    cooldown_period: int | None = None
    scale_down_stabilization_time: int | None = None
    more_triggers: tuple[PrometheusTrigger, ...] = ()

    def to_manifest(self) -> dict[str, Any]:
        triggers = [t.to_manifest() for t in (self.trigger, *self.more_triggers) if t]
        return _drop_none(
            {
                "minReplicaCount": self.min_replica_count,
                "maxReplicaCount": self.max_replica_count,
                "prometheusTrigger": triggers[0] if len(triggers) == 1 else None,
                "prometheusTriggerList": triggers if len(triggers) > 1 else None,
                "cooldownPeriod": self.cooldown_period,
                "scaleDownStabilizationTime": self.scale_down_stabilization_time,
            }
        )


@dataclass(frozen=True)
class PdSpec:
    prefill: RoleSpec
    decoding: RoleSpec
    routing_threshold: int
    topology: TopologySpec | None = None
    prefill_autoscaling: RoleAutoScaling | None = None
    decoding_autoscaling: RoleAutoScaling | None = None

    def to_manifest(self) -> dict[str, Any]:
        spec = {
            "prefillSpec": self.prefill.to_manifest(),
            "decodingSpec": self.decoding.to_manifest(),
            "routingThreshold": self.routing_threshold,
        }
        if self.topology:
            spec["topologySpec"] = self.topology.to_manifest()
        scaling = _drop_none(
            {
                "prefillAutoScaling": self.prefill_autoscaling.to_manifest()
                if self.prefill_autoscaling
                else None,
                "decodingAutoScaling": self.decoding_autoscaling.to_manifest()
                if self.decoding_autoscaling
                else None,
            }
        )
        if scaling:
            spec["autoScalingSpec"] = scaling
        return spec


@dataclass(frozen=True)
class EmptyDirVolume:
    """A pod volume (kubernetes.volumes); memory-backed for /dev/shm."""

    name: str
    medium: Literal["", "Memory"] = "Memory"
    size_limit: str | None = None

    def to_manifest(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "emptyDir": _drop_none({"medium": self.medium, "sizeLimit": self.size_limit}),
        }


# The instance store's mount on HyperPod's DLAMI nodes: the CRD's default hostPath (v3.3
# weightsCache.hostPath, "/opt/dlami/nvme").
NVME_HOST_PATH = "/opt/dlami/nvme"


@dataclass(frozen=True)
class ModelCacheConfig:
    """spec.modelCacheConfig (CRD v3.3): weights on the nodes' NVMe, the image pre-pulled. One
    for the whole endpoint: the CRD has no per-role cache."""

    weights: bool = False
    image: bool = False
    host_path: str = NVME_HOST_PATH

    def __bool__(self) -> bool:
        return self.weights or self.image

    def to_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.weights:
            out["weightsCache"] = {"enabled": True, "hostPath": self.host_path}
        if self.image:
            out["imageCache"] = {"enabled": True}
        return out


@dataclass(frozen=True)
class InferenceEndpointConfig:
    name: str
    namespace: str
    model_name: str
    worker: Worker
    model_source: S3ModelSource | HuggingFaceModelSource
    instance_types: tuple[str, ...]
    pd_spec: PdSpec | None = None  # present: DPD; absent: colocated
    routing_strategy: RoutingStrategy = "prefixaware"
    enable_l1_cache: bool = True
    metrics_enabled: bool = True
    health_check_path: str = ROUTER_HEALTH_PATH
    idle_timeout_seconds: int | None = None  # loadBalancer.idleTimeoutSeconds (CRD v3.3+)
    invocation_endpoint: str = "v1/chat/completions"
    endpoint_name: str | None = None  # set: a SageMaker endpoint is registered too
    replicas: int | None = None  # colocated only; DPD replicas are per role
    autoscaling: RoleAutoScaling | None = None  # colocated only; DPD's is per role (pd_spec)
    # Colocated pods on labelled groups: a required node affinity (the CRD makes it exclusive
    # with instanceType(s), which are then left out).
    node_affinity: dict[str, Any] | None = None
    max_deploy_time_seconds: int = 3600
    model_cache: ModelCacheConfig = ModelCacheConfig()  # CRD v3.3+; nothing rendered when off
    volumes: tuple[EmptyDirVolume, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def is_dpd(self) -> bool:
        return self.pd_spec is not None

    def to_manifest(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "modelName": self.model_name,
            "invocationEndpoint": self.invocation_endpoint,
            "maxDeployTimeInSeconds": self.max_deploy_time_seconds,
            "modelSourceConfig": self.model_source.to_manifest(),
            "worker": self.worker.to_manifest(),
            "loadBalancer": _drop_none(
                {
                    "healthCheckPath": self.health_check_path,
                    "idleTimeoutSeconds": self.idle_timeout_seconds,
                }
            ),
            "metrics": {"enabled": self.metrics_enabled},
            "kvCacheSpec": {"enableL1Cache": self.enable_l1_cache},
            "intelligentRoutingSpec": {"enabled": True, "routingStrategy": self.routing_strategy},
        }
        # instanceType, instanceTypes and nodeAffinity are mutually exclusive in the CRD.
        if self.node_affinity is not None:
            spec["nodeAffinity"] = self.node_affinity
        elif len(self.instance_types) == 1:
            spec["instanceType"] = self.instance_types[0]
        else:
            spec["instanceTypes"] = list(self.instance_types)
        if self.endpoint_name:
            spec["endpointName"] = self.endpoint_name
        if self.replicas is not None:
            spec["replicas"] = self.replicas
        if self.autoscaling is not None:
            spec["autoScalingSpec"] = self.autoscaling.to_manifest()
        if self.pd_spec:
            spec["pdSpec"] = self.pd_spec.to_manifest()
        if self.model_cache:
            spec["modelCacheConfig"] = self.model_cache.to_manifest()
        if self.volumes:
            spec["kubernetes"] = {"volumes": [v.to_manifest() for v in self.volumes]}
        if self.tags:
            spec["tags"] = [{"name": k, "value": v} for k, v in sorted(self.tags.items())]
        metadata: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if self.labels:
            metadata["labels"] = dict(self.labels)
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
