"""What every settings model shares: the frozen, strict base model, the string patterns (and how
error messages describe them) and the reusable field types with their validators."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel

from core.aws.cidrs import parse_cidr
from core.aws.principals import PRINCIPAL_ARN_PATTERN
from core.images import parse_image
from core.regions import AZ_ID_PATTERN, REGION_PATTERN
from core.units import BYTE_SIZE_FORMS, parse_byte_size
from core.vocabulary import RESERVED_NAMESPACES, STACK_NAMESPACES

# Patterns and how error messages describe them to users.
CIDR_PATTERN = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$"
ROLE_ARN_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
GROUP_NAME_PATTERN = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"
INSTANCE_TYPE_PATTERN = r"^ml\.[a-z0-9-]+\.([0-9]*x?large|medium)$"
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
K8S_VERSION_PATTERN = r"^1\.[0-9]{2}$"
OPERATOR_VERSION_PATTERN = r"^[0-9]+\.[0-9]+(\.[0-9]+)?$"
ADDON_VERSION_PATTERN = r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$"
TRAINING_PLAN_PATTERN = r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:training-plan/.+$"
BUCKET_PATTERN = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
SEMVER_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+$"
# A GitHub repository OWNER/NAME (GitHub's own rules: letters, digits, '-', '_' and '.').
GITHUB_REPOSITORY_PATTERN = r"^[A-Za-z0-9-]{1,39}/[A-Za-z0-9_.-]{1,100}$"
# An AWS CodeConnections connection (or the older CodeStar Connections one it replaced).
CONNECTION_ARN_PATTERN = (
    r"^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:[0-9]{12}:"
    r"connection/[0-9a-f-]{36}$"
)
# A Pulumi Cloud organization name (letters, digits, '-', '_', '.').
PULUMI_ORGANIZATION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
# A self-hosted runner label (GitHub: letters, digits, '-', '_', '.'; at most 256).
RUNNER_LABEL_PATTERN = r"^[A-Za-z0-9_.-]{1,256}$"
# A name the split's clients call (trafficListener.domainName): a lowercase DNS name of two labels
# or more (RFC 1123 letters, digits and '-', each label <= 63, the whole <= DOMAIN_NAME_MAX, no
# trailing dot), the last label starting with a letter. A wildcard is no name a client calls.
DOMAIN_NAME_PATTERN = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
DOMAIN_NAME_MAX = 253
# A Route 53 hosted zone ID (Route 53 API reference, HostedZone.Id: "Z" and up to 32 characters).
HOSTED_ZONE_ID_PATTERN = r"^Z[A-Z0-9]{1,31}$"
# Where SNS delivers an alert: an email address (protocol email) or an HTTPS URL (https).
ALERT_TARGET_PATTERN = r"^(https://[^\s]+|[^@\s]+@[^@\s]+\.[^@\s]+)$"


def repair_pattern(pattern: str, text: str) -> str | None:
    """The value `text` most likely meant, when a small repair makes it match `pattern`: the
    instance type without its ml. prefix, a name in capitals or with spaces. None otherwise."""
    candidates = [text.strip(), text.strip().lower()]
    if pattern == INSTANCE_TYPE_PATTERN:
        candidates += ["ml." + c for c in candidates]
    if pattern == PRINCIPAL_ARN_PATTERN:  # `aws sts get-caller-identity` prints the session
        candidates += [_role_of_session(c) for c in candidates]
    if pattern == DOMAIN_NAME_PATTERN:  # a fully qualified name's trailing dot
        candidates += [c.rstrip(".") for c in candidates]
    if pattern == ALERT_TARGET_PATTERN:  # SNS delivers over HTTPS only
        candidates += [re.sub(r"^http://", "https://", c) for c in candidates]
    candidates += [re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")]
    return next((c for c in candidates if c != text and re.fullmatch(pattern, c)), None)


def _role_of_session(arn: str) -> str:
    """arn:aws:sts::1:assumed-role/Name/session -> arn:aws:iam::1:role/Name (the session ARN
    drops the role's path: a role with one needs it added)."""
    return re.sub(r"^arn:(aws[a-z-]*):sts::([0-9]{12}):assumed-role/([^/]+)/.*$",
                  r"arn:\1:iam::\2:role/\3", arn)  # fmt: skip


PATTERN_HINTS = {
    REGION_PATTERN: "an AWS Region name such as us-east-2",
    AZ_ID_PATTERN: "an AZ ID such as use2-az2 (not an AZ name such as us-east-2a)",
    CIDR_PATTERN: "an IPv4 CIDR such as 10.0.0.0/16",
    ROLE_ARN_PATTERN: "an IAM role ARN such as arn:aws:iam::111122223333:role/Admin",
    PRINCIPAL_ARN_PATTERN: "an IAM role or user ARN such as "
    "arn:aws:iam::111122223333:role/GitHubDeploy (with the role's path; not an assumed-role "
    "session ARN arn:aws:sts::...:assumed-role/..., and no wildcards)",
    DNS_LABEL_PATTERN: "a DNS-1123 label such as llama-70b (lowercase, digits, '-'; <= 63)",
    GROUP_NAME_PATTERN: "letters, digits and '-', at most 63, starting with a letter or digit",
    INSTANCE_TYPE_PATTERN: "a SageMaker instance type such as ml.p5.48xlarge",
    ENV_NAME_PATTERN: "an environment variable name (letters, digits, '_') such as HF_HOME",
    K8S_VERSION_PATTERN: 'a Kubernetes minor version such as "1.33" (quoted in YAML)',
    OPERATOR_VERSION_PATTERN: 'a version such as "3.3" (quoted in YAML)',
    ADDON_VERSION_PATTERN: "an EKS add-on version such as v1.4.0-eksbuild.1",
    TRAINING_PLAN_PATTERN: "a training plan ARN such as arn:aws:sagemaker:...:training-plan/x",
    BUCKET_PATTERN: "an S3 bucket name such as my-models (lowercase, digits, '.', '-')",
    SEMVER_PATTERN: "a version MAJOR.MINOR.PATCH such as 1.2.3",
    GITHUB_REPOSITORY_PATTERN: "a GitHub repository OWNER/NAME such as my-org/hyperpod-dpd",
    CONNECTION_ARN_PATTERN: "a CodeConnections ARN such as arn:aws:codeconnections:us-east-2:"
    "111122223333:connection/<36-character id>",
    PULUMI_ORGANIZATION_PATTERN: "a Pulumi Cloud organization name such as my-org",
    RUNNER_LABEL_PATTERN: "a runner label (letters, digits, '-', '_', '.') such as gpu-vpc",
    DOMAIN_NAME_PATTERN: "a lowercase DNS name such as llm.internal.example.com (no trailing dot)",
    HOSTED_ZONE_ID_PATTERN: "a Route 53 hosted zone ID such as Z0123456789ABCDEFGHIJ",
    ALERT_TARGET_PATTERN: "an email address (oncall@example.com) or an HTTPS URL (https://...)",
}


def matching(pattern: str, **kwargs: Any) -> Any:
    """A string constraint whose pattern PATTERN_HINTS describes to users."""
    return StringConstraints(pattern=pattern, **kwargs)


def _canonical_cidr(value: str) -> str:
    parse_cidr(value)  # ValueError: host bits set, octet or prefix out of range, not canonical
    return value


# Rules of S3 general purpose bucket names beyond the character set (S3 User Guide, "General
# purpose bucket naming rules"): names S3 reserves or that read as something else.
_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_BUCKET_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def bucket_rules(value: str) -> str:
    if ".." in value:
        raise ValueError("an S3 bucket name has no two adjacent periods")
    if re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", value):
        raise ValueError("an S3 bucket name is not formatted as an IP address")
    for prefix in _BUCKET_PREFIXES:
        if value.startswith(prefix):
            raise ValueError(f"S3 reserves bucket names starting with '{prefix}'")
    for suffix in _BUCKET_SUFFIXES:
        if value.endswith(suffix):
            raise ValueError(f"S3 reserves bucket names ending with '{suffix}'")
    return value


def _image_reference(value: str) -> str:
    parse_image(value)  # ImageRefError (a ValueError): its message, and the nearest that works
    return value


# An image the stack runs: `repo:tag`, or pinned `repo:tag@sha256:<64 hex>` (core/images.py).
ImageReference = Annotated[str, AfterValidator(_image_reference)]


def _own_namespace(value: str) -> str:
    if value.startswith("kube-") or value in RESERVED_NAMESPACES:
        users = [part for part, ns in STACK_NAMESPACES.items() if ns == value]
        why = f" ({value} is {users[0]}'s)" if users else ""
        raise ValueError(
            "a namespace this stack may own: not kube-* nor one the stack installs into, "
            f"{', '.join(RESERVED_NAMESPACES)}{why}: creating it again fails with AlreadyExists, "
            "and removing the endpoint would delete it"
        )
    return value


def key_prefix_rules(value: str) -> str:
    """A key prefix the staging role is scoped to: wildcards or '..' would widen or escape it."""
    parts = value.strip("/").split("/")
    if value.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError("a relative key prefix without empty, '.' or '..' segments, e.g. models/x")
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", value):
        raise ValueError(
            "letters, digits and . _ - / only (IAM policy wildcards * and ? would widen the "
            "staging role's scope)"
        )
    return value


AzId = Annotated[str, matching(AZ_ID_PATTERN)]
Cidr = Annotated[str, matching(CIDR_PATTERN), AfterValidator(_canonical_cidr)]
RoleArn = Annotated[str, matching(ROLE_ARN_PATTERN)]
PrincipalArn = Annotated[str, matching(PRINCIPAL_ARN_PATTERN)]
# DNS-1123 label: Kubernetes namespaces and the names the operator derives Deployments from.
DnsLabel = Annotated[str, matching(DNS_LABEL_PATTERN)]
# HyperPod's ClusterInstanceGroupSpecification.InstanceGroupName (botocore sagemaker model).
GroupName = Annotated[str, matching(GROUP_NAME_PATTERN, max_length=63)]
InstanceType = Annotated[str, matching(INSTANCE_TYPE_PATTERN)]
EnvName = Annotated[str, matching(ENV_NAME_PATTERN)]
BucketName = Annotated[str, matching(BUCKET_PATTERN), AfterValidator(bucket_rules)]
Namespace = Annotated[str, matching(DNS_LABEL_PATTERN), AfterValidator(_own_namespace)]
KeyPrefix = Annotated[
    str, StringConstraints(min_length=1, max_length=512), AfterValidator(key_prefix_rules)
]


def _env_value(value: Any) -> Any:
    """Kubernetes env values are strings; YAML turns `0` and `False` into other types.

    `PYTHONHASHSEED: 0` and `LMCACHE_SAVE_DECODE_CACHE: False` mean the strings "0" and "False"
    (the values the DPD docs use), so plain scalars are turned into their Python text.
    """
    if isinstance(value, bool | int | float):
        return str(value)
    return value


def _byte_size(value: Any) -> int:
    if isinstance(value, int | str) and not isinstance(value, bool):
        return parse_byte_size(value)
    raise ValueError(BYTE_SIZE_FORMS)


def _decimal_text(value: Any) -> Any:
    """A decimal number given as text, as a number: `pulumi config set --path KEY 0.75` stores
    the text "0.75" (the CLI turns only true/false and integers into YAML values: pulumi
    sdk/go/common/resource/config, adjustObjectValue), so without this no fraction could be set
    from the command line. Text that is no number stays text, and is refused."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


# A number that may be a fraction (a utilization, a price, a target): see _decimal_text.
Decimal = Annotated[float, BeforeValidator(_decimal_text)]
EnvValue = Annotated[str, BeforeValidator(_env_value)]
ByteSize = Annotated[int, BeforeValidator(_byte_size)]


class SettingsModel(BaseModel):
    # extra="forbid": an unknown (usually misspelt) key is an error, never silently ignored.
    # strict=True: no coercion, so `"yes"`, `"3"` or `true` where a number or a boolean belongs
    # is an error naming the key, never silently read as something else.
    # allow_inf_nan=False: .inf and .nan are no number a key takes (prices, sizes, targets).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        allow_inf_nan=False,
    )
