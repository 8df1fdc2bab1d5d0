"""`hyperpod-dpd preflight --stack dev`: ask AWS, before `pulumi up`, whether the stack can land.

p5 capacity is where deployments fail first (reported in awslabs/awsome-distributed-ai #186,
#189 and #204; docs/troubleshooting.md#pods-pending): the instance type is not offered in the
chosen AZ, the account's HyperPod quota is too low, or the training plan covers
another AZ or type. With a traffic split called by a name of the user's, the certificate must
cover that name (else every client fails its TLS check) and the zone must hold it. Every check
reads the account (boto3) and changes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from core.versions import EKS_ADDON_VERSIONS
from hyperpod_dpd.preflight.deployers import deployer_checks
from hyperpod_dpd.preflight.results import FAIL, PASS, WARN, Check
from hyperpod_dpd.shared import boot_script, node_boot
from hyperpod_dpd.shared.aws import ClientFactory, client_factory
from settings import StackSettings


def ec2_type(instance_type: str) -> str:
    """HyperPod types are EC2 types with an 'ml.' prefix (ml.p5.48xlarge -> p5.48xlarge)."""
    return instance_type.removeprefix("ml.")


def run_checks(
    s: StackSettings, client: ClientFactory, boot: boot_script.Deployed | None = None
) -> list[Check]:
    """Every step; with `boot` (where the stack's last `pulumi up` put the nodes' boot script),
    whether the script in S3 is still that one."""
    checks: list[Check] = []
    for step, name, fix in _STEPS:
        try:
            checks += step(s, client)
        except NoCredentialsError as exc:
            # No credentials at all: not a permission to grant, and every later step fails alike.
            checks.append(Check(name, FAIL, str(exc), NO_CREDENTIALS_FIX))
            return checks
        except (ClientError, BotoCoreError) as exc:
            checks.append(Check(name, FAIL, _aws_error(exc), fix))
    if boot is not None:
        checks += boot_checks(boot, client)
    return checks


def boot_checks(boot: boot_script.Deployed, client: ClientFactory) -> list[Check]:
    """What the nodes boot with (hyperpod_dpd/shared/node_boot.py): a change since `pulumi up`
    fails; what cannot be compared (the stack not deployed yet, no `pulumi` here) warns."""
    return [_as_check(name, v) for name, v in node_boot.verdicts(boot, client)]


def _as_check(name: str, v: boot_script.Verdict) -> Check:
    if v.result == "pass":
        return Check(name, PASS, v.detail)
    if v.result == "skip":
        return Check(name, WARN, v.detail)
    cause = f"{v.cause}. " if v.cause else ""
    return Check(name, FAIL, v.detail, f"{cause}Fix: {v.fix}; see {v.ref}")


# How the AWS SDK finds credentials (https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html).
NO_CREDENTIALS_FIX = (
    "no AWS credentials found: run `aws configure` or `aws sso login --profile NAME` and "
    "export AWS_PROFILE=NAME (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), then run "
    "preflight again; `hyperpod-dpd plan` needs no account"
)


def _error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def _aws_error(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        code = _error_code(exc)
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
            return f"{code}: the credentials may not read this; grant it or run as an admin"
        return f"{code}: {exc.response.get('Error', {}).get('Message', exc)}"
    return str(exc)


def _offerings(s: StackSettings, client: ClientFactory) -> list[Check]:
    ec2 = client("ec2")
    types = sorted({ec2_type(g.instance_type) for g in s.gpu_groups.values()})
    offered = _offered_zones(ec2, types)
    checks = []
    for t in types:
        zones = sorted(offered.get(t, ()))
        name = f"offering ml.{t} in {s.availability_zone_id}"
        if s.availability_zone_id in zones:
            checks.append(Check(name, PASS, "EC2 offers the type in the GPU AZ"))
        else:
            where = ", ".join(zones) or "no AZ of this Region"
            checks.append(
                Check(
                    name,
                    FAIL,
                    f"not offered in {s.availability_zone_id}; offered in {where}",
                    "set hyperpod-dpd:availabilityZoneId to one of those (where your capacity is)",
                )
            )
    return checks


def _offered_zones(ec2: Any, types: list[str]) -> dict[str, set[str]]:
    offered: dict[str, set[str]] = defaultdict(set)
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    pages = paginator.paginate(
        LocationType="availability-zone-id",
        Filters=[{"Name": "instance-type", "Values": types}],
    )
    for page in pages:
        for o in page["InstanceTypeOfferings"]:
            offered[o["InstanceType"]].add(o["Location"])
    return offered


def _quotas(s: StackSettings, client: ClientFactory) -> list[Check]:
    needed: dict[str, int] = defaultdict(int)
    for g in s.instance_groups.values():
        needed[g.instance_type] += g.instance_count
    quotas: dict[str, float] = {}
    paginator = client("service-quotas").get_paginator("list_service_quotas")
    for page in paginator.paginate(ServiceCode="sagemaker"):
        for q in page["Quotas"]:
            quotas[q["QuotaName"]] = q["Value"]
    checks = []
    for instance_type, count in sorted(needed.items()):
        quota_name = f"{instance_type} for cluster usage"
        name = f"quota '{quota_name}'"
        if quota_name not in quotas:
            checks.append(Check(name, WARN, "quota not found in Service Quotas; check the console"))
        elif quotas[quota_name] < count:
            checks.append(
                Check(
                    name,
                    FAIL,
                    f"{quotas[quota_name]:g} < {count} needed",
                    f"request an increase (Service Quotas > Amazon SageMaker > '{quota_name}') "
                    "or lower hyperpod-dpd:instanceGroups.<group>.instanceCount",
                )
            )
        else:
            checks.append(Check(name, PASS, f"{quotas[quota_name]:g} >= {count} needed"))
    return checks


def _training_plans(s: StackSettings, client: ClientFactory) -> list[Check]:
    checks = []
    sagemaker = client("sagemaker")
    for group_name, g in sorted(s.instance_groups.items()):
        if not g.training_plan_arn:
            continue
        plan_name = g.training_plan_arn.rsplit("/", 1)[-1]
        name = f"training plan {plan_name} ({group_name})"
        plan = sagemaker.describe_training_plan(TrainingPlanName=plan_name)
        problems = []
        if plan["Status"] not in ("Active", "Scheduled"):
            problems.append(f"status {plan['Status']}")
        capacity = [
            c
            for c in plan.get("ReservedCapacitySummaries", [])
            if c.get("InstanceType") == g.instance_type
        ]
        if not capacity:
            problems.append(f"reserves no {g.instance_type}")
        elif all(c.get("AvailabilityZoneId") != s.availability_zone_id for c in capacity):
            zones = ", ".join(sorted({str(c.get("AvailabilityZoneId")) for c in capacity}))
            problems.append(f"reserves {g.instance_type} in {zones}, not {s.availability_zone_id}")
        elif sum(c.get("TotalInstanceCount", 0) for c in capacity) < g.instance_count:
            problems.append(f"reserves fewer than the {g.instance_count} instances of the group")
        if problems:
            key = f"hyperpod-dpd:instanceGroups.{group_name}.trainingPlanArn"
            fix = (
                f"set {key} to an Active or Scheduled plan reserving {g.instance_count} x "
                f"{g.instance_type} in {s.availability_zone_id}, or remove it to use on-demand "
                "or ODCR capacity"
            )
            checks.append(Check(name, FAIL, "; ".join(problems), fix))
        else:
            checks.append(Check(name, PASS, f"{plan['Status']}, {g.instance_type} in the GPU AZ"))
    return checks


def _addon_versions(s: StackSettings, client: ClientFactory) -> list[Check]:
    eks = client("eks")
    checks = []
    for addon, version in sorted(EKS_ADDON_VERSIONS[s.eks.kubernetes_version].items()):
        response = eks.describe_addon_versions(
            kubernetesVersion=s.eks.kubernetes_version, addonName=addon
        )
        published = {v["addonVersion"] for a in response["addons"] for v in a["addonVersions"]}
        name = f"add-on {addon} {version}"
        if version in published:
            checks.append(Check(name, PASS, f"published for Kubernetes {s.eks.kubernetes_version}"))
        else:
            checks.append(
                Check(
                    name,
                    FAIL,
                    f"not published for Kubernetes {s.eks.kubernetes_version} in this Region",
                    f"pin a published version (aws eks describe-addon-versions --addon-name "
                    f"{addon} --kubernetes-version {s.eks.kubernetes_version}) in "
                    "core/versions.py EKS_ADDON_VERSIONS",
                )
            )
    return checks


def covers(pattern: str, name: str) -> bool:
    """Whether a certificate's DNS name `pattern` covers `name`, as a TLS client matches them
    (RFC 6125, section 6.4.3): case aside and without a trailing dot, equal; or a wildcard as
    the whole left-most label (the only wildcard ACM issues, `*.example.com`) standing for
    exactly one label: `*.example.com` covers `llm.example.com`, not `example.com` nor
    `a.llm.example.com`."""
    pattern, name = pattern.lower().rstrip("."), name.lower().rstrip(".")
    if not pattern.startswith("*."):
        return pattern == name
    label, _, rest = name.partition(".")
    return bool(label) and label != "*" and rest == pattern[2:]


def traffic_name_checks(s: StackSettings, client: ClientFactory) -> list[Check]:
    """The split's name (trafficListener.domainName): the certificate covers it and is issued,
    its zone is private and holds it. Nothing to ask without a split or without a name."""
    listener = s.traffic_listener
    name, arn, zone = listener.domain_name, listener.certificate_arn, listener.hosted_zone_id
    if not s.traffic or name is None or arn is None or zone is None:
        return []
    key = "hyperpod-dpd:trafficListener"
    return [
        _certificate(name, arn, s.region, key, client("acm")),
        *_zone(name, zone, key, client("route53")),
    ]


def _certificate(name: str, arn: str, region: str, key: str, acm: Any) -> Check:
    check = f"certificate covers {name}"
    try:
        certificate = acm.describe_certificate(CertificateArn=arn)["Certificate"]
    except ClientError as exc:
        if _error_code(exc) != "ResourceNotFoundException":
            raise
        return Check(check, FAIL, f"no certificate {arn} in this account and Region",
                     f"set {key}.certificateArn to a certificate of ACM in {region} that "
                     f"covers {name} (aws acm list-certificates --region {region})")  # fmt: skip
    names = [n for n in dict.fromkeys([certificate.get("DomainName", ""),
                                       *certificate.get("SubjectAlternativeNames", [])]) if n]  # fmt: skip
    status = certificate.get("Status", "")
    if not any(covers(n, name) for n in names):
        named = next((n for n in names if not n.startswith("*.")), None)
        return Check(check, FAIL, f"{arn.rsplit('/', 1)[-1]} covers {', '.join(names) or 'no name'}",
                     f"request or import a certificate covering {name} (ACM Private CA, or "
                     f"ACM with DNS validation) and set {key}.certificateArn to it"
                     + (f", or set {key}.domainName to a name it covers ({named})"
                        if named else ""))  # fmt: skip
    if status != "ISSUED":
        return Check(check, FAIL, f"covers it, but its status is {status}",
                     "an HTTPS listener takes an issued certificate: complete its validation "
                     "(aws acm describe-certificate --certificate-arn ... shows the records) "
                     f"or set {key}.certificateArn to an issued one")  # fmt: skip
    return Check(check, PASS, f"issued, covers {', '.join(names)}")


def _zone(name: str, zone_id: str, key: str, route53: Any) -> list[Check]:
    check = f"zone {zone_id} holds {name}"
    try:
        zone = route53.get_hosted_zone(Id=zone_id)["HostedZone"]
    except ClientError as exc:
        if _error_code(exc) != "NoSuchHostedZone":
            raise
        return [Check(check, FAIL, f"no hosted zone {zone_id} in this account",
                      f"set {key}.hostedZoneId to the private hosted zone that holds {name} "
                      "(aws route53 list-hosted-zones-by-name)")]  # fmt: skip
    zone_name = zone["Name"].rstrip(".").lower()
    problems = []
    if not (zone.get("Config") or {}).get("PrivateZone"):
        problems.append(
            "a public zone: the stack associates the zone with its VPC, which Route 53 allows "
            "for private zones only (and a public record would publish the load balancer's "
            "internal addresses)"
        )
    if name != zone_name and not name.endswith("." + zone_name):
        problems.append(f"{name} is not in {zone_name}")
    if problems:
        return [Check(check, FAIL, "; ".join(problems),
                      f"set {key}.hostedZoneId to the private hosted zone whose name {name} ends "
                      "in (aws route53 list-hosted-zones-by-name), or a domainName in this one")]  # fmt: skip
    checks = [Check(check, PASS, f"private zone {zone_name}")]
    found = route53.list_resource_record_sets(
        HostedZoneId=zone_id, StartRecordName=name, StartRecordType="A", MaxItems="1"
    )["ResourceRecordSets"]
    if found and found[0]["Name"].rstrip(".").lower() == name and found[0]["Type"] == "A":
        checks.append(Check(f"record {name}", WARN,
                            "an A record of this name exists: if this stack did not create it, "
                            "`pulumi up` fails to create its own (remove the record, or choose "
                            f"another {key}.domainName)"))  # fmt: skip
    return checks


def render(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"{'CHECK'.ljust(width)}  RESULT  DETAIL"]
    for c in checks:
        lines.append(f"{c.name.ljust(width)}  {c.result.ljust(6)}  {c.detail}")
        if c.fix:
            lines.append(f"{' ' * width}          fix: {c.fix}")
    failed = sum(c.result == FAIL for c in checks)
    lines.append(f"{len(checks) - failed} passed, {failed} failed")
    return "\n".join(lines)


def boto3_factory(region: str) -> ClientFactory:
    return client_factory(region)


# Each step, its check's name, and what to do when AWS refuses it: one row, so a new step cannot
# lack its fix.
_STEPS = (
    (
        _offerings,
        "offerings",
        "the credentials need ec2:DescribeInstanceTypeOfferings in aws:region",
    ),
    (_quotas, "quotas", "the credentials need servicequotas:ListServiceQuotas for sagemaker"),
    (_training_plans, "training plans", "the credentials need sagemaker:DescribeTrainingPlan"),
    (_addon_versions, "addon versions", "the credentials need eks:DescribeAddonVersions"),
    (
        deployer_checks,
        "deployers",
        "the credentials need iam:GetRole (iam:GetUser for a user) on each "
        "hyperpod-dpd:deployerArns entry",
    ),
    (
        traffic_name_checks,
        "traffic name",
        "the credentials need acm:DescribeCertificate on trafficListener.certificateArn and "
        "route53:GetHostedZone and route53:ListResourceRecordSets on its hostedZoneId",
    ),
)
