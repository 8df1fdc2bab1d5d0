"""The TLS of the traffic split's HTTPS listener: the ACM certificate ARN it takes and the ELB
security policies it may negotiate with."""

from __future__ import annotations

from typing import Literal

# An ACM certificate ARN (ACM's ARN format, Service Authorization Reference for ACM:
# arn:${Partition}:acm:${Region}:${Account}:certificate/${CertificateId}, the id a UUID).
CERTIFICATE_ARN_PATTERN = r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$"
# ALB security policies that negotiate TLS 1.2 or 1.3 only, with forward secrecy ("Security
# policies for your Application Load Balancer",
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html).
# The first is what ELB itself recommends.
TLS_POLICIES = (
    "ELBSecurityPolicy-TLS13-1-2-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06",
    "ELBSecurityPolicy-TLS13-1-3-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04",
)
TlsPolicy = Literal[
    "ELBSecurityPolicy-TLS13-1-2-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-Res-2021-06",
    "ELBSecurityPolicy-TLS13-1-3-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04",
]
