"""The stack's settings: every concern's model composed into StackSettings (the field order is the
order of Pulumi.yaml's config block and the README's table), the checks that span concerns, and
the sets of top-level keys Pulumi hands the program in other forms.

Single-field rules (types, enums, patterns, bounds) live on the models; each concern's module
holds the checks that need two of its keys at once. Deployment policies (DPD instance types,
buffer sizing, security) are not config errors; they are in policies/rules/ and run in the plan
and the CrossGuard pack.
"""

from __future__ import annotations

from collections.abc import Callable
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Field, model_validator

from core.aws.aws_rules import ALB_FORWARD_TARGET_GROUPS_MAX
from core.problems import ConfigProblem
from core.regions import REGION_PATTERN
from core.sizing.report import SizingReport
from settings.checkpoint import CheckpointConfig, check_checkpoint, own_checkpoint
from settings.ci import CiConfig, check_ci
from settings.cluster.aws_limits import check_aws_limits
from settings.cluster.capacity import check_subnet_addresses, check_system_fits_jobs
from settings.cluster.groups import (
    EksConfig,
    InferenceOperatorConfig,
    InstanceGroupConfig,
    InstanceGroups,
    check_access_entries,
    check_groups,
    check_kubernetes,
    check_operator,
    gpu_groups,
    groups_with_role,
    instance_type_for,
)
from settings.cluster.network import NetworkConfig, check_flow_logs, check_vpc, check_zones
from settings.cluster.pod_network import NetworkPolicyConfig, check_network_policy
from settings.config.errors import full_key, set_fix
from settings.config.fields import (
    AzId,
    DnsLabel,
    GroupName,
    PrincipalArn,
    SettingsModel,
    matching,
)
from settings.config.unique import check_unique_lists
from settings.cost import CostConfig
from settings.deployers import check_deployers
from settings.endpoint.checkpoints import (
    check_endpoint_checkpoints,
    check_model_matches_checkpoint,
    check_one_model,
)
from settings.endpoint.entries import EndpointEntry, check_endpoints, entries
from settings.endpoint.listener import TrafficListenerConfig, check_traffic_listener
from settings.endpoint.model import EndpointConfig
from settings.endpoint.names import check_derived_names
from settings.endpoint.number_checks import check_numbers
from settings.endpoint.sizing import check_sizing_inputs, check_step_budget, size_endpoint
from settings.endpoint.slo import OptionalSlo, check_slo
from settings.endpoint.traffic import TARGET_GROUP_NAME_MAX, TRAFFIC_KEY_MAX, check_traffic
from settings.endpoint.worker_inputs import check_colocated, check_worker_inputs
from settings.jobs import JobsConfig
from settings.model_cache import check_model_cache
from settings.observability import ObservabilityConfig
from settings.placement.gpu_groups import check_gpu_group_types
from settings.placement.pool_capacity import check_pool_capacity
from settings.placement.pools import check_placed, check_pool_types
from settings.policy import PolicyConfig, check_policy_names


