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

from tests.conftest import NEW_REVISION, canary_raw, edit, stack_raw
from tests.support.pinned_images import pinned

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


# The canary stack's good configs, each an edit of it: they set keys apart from one another, so
# they also hold together (CANARY_TOGETHER, the one whole plan of them).


def caches_on_both(raw: dict[str, Any]) -> None:
    for key in (BASELINE, CANDIDATE):
        edit(raw, f"{key}.cache", {"weights": True, "image": True})


def idle_timeouts(raw: dict[str, Any]) -> None:
    edit(raw, f"{BASELINE}.idleTimeoutSeconds", 60)
    edit(raw, f"{CANDIDATE}.idleTimeoutSeconds", 900)


def network_policy(raw: dict[str, Any]) -> None:
    edit(raw, f"{NS}:networkPolicy", {
        "enabled": True, "allowCidrs": ["10.0.96.0/24", "10.0.97.0/24"],
        "allowNamespaces": ["gateway"], "clientNamespaces": ["chat-app", "batch-jobs"],
    })  # fmt: skip


def own_slo_alerts(raw: dict[str, Any]) -> None:
    edit(raw, f"{CANDIDATE}.slo", {
        "ttftP50Ms": 600, "ttftP99Ms": 2500, "itlP99Ms": 60, "errorRate": 0.005,
        "minRequests": 2000, "baselineMargin": 0.05,
    })  # fmt: skip
    edit(raw, f"{NS}:observability.alertSubscriptions",
         ["oncall@example.com", "https://hooks.example.com/sns/alerts"])  # fmt: skip


def own_revision_query(raw: dict[str, Any]) -> None:
    edit(raw, f"{CANDIDATE}.checkpoint", {"revision": NEW_REVISION})  # as canary_revision_raw
    edit(raw, f"{CANDIDATE}.autoscaling", {"decode": {
        "minReplicas": 1, "maxReplicas": 1, "query": TTFT_P99_QUERY, "target": 2,
        "scaleDownStabilizationSeconds": 3600,
    }})  # fmt: skip


def fips_listener(raw: dict[str, Any]) -> None:
    edit(raw, f"{NS}:trafficListener.sslPolicy", "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04")
    edit(raw, f"{NS}:trafficListener.accessLogDays", 3650)


def lists_canary(raw: dict[str, Any]) -> None:
    """The map's endpoints' lists, the split's security groups and API key names."""
    edit(raw, f"{NS}:trafficListener.allowedSecurityGroupIds",
         ["sg-0123456789abcdef0", "sg-89abcdef"])  # fmt: skip
    edit(raw, f"{NS}:trafficListener.apiKeyNames", ["first", "2027-01"])  # a rotation under way
    edit(raw, f"{BASELINE}.groups", ["colocated"])
    edit(raw, f"{CANDIDATE}.groups", ["prefill", "decode"])
    edit(raw, f"{CANDIDATE}.decode.args", ["--enable-prefix-caching"])
    edit(raw, f"{CANDIDATE}.prefill.args", ["--max-num-partial-prefills", "2"])


CANARY_EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "caches-on-both": caches_on_both,
    "idle-timeouts-60-900": idle_timeouts,
    "network-policy": network_policy,
    "own-slo-alerts": own_slo_alerts,
    "own-revision-query": own_revision_query,
    "fips-listener": fips_listener,
    "lists-canary": lists_canary,
}


def _canary(*edits: Callable[[dict[str, Any]], None]) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        raw = canary_raw()
        for change in edits:
            change(raw)
        return raw

    return build


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


# name -> (stack, the config of Pulumi.<stack>.yaml)
GOOD_STACKS: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "prod-pinned": ("prod", prod_pinned),
    **{name: ("canary", _canary(change)) for name, change in CANARY_EDITS.items()},
    "lists-dev": ("dev", lists_dev),
}
# Every canary config at once: the whole plan of each (the program's run is most of a plan's
# cost) made once for all of them.
CANARY_TOGETHER = ("canary", _canary(*CANARY_EDITS.values()))
