"""Stacks a user means, written with the keys the last waves added: each must plan (exit 0,
advisories allowed). Together they hold an entry in every list-valued key of the settings, which
the repeated-entry property test duplicates (tests/settings/test_unique_lists.py).

The first seven are the good configs a hidden set of user stacks planned with: images pinned by
digest on prod, caches on both endpoints, idle timeouts of 60 and 900 s, a NetworkPolicy admitting
a load balancer's subnets and a gateway namespace, an endpoint's own SLO alerting an email and an
HTTPS address, an endpoint's own revision scaled on a histogram_quantile query with a 3600 s
window, a FIPS TLS 1.3 listener keeping its logs 3650 days.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.conftest import canary_raw, canary_revision_raw, edit, stack_raw
from tests.pinned_images import pinned

NS = "hyperpod-dpd"
CANDIDATE = f"{NS}:endpoints.candidate"
BASELINE = f"{NS}:endpoints.baseline"
# A query of one series over the candidate's TTFT buckets: the 99th percentile in seconds.
TTFT_P99_QUERY = (
    "histogram_quantile(0.99, sum by (le) "
    '(rate(vllm:time_to_first_token_seconds_bucket{namespace="inference"}[5m])))'
)


def prod_pinned() -> dict[str, Any]:
    """prod with every image pinned by digest, so the images-by-digest rule needs no lowering."""
    raw = pinned(stack_raw("prod"))
    del raw[f"{NS}:policy"]["enforcement"]
    return raw


def caches_on_both() -> dict[str, Any]:
    raw = canary_raw()
    for key in (BASELINE, CANDIDATE):
        edit(raw, f"{key}.cache", {"weights": True, "image": True})
    return raw


def idle_timeouts() -> dict[str, Any]:
    raw = canary_raw()
    edit(raw, f"{BASELINE}.idleTimeoutSeconds", 60)
    edit(raw, f"{CANDIDATE}.idleTimeoutSeconds", 900)
    return raw


def network_policy() -> dict[str, Any]:
    raw = canary_raw()
    edit(raw, f"{NS}:networkPolicy", {
        "enabled": True, "allowCidrs": ["10.0.96.0/24", "10.0.97.0/24"],
        "allowNamespaces": ["gateway"],
    })  # fmt: skip
    return raw


def own_slo_alerts() -> dict[str, Any]:
    raw = canary_raw()
    edit(raw, f"{CANDIDATE}.slo", {
        "ttftP50Ms": 600, "ttftP99Ms": 2500, "itlP99Ms": 60, "errorRate": 0.005,
        "minRequests": 2000, "baselineMargin": 0.05,
    })  # fmt: skip
    edit(raw, f"{NS}:observability.alertSubscriptions",
         ["oncall@example.com", "https://hooks.example.com/sns/alerts"])  # fmt: skip
    return raw


def own_revision_query() -> dict[str, Any]:
    raw = canary_revision_raw()
    edit(raw, f"{CANDIDATE}.autoscaling", {"decode": {
        "minReplicas": 1, "maxReplicas": 1, "query": TTFT_P99_QUERY, "target": 2,
        "scaleDownStabilizationSeconds": 3600,
    }})  # fmt: skip
    return raw


def fips_listener() -> dict[str, Any]:
    raw = canary_raw()
    edit(raw, f"{NS}:trafficListener.sslPolicy", "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04")
    edit(raw, f"{NS}:trafficListener.accessLogDays", 3650)
    return raw


def lists_dev() -> dict[str, Any]:
    """The single endpoint's lists: pinned groups, both roles' args, read-only roles, a
    self-hosted runner's labels."""
    raw = stack_raw("dev")
    edit(raw, f"{NS}:eks.viewRoleArns", ["arn:aws:iam::111122223333:role/InferenceViewer"])
    edit(raw, f"{NS}:ci", {
        "runner": "self-hosted", "labels": ["gpu-vpc", "linux"],
        "deployRoleArn": "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-deploy",
        "pulumiOrganization": "my-org",
    })  # fmt: skip
    edit(raw, f"{NS}:endpoint.groups", ["prefill", "decode"])
    edit(raw, f"{NS}:endpoint.prefill.args", ["--max-num-partial-prefills", "2"])
    edit(raw, f"{NS}:endpoint.decode.args", ["--enable-prefix-caching", "--max-num-seqs", "24"])
    return raw


def lists_canary() -> dict[str, Any]:
    """The map's endpoints' lists, the split's security groups and API key names."""
    raw = canary_raw()
    edit(raw, f"{NS}:trafficListener.allowedSecurityGroupIds",
         ["sg-0123456789abcdef0", "sg-89abcdef"])  # fmt: skip
    edit(raw, f"{NS}:trafficListener.apiKeyNames", ["first", "2027-01"])  # a rotation under way
    edit(raw, f"{BASELINE}.groups", ["colocated"])
    edit(raw, f"{CANDIDATE}.groups", ["prefill", "decode"])
    edit(raw, f"{CANDIDATE}.decode.args", ["--enable-prefix-caching"])
    edit(raw, f"{CANDIDATE}.prefill.args", ["--max-num-partial-prefills", "2"])
    return raw


# name -> (stack, the config of Pulumi.<stack>.yaml)
GOOD_STACKS: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "prod-pinned": ("prod", prod_pinned),
    "caches-on-both": ("canary", caches_on_both),
    "idle-timeouts-60-900": ("canary", idle_timeouts),
    "network-policy": ("canary", network_policy),
    "own-slo-alerts": ("canary", own_slo_alerts),
    "own-revision-query": ("canary", own_revision_query),
    "fips-listener": ("canary", fips_listener),
    "lists-dev": ("dev", lists_dev),
    "lists-canary": ("canary", lists_canary),
}