class StackSettings(SettingsModel):
    """Every plain (non-secret) key of the `hyperpod-dpd:` namespace, plus `aws:region`."""

    region: Annotated[str, matching(REGION_PATTERN)] = Field(
        description="aws:region: the Region of the cluster and the model bucket."
    )
    availability_zone_id: AzId = Field(
        description="The one AZ ID (e.g. use2-az2) of all GPU capacity: prefill and decode "
        "groups, their subnet and the endpoint's topology."
    )
    network: NetworkConfig = Field(
        description="VPC layout: vpcCidr, controlPlaneAzIds (required), natGateways."
    )
    eks: EksConfig = Field(
        default_factory=EksConfig,
        description="EKS control plane: kubernetesVersion, publicAccessCidrs, adminRoleArns.",
    )
    deployer_arns: list[PrincipalArn] = Field(
        default_factory=list,
        description="IAM role (or user) ARNs that may deploy this stack besides its deploy role "
        "(ci.deployRoleArn; without one, the identity running `pulumi up`): the admins. With "
        "that role, the only principals that may write or delete the nodes' boot scripts (the "
        "lifecycle bucket denies every other; the scripts run as root on every new or "
        "recovered node). Role ARNs with their path (an IAM Identity Center role's: "
        "/aws-reserved/sso.amazonaws.com/...), not assumed-role session ARNs; `hyperpod-dpd "
        "preflight` looks each up in IAM.",
    )
    instance_groups: dict[GroupName, InstanceGroupConfig] = Field(
        description="HyperPod instance groups keyed by name (stable addresses)."
    )
    network_policy: NetworkPolicyConfig = Field(
        default_factory=NetworkPolicyConfig,
        description="Pod ingress to the endpoints' workers, pod egress to the instance "
        "metadata service: enabled, allowNamespaces.",
    )
    inference_operator: InferenceOperatorConfig = Field(
        default_factory=InferenceOperatorConfig,
        description="HyperPod Inference Operator: version and the EKS add-on version carrying it.",
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Metrics and dashboards (TTFT, TPOT, KV transfer time): enabled.",
    )
    checkpoint: CheckpointConfig = Field(
        default_factory=CheckpointConfig,
        description="Model checkpoint staged into S3: source, revision, prefix, bucketName.",
    )
    jobs: JobsConfig = Field(
        default_factory=JobsConfig,
        description="The in-cluster Jobs (staging, benchmark runs): image, pipIndexUrl.",
    )
    cost: CostConfig = Field(
        default_factory=CostConfig,
        description="Cost estimate settings: hourlyPrices overrides.",
    )
    policy: PolicyConfig = Field(
        default_factory=PolicyConfig,
        description="Policy enforcement: per-rule overrides (enforcement), advisoriesMandatory.",
    )
    ci: CiConfig = Field(
        default_factory=CiConfig,
        description="What the GitHub workflows use: runner (github-hosted, codebuild or "
        "self-hosted: a private EKS API needs a runner in the VPC), repository, "
        "connectionArn, labels, computeType; deployRoleArn, pulumiOrganization; "
        "pullRequestPreview and previewRoleArn.",
    )
    endpoint: EndpointConfig = Field(
        default_factory=EndpointConfig,
        description="The InferenceEndpointConfig: mode (dpd|colocated), model, image, vLLM and "
        "routing settings, PD buffer, per-role prefill/decode settings.",
    )
    protect: bool = Field(
        False,
        description="Pulumi-protect the stateful resources (EKS cluster, HyperPod cluster, model "
        "bucket): `pulumi destroy` and replacements stop until you set it false and `pulumi up`.",
    )
    endpoints: dict[DnsLabel, EndpointConfig] = Field(
        default_factory=dict,
        description="Several endpoints, keyed by name (instead of endpoint): each value takes "
        "endpoint's keys and defaults, its name defaulting to the key; its resources are named "
        "endpoint-<key>. No two may share a name in one namespace, nor a router Service name "
        "(<name>-<namespace>-routing-service).",
    )
    slo: OptionalSlo = Field(
        None,
        description="The default service level objectives of every endpoint without its own "
        "slo (ttftP50Ms, ttftP99Ms, itlP99Ms, errorRate, minRequests, baselineMargin). Set: the "
        "stack's Prometheus workspace gets recording and alerting rules per endpoint, its alert "
        "manager sends to an SNS topic. {} (unset) and no endpoint's slo: no rules.",
    )
    traffic: dict[str, int] = Field(
        default_factory=dict,
        description="One stable URL in front of the endpoints named here, with a weighted split: "
        "integer percent per endpoint key, summing to 100 (e.g. baseline 95, candidate 5). At "
        f"most {ALB_FORWARD_TARGET_GROUPS_MAX} keys (an ALB forward action's target groups); a "
        f"key has at most {TRAFFIC_KEY_MAX} characters (its target group is auto-named "
        f"traffic-<key>-<7 random>, in at most {TARGET_GROUP_NAME_MAX}).",
    )
    traffic_listener: TrafficListenerConfig = Field(
        default_factory=TrafficListenerConfig,
        description="The split's listener: certificateArn (HTTPS on 443), sslPolicy, "
        "domainName and hostedZoneId (the name clients call), apiKeyNames (the keys it "
        "checks), allowedCidrs and allowedSecurityGroupIds (who may connect besides the "
        "HyperPod nodes), accessLogs and accessLogDays.",
    )

    @model_validator(mode="after")
    def _names_default_to_keys(self) -> StackSettings:
        for key, e in self.endpoints.items():
            if "name" not in e.model_fields_set:
                self.endpoints[key] = e.model_copy(update={"name": key})
        return self

    def entries(self) -> list[EndpointEntry]:
        """Every endpoint of the stack, by key (the single `endpoint` when `endpoints` is unset)."""
        return entries(self.endpoint, self.endpoints)

    def checkpoint_of(self, entry: EndpointEntry) -> CheckpointConfig:
        """The checkpoint `entry` loads: its own, else the stack's."""
        return own_checkpoint(self.checkpoint, entry.config.checkpoint)

    def staged_checkpoints(self) -> tuple[CheckpointConfig, ...]:
        """Every copy the stack stages, once per prefix: the stack's own first (its resources
        keep their names), then each other one an endpoint loads, in endpoint key order. A copy
        stays staged while an endpoint loads it; the stack's own always does."""
        copies = {self.checkpoint.effective_prefix: self.checkpoint}
        for entry in self.entries():
            c = self.checkpoint_of(entry)
            copies.setdefault(c.effective_prefix, c)
        return tuple(copies.values())

    def with_endpoint(self, entry: EndpointEntry) -> StackSettings:
        """These settings with `entry` in `endpoint`: what code that reads `s.endpoint` (the IEC
        builder, the summary, the load test's access) takes for one of several endpoints. The
        map stays, so placement still sees every endpoint."""
        return self.model_copy(update={"endpoint": entry.config})

    def groups_with_role(self, role: str) -> dict[str, InstanceGroupConfig]:
        return groups_with_role(self.instance_groups, role)

    def instance_type_for(self, role: str) -> str:
        """The instance type serving `role` (see settings/cluster/groups.py)."""
        return instance_type_for(self.instance_groups, role)

    def view_role_arns(self) -> list[str]:
        """The roles given read-only cluster access: eks.viewRoleArns, and the pull requests'
        preview role (ci.previewRoleArn), each once."""
        preview = [self.ci.preview_role_arn] if self.ci.preview_role_arn else []
        return list(dict.fromkeys([*self.eks.view_role_arns, *preview]))

    @property
    def gpu_groups(self) -> dict[str, InstanceGroupConfig]:
        return gpu_groups(self.instance_groups)


