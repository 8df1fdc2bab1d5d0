"""Cross-field checks of the stack configuration (pure functions of StackSettings).

Single-field rules (types, enums, patterns, bounds) live on the model. What lives here needs two
keys at once. Deployment policies (DPD instance types, buffer sizing, security) are not config
errors; they are in policies/rules/ and run in the plan and the CrossGuard pack.
"""

from __future__ import annotations

import ipaddress
import re

from core.catalog import MODELS, SizingError, load_model
from core.regions import az_id_in_region, az_id_prefix
from core.versions import (
    DPD_MINIMUM_OPERATOR,
    OPERATOR_ADDON_VERSIONS,
    SUPPORTED_KUBERNETES_VERSIONS,
)
from core.vocabulary import PROJECT, ROUTER_SERVICE, RULE_NAMES
from settings.errors import MISSING, ConfigProblem, full_key, set_fix
from settings.model import StackSettings
from settings.sizing import endpoint_sizing

_HF_SOURCE = re.compile(r"^hf://[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_S3_SOURCE = re.compile(r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$")
# Graviton families carry a 'g' after the generation digit: ml.m7g, ml.c6gn, ml.r8g.
_GRAVITON = re.compile(r"^ml\.[a-z]+[0-9]+g[a-z]*\.")
_COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")

MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 20


def check_settings(s: StackSettings) -> list[ConfigProblem]:
    return [
        *_check_zones(s),
        *_check_vpc(s),
        *_check_kubernetes(s),
        *_check_access_entries(s),
        *_check_groups(s),
        *_check_checkpoint(s),
        *_check_sizing_inputs(s),
        *_check_policy_names(s),
        *_check_operator(s),
        *_check_model_matches_checkpoint(s),
        *_check_derived_names(s),
        *_check_colocated(s),
    ]


def _check_colocated(s: StackSettings) -> list[ConfigProblem]:
    """The chunked-prefill knobs: each flag set in one place only, and a step budget vLLM starts
    with (vllm/config/scheduler.py, verify_max_model_len: "max_num_batched_tokens must be greater
    than or equal to max_num_seqs"; the colocated worker runs the decoder's max_num_seqs)."""
    e, c = s.endpoint, s.endpoint.colocated
    problems = []
    for flag, field, value in c.settings():
        if any(a.split("=")[0] == flag for a in e.decode.args):
            key = full_key(("endpoint", "colocated", field))
            problems.append(ConfigProblem(
                key, value, f"{flag} given once (endpoint.decode.args also sets it)",
                f"keep {key} and remove {flag} from hyperpod-dpd:endpoint.decode.args",
            ))  # fmt: skip
    budget = c.max_num_batched_tokens
    if budget is not None and budget < e.decode.max_num_seqs:
        key = full_key(("endpoint", "colocated", "maxNumBatchedTokens"))
        problems.append(ConfigProblem(
            key, budget,
            f"at least endpoint.decode.maxNumSeqs ({e.decode.max_num_seqs}): vLLM refuses a "
            "step budget smaller than its batch",
            f"set {key} to {max(e.decode.max_num_seqs, 2048)} or more (2048 is vLLM's usual "
            "chunked-prefill budget)",
        ))  # fmt: skip
    return problems


def _check_derived_names(s: StackSettings) -> list[ConfigProblem]:
    """Names the operator derives from the endpoint's must be valid Kubernetes names too."""
    e = s.endpoint
    derived = ROUTER_SERVICE.format(name=e.name, namespace=e.namespace)
    if len(derived) <= 63:
        return []
    room = 63 - len(ROUTER_SERVICE.format(name="", namespace=""))
    key = full_key(("endpoint", "name"))
    return [
        ConfigProblem(
            key,
            e.name,
            f"a name that, with namespace '{e.namespace}', gives the router Service the operator "
            f"creates a name of at most 63 characters ('{derived}' has {len(derived)}): name and "
            f"namespace together at most {room} characters",
            f"shorten {key} or hyperpod-dpd:endpoint.namespace",
        )
    ]


