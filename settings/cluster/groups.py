"""The clusters: the EKS control plane and its access entries, the HyperPod instance groups and the
inference operator, with the checks of their versions, access entries and groups."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field

from core.problems import ConfigProblem
from core.versions import (
    DPD_MINIMUM_OPERATOR,
    OPERATOR_ADDON_VERSIONS,
    SUPPORTED_KUBERNETES_VERSIONS,
)
from core.vocabulary import GPU_ROLES, Role
from settings.config.errors import full_key, set_fix
from settings.config.fields import (
    ADDON_VERSION_PATTERN,
    K8S_VERSION_PATTERN,
    OPERATOR_VERSION_PATTERN,
    SEMVER_PATTERN,
    TRAINING_PLAN_PATTERN,
    Cidr,
    InstanceType,
    RoleArn,
    SettingsModel,
    matching,
)

# Graviton families carry a 'g' after the generation digit: ml.m7g, ml.c6gn, ml.r8g.
_GRAVITON = re.compile(r"^ml\.[a-z]+[0-9]+g[a-z]*\.")


class EksConfig(SettingsModel):
    kubernetes_version: Annotated[str, matching(K8S_VERSION_PATTERN)] = Field(
        "1.33",
        description="EKS Kubernetes version, pinned. 1.33: the HyperPod dependencies chart's "
        "mpi-operator CRD fails on >= 1.34.",
    )
    public_access_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="CIDRs allowed to reach the public EKS API endpoint. Empty: the endpoint "
        "is private only.",
    )
    admin_role_arns: list[RoleArn] = Field(
        default_factory=list,
        description="IAM role ARNs given cluster-admin through EKS access entries.",
    )
    view_role_arns: list[RoleArn] = Field(
        default_factory=list,
        description="IAM role ARNs given read-only access (AmazonEKSViewPolicy), e.g. the CI "
        "role that runs `pulumi preview`.",
    )
    deployer_admin: bool = Field(
        True,
        description="Give the identity that runs `pulumi up` cluster-admin through its own "
        "access entry (it installs the charts and the endpoint; the cluster is created without "
        "the implicit creator admin). Set false if that role is in adminRoleArns, or for a "
        "cluster created before this key existed (its creator already has an entry).",
    )


class InstanceGroupConfig(SettingsModel):
    instance_type: InstanceType = Field(
        description="HyperPod instance type, e.g. ml.p5.48xlarge.", examples=["ml.p5.48xlarge"]
    )
    instance_count: int = Field(
        ge=1,
        le=6758,
        description="Number of instances in the group (1 to 6758, the API's limit).",
        examples=[1],
    )
    role: Role = Field(
        description="What runs on the group: 'prefill' or 'decode' DPD workers (GPU, EFA, in "
        "availabilityZoneId), 'colocated' workers, or 'system' (operators and the staging "
        "Job: x86_64, one node at least holding 4 CPU and 8 GiB).",
        examples=["decode"],
    )
    training_plan_arn: Annotated[str, matching(TRAINING_PLAN_PATTERN)] | None = Field(
        None, description="SageMaker training plan that reserves the group's capacity."
    )
    ebs_volume_size_gb: int = Field(
        500, ge=1, le=16384, description="Extra EBS volume per instance, in GB."
    )
    image_release_version: Annotated[str, matching(SEMVER_PATTERN)] | None = Field(
        None,
        description="HyperPod AMI release (MAJOR.MINOR.PATCH: NVIDIA driver, EFA, kubelet). "
        "Unset: the latest at creation, kept until you set one; changing it updates the "
        "group's software (UpdateClusterSoftware).",
    )
    auto_patch: Literal["WhenIdle", "WhenAllIdle"] | None = Field(
        None,
        description="HyperPod automatic AMI patching of the group. Unset (the default): no "
        "automatic patching, so serving nodes change only when imageReleaseVersion does.",
    )


class InferenceOperatorConfig(SettingsModel):
    version: Annotated[str, matching(OPERATOR_VERSION_PATTERN)] = Field(
        "3.3", description="HyperPod Inference Operator version; DPD needs 3.2 or newer."
    )
    addon_version: Annotated[str, matching(ADDON_VERSION_PATTERN)] = Field(
        "v1.4.0-eksbuild.1",
        description="Version of the amazon-sagemaker-hyperpod-inference EKS add-on "
        "(v1.4.0 carries operator 3.3).",
    )


# The instance groups of the stack, keyed by name.
InstanceGroups = dict[str, InstanceGroupConfig]


def groups_with_role(groups: InstanceGroups, role: str) -> InstanceGroups:
    return {name: g for name, g in groups.items() if g.role == role}


def gpu_groups(groups: InstanceGroups) -> InstanceGroups:
    return {n: g for n, g in groups.items() if g.role in GPU_ROLES}


def instance_type_for(groups: InstanceGroups, role: str) -> str:
    """The instance type serving `role` (the first group's, by name; any GPU group's when no
    group has the role, as in colocated mode)."""
    found = groups_with_role(groups, role) or gpu_groups(groups)
    return found[sorted(found)[0]].instance_type


def check_kubernetes(eks: EksConfig) -> list[ConfigProblem]:
    """A Kubernetes version whose EKS add-ons are pinned (core/versions.py)."""
    if eks.kubernetes_version in SUPPORTED_KUBERNETES_VERSIONS:
        return []
    key = full_key(("eks", "kubernetesVersion"))
    supported = ", ".join(SUPPORTED_KUBERNETES_VERSIONS)
    return [
        ConfigProblem(
            key,
            eks.kubernetes_version,
            f"a version with pinned EKS add-ons: {supported} (the HyperPod dependencies "
            "chart's mpi-operator CRD fails on 1.34 and later)",
            set_fix(key, SUPPORTED_KUBERNETES_VERSIONS[-1]),
        )
    ]


def access_entry_key(role_arn: str) -> str:
    """The part of an access entry's resource name that names the role: its name, lowercased
    (keyed by name, not list position: reordering the list changes nothing)."""
    return role_arn.rsplit("/", 1)[-1].lower()


def check_access_entries(eks: EksConfig) -> list[ConfigProblem]:
    """One access entry per principal: EKS refuses a second (409 ResourceInUseException), and two
    roles whose names differ only in account, path or case would share one resource name."""
    problems = []
    lists = {"adminRoleArns": eks.admin_role_arns, "viewRoleArns": eks.view_role_arns}
    for field, arns in lists.items():
        key = full_key(("eks", field))
        seen: dict[str, str] = {}
        for arn in arns:
            name = access_entry_key(arn)
            if name in seen and seen[name] != arn:  # the same ARN twice: config/unique.py's
                problems.append(
                    ConfigProblem(
                        key,
                        [seen[name], arn],
                        "roles with distinct names (each gets the access entry "
                        f"eks-{field[:-8].lower()}-<role name>; these both map to '{name}')",
                        "list each role once; for roles of the same name in two accounts, "
                        "create one under another name",
                    )
                )
            seen[name] = arn
    both = sorted(set(eks.admin_role_arns) & set(eks.view_role_arns))
    if both:
        problems.append(
            ConfigProblem(
                full_key(("eks", "viewRoleArns")),
                both,
                "roles not already in eks.adminRoleArns (EKS allows one access entry per role)",
                "remove them from one of the two lists",
            )
        )
    return problems


def check_groups(groups: InstanceGroups, mode: str) -> list[ConfigProblem]:
    """The roles the endpoint's `mode` needs have groups; the system group is x86_64."""
    key = full_key(("instanceGroups",))
    needed = ["system", "prefill", "decode"] if mode == "dpd" else ["system"]
    problems = []
    for role in needed:
        if not groups_with_role(groups, role):
            why = {
                "system": "the operators need x86_64 nodes outside the GPU groups",
                "prefill": "endpoint.mode dpd needs prefill nodes",
                "decode": "endpoint.mode dpd needs decode nodes",
            }[role]
            problems.append(
                ConfigProblem(
                    key,
                    sorted(groups),
                    f"at least one group with role '{role}' ({why})",
                    f"add one: pulumi config set --path '{key}.{role}.role' {role} (and its "
                    "instanceType and instanceCount)",
                )
            )
    for name, group in groups_with_role(groups, "system").items():
        if _GRAVITON.match(group.instance_type):
            group_key = f"{key}.{name}.instanceType"
            problems.append(
                ConfigProblem(
                    group_key,
                    group.instance_type,
                    "an x86_64 instance type for the system group (the inference operator's "
                    "images are amd64 only)",
                    set_fix(group_key, "ml.m5.4xlarge"),
                )
            )
    if mode == "colocated" and not gpu_groups(groups):
        problems.append(
            ConfigProblem(
                key,
                sorted(groups),
                "at least one GPU group (role prefill or decode) to run the colocated workers",
                f"add one: pulumi config set --path '{key}.gpu.role' decode",
            )
        )
    return problems


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def check_operator(
    op: InferenceOperatorConfig, mode: str, dpd_mode_keys: tuple[str, ...] = ()
) -> list[ConfigProblem]:
    """The version gate: known operator version, its add-on version, DPD only from 3.2.
    `dpd_mode_keys`: the mode keys of the DPD endpoints (endpoints.<key>.mode in a stack of
    several), which the alternative fix names."""
    key, addon_key = (
        full_key(("inferenceOperator", "version")),
        full_key(("inferenceOperator", "addonVersion")),
    )
    known = ", ".join(f"{v} ({a})" for v, a in OPERATOR_ADDON_VERSIONS.items())
    minor = ".".join(op.version.split(".")[:2])
    if minor not in OPERATOR_ADDON_VERSIONS:
        return [
            ConfigProblem(
                key, op.version, f"a known operator version: {known}", set_fix(key, "3.3")
            )
        ]
    problems = []
    if mode == "dpd" and _version(op.version) < DPD_MINIMUM_OPERATOR:
        problems.append(
            ConfigProblem(
                key,
                op.version,
                "3.2 or newer with endpoint.mode dpd (older operators crash DPD pods)",
                f"{set_fix(key, '3.3')}, or set "
                f"{' and '.join(dpd_mode_keys or (full_key(('endpoint', 'mode')),))} to colocated",
            )
        )
    needed = OPERATOR_ADDON_VERSIONS[minor]
    if op.addon_version not in OPERATOR_ADDON_VERSIONS.values():
        problems.append(
            ConfigProblem(
                addon_key,
                op.addon_version,
                f"an add-on version of the version table: {known} (check `aws eks "
                "describe-addon-versions --addon-name amazon-sagemaker-hyperpod-inference` and "
                "add new ones to core/versions.py)",
                set_fix(addon_key, needed),
            )
        )
    elif op.addon_version != needed:
        carried = next(v for v, a in OPERATOR_ADDON_VERSIONS.items() if a == op.addon_version)
        problems.append(
            ConfigProblem(
                addon_key,
                op.addon_version,
                f"{needed}, the add-on that carries operator {minor} (this one carries "
                f"{carried}: the endpoint would run another operator than the one configured)",
                f"{set_fix(addon_key, needed)}, or set {key} to {carried}",
            )
        )
    return problems