def _is_object(annotation: Any) -> bool:
    """A map, a list or a model, or an optional one (`SloConfig | None`)."""
    if get_origin(annotation) in (UnionType, Union):
        return any(_is_object(a) for a in get_args(annotation) if a is not type(None))
    return get_origin(annotation) in (dict, list) or (
        isinstance(annotation, type) and issubclass(annotation, BaseModel)
    )


# Top-level keys whose values are YAML objects or lists (Pulumi hands them to the program as
# JSON text).
OBJECT_KEYS = frozenset(
    f.alias for f in StackSettings.model_fields.values() if _is_object(f.annotation)
)
# Top-level boolean keys: Pulumi hands them to the program as the text "true" / "false".
BOOL_KEYS = frozenset(f.alias for f in StackSettings.model_fields.values() if f.annotation is bool)
# Keys that must be Pulumi secrets; they never enter StackSettings.
SECRET_KEYS = frozenset({"hfToken"})


def check_settings(s: StackSettings) -> list[ConfigProblem]:
    """Every concern's cross-field checks, then those that span concerns, in one fixed order."""
    listed = s.entries()
    # The groups and the operator must serve every endpoint: DPD's needs when any is DPD.
    mode = "dpd" if any(x.config.mode == "dpd" for x in listed) else "colocated"
    groups = s.instance_groups
    return [
        *check_unique_lists(s),
        *check_zones(s.network, s.region, s.availability_zone_id),
        *check_vpc(s.network),
        *check_flow_logs(s.network),
        *check_network_policy(
            s.network_policy,
            s.network.vpc_cidr,
            s.availability_zone_id,
            list(s.network.control_plane_az_ids),
        ),
        *check_subnet_addresses(s.network, s.availability_zone_id, groups),
        *check_kubernetes(s.eks),
        *check_access_entries(s.eks),
        *check_deployers(s.deployer_arns, s.region),
        *check_groups(groups, mode),
        *check_checkpoint(s.checkpoint),
        *check_policy_names(s.policy),
        *check_ci(s.ci, s.eks),
        *check_operator(
            s.inference_operator,
            mode,
            tuple(x.config_key("mode") for x in listed if x.config.mode == "dpd"),
        ),
        *(own := check_endpoint_checkpoints(s.checkpoint, listed)),
        *(
            matched := _each(
                listed, lambda x: check_model_matches_checkpoint(x, s.checkpoint_of(x))
            )
        ),
        *check_one_model(
            listed,
            [s.checkpoint_of(x).effective_prefix for x in listed],
            {p.key for p in [*own, *matched]},
        ),
        *check_model_cache(listed, s.inference_operator, groups),
        *_each(listed, lambda x: check_derived_names(x.config, x.path)),
        *_each(listed, lambda x: check_colocated(x.config, x.path)),
        *_each(listed, lambda x: check_worker_inputs(x.config, x.path)),
        *_placed_checks(listed, groups),
        # Pulumi.yaml declares endpoint's defaults: the single endpoint counts as given when it
        # differs from them.
        *check_endpoints(s.endpoint, s.endpoint != EndpointConfig(), s.endpoints),
        *check_traffic(s.traffic, listed),
        *check_traffic_listener(s.traffic_listener, s.traffic, s.region),
        *check_aws_limits(groups, s.eks, s.region),
        *(check_system_fits_jobs(groups) if s.checkpoint.staging == "job" else []),
        *check_slo(s.slo, ("slo",)),
        *_each(listed, lambda x: check_slo(x.config.slo, (*x.path, "slo"))),
        *_check_needs_prometheus(s, listed),
    ]


