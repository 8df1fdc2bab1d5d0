"""Whether a pod on a GPU node reaches the EC2 instance metadata service, where it would get its
node's role (the HyperPod execution role). The GPU nodes' boot script refuses every pod's
forwarded traffic to it, whatever the pod's namespace and from its first packet
(infra/lifecycle_scripts/on_create.sh guard_pod_metadata; specs/isolation/instance_metadata.py
says why there and not by the VPC CNI's strict mode). The NetworkPolicies close it only to the
stack's namespaces, after they reach a new pod: so the check runs its pod in `default`, which
has none of them, on a GPU node (doors.py gpu_node_placement).

Any HTTP answer is the service reached (IMDSv2 answers a request without its token with 401,
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-metadata-v2-how-it-works.html);
no answer (the rule refuses the connection) is the route closed. Pure judge; door_checks.py sends."""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.prompts import PromptResult
from hyperpod_dpd.verify.results import Check
from specs.isolation.instance_metadata import METADATA_SERVICE

METADATA_CLOSED = "metadata closed on GPU nodes"
METADATA_URL = f"http://{METADATA_SERVICE.removesuffix('/32')}/latest/meta-data/"


def judge_metadata(result: PromptResult, context: dict[str, Any]) -> Check:
    where = f"a pod of {context['outsider']} on a GPU node"
    if not result.sent:
        return Check.skipped(METADATA_CLOSED, f"could not try from {where}: {result.summary}")
    if result.status is None:
        return Check.ok(METADATA_CLOSED, f"no answer to {where} ({result.summary})")
    detail = f"the instance metadata service answered {where}: HTTP {result.status}"
    return Check.failed(METADATA_CLOSED, detail, causes.NODE_METADATA_OPEN, **context)