def _check_model_matches_checkpoint(s: StackSettings) -> list[ConfigProblem]:
    """The model the sizing and policies assume is the model the checkpoint stages, and vLLM
    will start with the configured --max-model-len."""
    e, c = s.endpoint, s.checkpoint
    try:
        model = load_model(e.model)
    except SizingError:
        return []  # reported by _check_sizing_inputs
    problems = []
    model_key = full_key(("endpoint", "model"))
    if _HF_SOURCE.match(c.source) and e.model in MODELS:
        repo = c.source.removeprefix("hf://")
        if repo.lower() not in {r.lower() for r in model.repositories}:
            by_repo = [
                m.name for m in MODELS.values() if repo.lower() in map(str.lower, m.repositories)
            ]
            fix = (
                set_fix(model_key, by_repo[0])
                if by_repo
                else f"point {model_key} at the staged model's config.json (the sizing needs its "
                "architecture)"
            )
            problems.append(
                ConfigProblem(
                    model_key,
                    e.model,
                    f"the model hyperpod-dpd:checkpoint.source stages ({repo}); {e.model} is "
                    f"{', '.join(model.repositories)}",
                    fix,
                )
            )
    if model.context_length and e.max_model_len > model.context_length:
        key = full_key(("endpoint", "maxModelLen"))
        problems.append(
            ConfigProblem(
                key,
                e.max_model_len,
                f"at most {model.context_length}, {model.name}'s context length (vLLM refuses a "
                "longer --max-model-len)",
                set_fix(key, min(16384, model.context_length)),
            )
        )
    return problems


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def _check_operator(s: StackSettings) -> list[ConfigProblem]:
    """The version gate: known operator version, its add-on version, DPD only from 3.2."""
    op = s.inference_operator
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
    if s.endpoint.mode == "dpd" and _version(op.version) < DPD_MINIMUM_OPERATOR:
        problems.append(
            ConfigProblem(
                key,
                op.version,
                "3.2 or newer with endpoint.mode dpd (older operators crash DPD pods)",
                f"{set_fix(key, '3.3')}, or set hyperpod-dpd:endpoint.mode colocated",
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


def _check_policy_names(s: StackSettings) -> list[ConfigProblem]:
    problems = []
    for name in s.policy.enforcement:
        if name not in RULE_NAMES:
            key = full_key(("policy", "enforcement", name))
            problems.append(
                ConfigProblem(
                    key, name, "a rule name: " + ", ".join(sorted(RULE_NAMES)), "fix the rule name"
                )
            )
    return problems


def _check_sizing_inputs(s: StackSettings) -> list[ConfigProblem]:
    """The model must be known and TP must fit it and the node (see core/sizing.py)."""
    try:
        endpoint_sizing(s)
    except SizingError as exc:
        path = exc.key.replace("<group>", next(iter(s.groups_with_role("decode")), "decode"))
        key = f"{PROJECT}:{path}"
        return [ConfigProblem(key, exc.value, exc.problem, exc.fix)]
    return []


def access_entry_key(role_arn: str) -> str:
    """The part of an access entry's resource name that names the role: its name, lowercased
    (keyed by name, not list position: reordering the list changes nothing)."""
    return role_arn.rsplit("/", 1)[-1].lower()


def _check_access_entries(s: StackSettings) -> list[ConfigProblem]:
    """One access entry per principal: EKS refuses a second (409 ResourceInUseException), and two
    roles whose names differ only in account, path or case would share one resource name."""
    problems = []
    lists = {"adminRoleArns": s.eks.admin_role_arns, "viewRoleArns": s.eks.view_role_arns}
    for field, arns in lists.items():
        key = full_key(("eks", field))
        seen: dict[str, str] = {}
        for arn in arns:
            name = access_entry_key(arn)
            if name in seen:
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
    both = sorted(set(s.eks.admin_role_arns) & set(s.eks.view_role_arns))
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


def _check_kubernetes(s: StackSettings) -> list[ConfigProblem]:
    if s.eks.kubernetes_version in SUPPORTED_KUBERNETES_VERSIONS:
        return []
    key = full_key(("eks", "kubernetesVersion"))
    supported = ", ".join(SUPPORTED_KUBERNETES_VERSIONS)
    return [
        ConfigProblem(
            key,
            s.eks.kubernetes_version,
            f"a version with pinned EKS add-ons: {supported} (the HyperPod dependencies "
            "chart's mpi-operator CRD fails on 1.34 and later)",
            set_fix(key, SUPPORTED_KUBERNETES_VERSIONS[-1]),
        )
    ]


def _check_zones(s: StackSettings) -> list[ConfigProblem]:
    problems = []
    prefix = az_id_prefix(s.region)
    if not az_id_in_region(s.availability_zone_id, s.region):
        key = full_key(("availabilityZoneId",))
        problems.append(
            ConfigProblem(
                key,
                s.availability_zone_id,
                f"an AZ ID of aws:region {s.region} ({prefix}-azN)",
                "use the AZ ID where your GPU capacity (training plan, ODCR) is; "
                + set_fix(key, prefix + "-az1"),
            )
        )
    ids = s.network.control_plane_az_ids
    key = full_key(("network", "controlPlaneAzIds"))
    wrong = [az for az in ids if not az_id_in_region(az, s.region)]
    if wrong:
        problems.append(
            ConfigProblem(key, ids, f"AZ IDs of aws:region {s.region} ({prefix}-azN)", set_fix(key))
        )
    if len(set(ids)) < 2 or len(set(ids)) != len(ids):
        example = sorted({f"{prefix}-az1", f"{prefix}-az2"})
        problems.append(
            ConfigProblem(
                key,
                ids,
                "at least two distinct AZ IDs (EKS requires subnets in two AZs)",
                set_fix(key, example),
            )
        )
    return problems


def _check_vpc(s: StackSettings) -> list[ConfigProblem]:
    key = full_key(("network", "vpcCidr"))
    net = ipaddress.IPv4Network(s.network.vpc_cidr)  # the model's Cidr type parsed it already
    if not (MIN_VPC_PREFIX <= net.prefixlen <= MAX_VPC_PREFIX) or not net.is_private:
        allowed = f"a private (RFC 1918) network from /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}"
        return [ConfigProblem(key, s.network.vpc_cidr, allowed, set_fix(key, "10.0.0.0/16"))]
    return []


def _check_groups(s: StackSettings) -> list[ConfigProblem]:
    key = full_key(("instanceGroups",))
    needed = ["system", "prefill", "decode"] if s.endpoint.mode == "dpd" else ["system"]
    problems = []
    for role in needed:
        if not s.groups_with_role(role):
            why = {
                "system": "the operators need x86_64 nodes outside the GPU groups",
                "prefill": "endpoint.mode dpd needs prefill nodes",
                "decode": "endpoint.mode dpd needs decode nodes",
            }[role]
            problems.append(
                ConfigProblem(
                    key,
                    sorted(s.instance_groups),
                    f"at least one group with role '{role}' ({why})",
                    f"add one: pulumi config set --path '{key}.{role}.role' {role} (and its "
                    "instanceType and instanceCount)",
                )
            )
    for name, group in s.groups_with_role("system").items():
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
    if s.endpoint.mode == "colocated" and not s.gpu_groups:
        problems.append(
            ConfigProblem(
                key,
                sorted(s.instance_groups),
                "at least one GPU group (role prefill or decode) to run the colocated workers",
                f"add one: pulumi config set --path '{key}.gpu.role' decode",
            )
        )
    return problems


def _check_checkpoint(s: StackSettings) -> list[ConfigProblem]:
    c = s.checkpoint
    source_key, revision_key = (
        full_key(("checkpoint", "source")),
        full_key(("checkpoint", "revision")),
    )
    if c.source.startswith("hf://"):
        if not _HF_SOURCE.match(c.source):
            return [ConfigProblem(source_key, c.source, "hf://<org>/<model>", set_fix(source_key))]
        if c.revision is None or not _COMMIT_SHA.match(c.revision):
            return [
                ConfigProblem(
                    revision_key,
                    c.revision if c.revision is not None else MISSING,
                    "a 40-hex commit SHA for hf:// sources (a branch such as 'main' can move)",
                    f"copy the commit from the model page's 'Files and versions' history: "
                    f"{set_fix(revision_key)}",
                )
            ]
    elif c.source.startswith("s3://") and not _S3_SOURCE.match(c.source):
        return [ConfigProblem(source_key, c.source, "s3://<bucket>/<prefix>", set_fix(source_key))]
    elif "://" in c.source and not c.source.startswith(("hf://", "s3://")):
        allowed = "hf://<org>/<model>, s3://<bucket>/<prefix> or a local directory"
        return [ConfigProblem(source_key, c.source, allowed, set_fix(source_key))]
    elif "://" not in c.source and c.staging == "job":
        key = full_key(("checkpoint", "staging"))
        return [
            ConfigProblem(
                key,
                c.staging,
                "'manual' for a local directory (an in-cluster Job cannot read your disk)",
                f"{set_fix(key, 'manual')}, then run `hyperpod-dpd checkpoint upload --source "
                f"{c.source} --dest s3://<model bucket>/<prefix>` before `pulumi up`",
            )
        ]
    return []