def _placed_checks(listed: list[EndpointEntry], groups: InstanceGroups) -> list[ConfigProblem]:
    """Where each pool runs (settings/placement/pools.py), then, when every pool has groups to run on, the
    checks that read them: GPU types, sizing, numbers, step budget, one type per DPD pool, room
    at maximum replicas."""
    placed = check_placed(listed, groups)
    if placed:
        return placed
    alone = len(listed) == 1
    return [
        *check_gpu_group_types(groups, listed),
        *_each(listed, lambda x: check_sizing_inputs(x, groups)),
        *_each(listed, lambda x: check_numbers(x, groups, alone=alone)),
        *_each(listed, lambda x: check_step_budget(x, groups, alone=alone)),
        *check_pool_types(listed, groups),
        *check_pool_capacity(listed, groups),
    ]


def _each(
    listed: list[EndpointEntry], check: Callable[[EndpointEntry], list[ConfigProblem]]
) -> list[ConfigProblem]:
    """One endpoint check over every endpoint, in key order."""
    return [problem for entry in listed for problem in check(entry)]


def _check_needs_prometheus(s: StackSettings, listed: list[EndpointEntry]) -> list[ConfigProblem]:
    """Autoscaling queries the stack's Prometheus workspace, which observability creates, and the
    SLOs' rules and alerts live in it."""
    scaled = [x.config_key("autoscaling") for x in listed if x.config.autoscaling is not None]
    slos = [full_key(("slo",))] * (s.slo is not None)
    slos += [x.config_key("slo") for x in listed if x.config.slo is not None]
    if s.observability.enabled or not (scaled or slos):
        return []
    key = full_key(("observability", "enabled"))
    uses = [("the scaler queries", scaled), ("the SLO rules and alerts live in", slos)]
    return [
        ConfigProblem(
            key,
            False,
            f"true while {', '.join(scaled + slos)} is set ("
            + " and ".join(u for u, keys in uses if keys)
            + " the stack's Amazon Managed Prometheus workspace)",
            f"{set_fix(key, 'true')}, or remove "
            + " and ".join(
                w for w, keys in (("the autoscaling", scaled), ("the slo", slos)) if keys
            ),
        )
    ]


def endpoint_sizing(s: StackSettings, entry: EndpointEntry | None = None) -> SizingReport | None:
    """The sizing of an endpoint (default: the stack's first) on its decode instance type, at
    the numbers it runs with (see size_endpoint)."""
    return size_endpoint(entry or s.entries()[0], s.instance_groups)
