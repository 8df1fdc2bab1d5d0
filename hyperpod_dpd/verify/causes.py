"""Likely cause and fix of each failed check, and the section of docs/troubleshooting.md that
explains it (symptom, cause, what to do, public sources).

Texts may hold `{name}`, `{namespace}`, `{pod}`, ... placeholders; `Cause.format(**context)`
fills the ones it is given and leaves the others visible.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from hyperpod_dpd.shared import boot_script, boot_versions, lifecycle_config


@dataclass(frozen=True)
class Cause:
    cause: str
    fix: str
    ref: str  # docs/troubleshooting.md#<anchor>: the section `verify` prints as `see:`

    def format(self, **context: object) -> Cause:
        return Cause(_fill(self.cause, context), _fill(self.fix, context), self.ref)


class _Keep(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fill(text: str, context: dict[str, object]) -> str:
    return string.Formatter().vformat(text, (), _Keep(context))


_OPERATOR_LOG = (
    "kubectl logs -n hyperpod-inference-system deployment/hyperpod-inference-controller-manager"
)

API_ERROR = Cause(
    "the Kubernetes API refused or failed the request",
    "check the kubeconfig's identity may get/list pods, read pods/log and create/delete pods "
    "in {namespace} and hyperpod-inference-system (`kubectl auth can-i`)",
    "docs/troubleshooting.md#kubernetes-api-error",
)
IEC_NOT_READY = Cause(
    "the operator has not reported the DPD deployments ready: the model is still loading (a cold "
    "S3 load of a 70B model takes 5-10 min while pods sit 2/3 Ready) or a deployment failed",
    "wait and rerun; otherwise `kubectl describe inferenceendpointconfig {name} -n {namespace}` "
    f"and the operator log (`{_OPERATOR_LOG}`)",
    "docs/troubleshooting.md#endpoint-not-ready",
)
OTHER_COPY = Cause(
    "the live endpoint loads another checkpoint copy than the one stack {stack} stages for it "
    "({key}): it serves another revision. `pulumi up` has not run since the checkpoint "
    "changed, or the InferenceEndpointConfig was edited by hand",
    "run `pulumi up --stack {stack}` so it loads the stack's copy (a new revision of a DPD "
    "endpoint rolls prefill and decode separately: serve it from a candidate endpoint behind "
    '`traffic`, docs/deploy.md "Upgrade the model without mixed versions"); if it was changed '
    "by hand, put that revision in {key} instead, or the next `pulumi up` reverts it",
    "docs/troubleshooting.md#endpoint-serves-another-copy",
)
NOT_DPD = Cause(
    "the InferenceEndpointConfig has no spec.pdSpec: it is a colocated endpoint, the operator "
    "creates no prefill/decode pods or router for it",
    "set hyperpod-dpd:endpoint.mode to dpd and run `pulumi up`",
    "docs/troubleshooting.md#not-a-dpd-endpoint",
)
NO_PODS = Cause(
    "the operator created no {role} pods for this endpoint: it does not run DPD (operator older "
    "than 3.2) or it has not reconciled the endpoint yet",
    "check the operator version (image tag of container `manager`, v3.2 or newer) and "
    "`kubectl describe inferenceendpointconfig {name} -n {namespace}`",
    "docs/troubleshooting.md#no-prefill-or-decode-pods",
)
PODS_PENDING = Cause(
    "pods pending: not enough GPU/EFA nodes (no node has free nvidia.com/gpu and "
    "vpc.amazonaws.com/efa for the pod)",
    "check instanceGroups counts (one p5-class node per prefill and per decode replica, all in "
    "the GPU AZ) and `kubectl describe pod {pod} -n {namespace}`",
    "docs/troubleshooting.md#pods-pending",
)
PODS_STARTING = Cause(
    "containers are still being created (image pull, model volume mount)",
    "wait and rerun; `kubectl describe pod {pod} -n {namespace}` shows pull or mount errors",
    "docs/troubleshooting.md#pods-starting",
)
CONTAINERS_NOT_READY = Cause(
    "containers not ready: the model is still loading, or the worker crash-loops "
    "(`EngineDeadError`: operator older than 3.2; NCCL shared-memory errors: /dev/shm too small)",
    "wait for the model load and rerun; otherwise "
    "`kubectl logs {pod} -n {namespace} -c {container} --previous`",
    "docs/troubleshooting.md#workers-not-ready",
)
POD_FAILED = Cause(
    "the pod ended ({phase}); its deployment should have replaced it",
    "`kubectl describe pod {pod} -n {namespace}` and the worker log",
    "docs/troubleshooting.md#pod-failed",
)
ROUTER_MISSING = Cause(
    "no router pod {prefix}* in hyperpod-inference-system: the operator did not create the DPD "
    "router",
    f"`kubectl get pods -n hyperpod-inference-system`; the operator log (`{_OPERATOR_LOG}`)",
    "docs/troubleshooting.md#router-missing-or-not-ready",
)
ROUTER_SERVICE_MISSING = Cause(
    "no Service {service} in {service_namespace}: the operator did not create the router's "
    "Service where the stack expects it (core/vocabulary.py RouterService), so the traffic "
    "split's TargetGroupBinding and the benchmark Job would reach nothing",
    "`kubectl get svc -A | grep {name}` to find where the operator put it; do not move traffic "
    "weight to this endpoint until the Service is there",
    "docs/troubleshooting.md#router-service-missing",
)
ROUTER_NOT_READY = Cause(
    "the router pod is not running with all containers ready",
    "`kubectl describe pod {pod} -n hyperpod-inference-system` and "
    "`kubectl logs {pod} -n hyperpod-inference-system -c router-container`",
    "docs/troubleshooting.md#router-missing-or-not-ready",
)
ROLES_SWAPPED = Cause(
    "roles wired backwards: the prefill worker is LMCache's 'receiver' and the decode worker its "
    "'sender'",
    "the operator wires the roles: keep --kv-transfer-config out of worker.args and the pdSpec "
    "role args, use operator v3.2 or newer, and re-apply the InferenceEndpointConfig",
    "docs/troubleshooting.md#roles-miswired",
)
ROLES_SAME = Cause(
    "prefill and decode both report '{role}': the operator did not wire DPD correctly",
    "keep --kv-transfer-config out of worker.args and the pdSpec role args, use operator v3.2 or "
    "newer, and re-apply the InferenceEndpointConfig",
    "docs/troubleshooting.md#roles-miswired",
)
ROLE_WRONG = Cause(
    "the {role} worker reports {found} instead of '{expected}': the roles are misconfigured",
    "keep --kv-transfer-config out of worker.args and the pdSpec role args, use operator v3.2 or "
    "newer, and re-apply the InferenceEndpointConfig",
    "docs/troubleshooting.md#roles-miswired",
)
ROLE_MISSING = Cause(
    "the {role} worker log has no 'pd_role': LMCache's PD backend did not start (no KV "
    "connector), or the startup lines are gone (container restarted, log rotated)",
    "`kubectl logs {pod} -n {namespace} -c {container} | grep pd_role`; restart the pod to get "
    "fresh startup lines; re-apply the InferenceEndpointConfig with operator v3.2 or newer",
    "docs/troubleshooting.md#no-pd-role-in-the-worker-log",
)
PROMPT_FAILED = Cause(
    "the router did not answer the prompt with a completion",
    "`kubectl logs {router_pod} -n hyperpod-inference-system -c router-container`; the worker "
    "logs; check the service {url} resolves from inside the cluster",
    "docs/troubleshooting.md#prompt-failed-or-timed-out",
)
PROMPT_TIMEOUT = Cause(
    "the prompt did not finish within {timeout:g} s",
    "raise --timeout, or port-forward the router service and pass --router-url; "
    "`kubectl describe pod` of the prompt pod shows pull or scheduling problems",
    "docs/troubleshooting.md#prompt-failed-or-timed-out",
)
PROMPT_TOO_LONG = Cause(
    "no prompt can take the disaggregated path: routingThreshold ({threshold}) is too close to "
    "--max-model-len ({max_model_len}) for a prompt well above it",
    "lower hyperpod-dpd:endpoint.routingThreshold (default 4096) or raise maxModelLen",
    "docs/troubleshooting.md#threshold-too-close-to-max-model-len",
)
NO_ROUTING_LINE = Cause(
    "the router log has no 'Conditional routing' line for this prompt: the request did not reach "
    "this router, or the router does not run conditional (DPD) routing",
    "`kubectl logs {router_pod} -n hyperpod-inference-system -c router-container --tail=50`; "
    "check the IEC has spec.pdSpec and operator v3.2 or newer",
    "docs/troubleshooting.md#no-conditional-routing",
)
SHORT_DISAGGREGATED = Cause(
    "the short prompt took the disaggregated path: the router's threshold ({router_threshold}) is "
    "below it (0 means always disaggregate; prompts under one 256-token LMCache chunk on that "
    "path can hang the decoder)",
    "set hyperpod-dpd:endpoint.routingThreshold to at least 256 (default 4096) and re-apply",
    "docs/troubleshooting.md#short-prompt-disaggregated",
)
LONG_NOT_DISAGGREGATED = Cause(
    "the long prompt went straight to the decoder: the router's threshold ({router_threshold}) is "
    "above it, or the router is not routing conditionally",
    "compare pdSpec.routingThreshold with the router log's threshold=, re-apply the "
    "InferenceEndpointConfig",
    "docs/troubleshooting.md#long-prompt-not-disaggregated",
)
KV_MISSING = Cause(
    "no 'Retrieved ... required tokens' line for the long prompt in the decoder log: no KV cache "
    "reached the decoder",
    "check the long prompt was disaggregated (router check) and the decoder log for LMCache/NIXL "
    "errors: `kubectl logs {pod} -n {namespace} -c {container} | grep -i -E 'lmcache|nixl'`",
    "docs/troubleshooting.md#kv-transfer-absent",
)
KV_RECOMPUTED = Cause(
    "the decoder recomputed the prompt instead of receiving its KV cache: prefill and decode "
    "cache keys differ (PYTHONHASHSEED unset or different, or different images)",
    "keep PYTHONHASHSEED=0 in the worker env (the stack sets it; `hyperpod-dpd plan` checks it) "
    "and one image for both roles, then restart both deployments so they run the same spec",
    "docs/troubleshooting.md#kv-transfer-absent",
)
KV_SLOW = Cause(
    "KV transfer below 1 GB/s: it went over TCP, EFA is not in use",
    "request vpc.amazonaws.com/efa in the pdSpec role resources; `kubectl describe node <node> "
    "| grep efa`; the EFA security group needs self-referencing ingress AND egress; prefill and "
    "decode nodes in one AZ",
    "docs/troubleshooting.md#kv-transfer-slow",
)
BUFFER_FULL = Cause(
    "the decoder's PD buffer is full ('Failed to allocate memory object, retrying...'): "
    "latency spikes or hangs",
    "raise hyperpod-dpd:endpoint.pdBufferSize to 16 or 32 GiB (with a lower decoder "
    "--gpu-memory-utilization if it no longer fits) or add decode replicas",
    "docs/troubleshooting.md#pd-buffer-full",
)

ENV_REWRITTEN = Cause(
    "the operator rendered the workers with other values than the endpoint asked for: it strips "
    "user LMCACHE_* variables and hard-codes its own L2 settings (aws/sagemaker-hyperpod-cli "
    "#431); without them the decoder recomputes or runs out of PD buffer",
    "compare `kubectl get pod -n {namespace} <pod> -o yaml` with the IEC's "
    "worker.environmentVariables; upgrade the operator (hyperpod-dpd:inferenceOperator), or "
    "re-apply the endpoint and check `" + _OPERATOR_LOG + "`",
    "docs/troubleshooting.md#worker-environment-rewritten",
)
STALE_DECODER = Cause(
    "a prefiller (re)started after the decoder: the decoder can keep the dead prefiller's NIXL "
    "agent and fail or stall its transfers for up to an hour (llm-d PR #2187)",
    "restart the decoders after the prefillers: `kubectl rollout restart -n {namespace} "
    "deployment -l inference.sagemaker.aws.amazon.com/dpd-role=decode`",
    "docs/troubleshooting.md#stale-decoder",
)
WORKERS_REACH_METADATA = Cause(
    "no NetworkPolicy of {namespace} keeps these worker pods from the instance metadata service "
    "(169.254.169.254): they can take their node's IAM role",
    "`kubectl get networkpolicy -n {namespace}`: the stack gives the namespace "
    "`no-instance-metadata` (Egress, every pod); missing, run `pulumi up` with this version of "
    "hyperpod-dpd (networkPolicy.enabled)",
    "docs/troubleshooting.md#workers-reach-the-instance-metadata-service",
)
WORKERS_UNGUARDED = Cause(
    "the endpoint's NetworkPolicy does not apply to these worker pods (it is missing, or the "
    "operator labels them otherwise than it selects): any pod of the cluster can reach them",
    "`kubectl get networkpolicy -n {namespace} {name}-workers -o yaml` and `kubectl get pods "
    "-n {namespace} --show-labels`. Missing: run `pulumi up` (networkPolicy.enabled). Other "
    "labels: report them to hyperpod-dpd, and keep untrusted pods off the cluster meanwhile",
    "docs/troubleshooting.md#workers-unguarded",
)
SPLIT_OPEN = Cause(
    "the traffic split forwarded a request that carried no API key: its listener forwards "
    "without checking the key (a stack applied before the key came in, or its listener or rule "
    "edited by hand)",
    "run `pulumi up --stack {stack}`; `aws elbv2 describe-rules --listener-arn ...` shows one "
    "rule with an http-header condition on Authorization and a default action answering 401",
    "docs/troubleshooting.md#split-takes-no-key-or-refuses-the-key",
)
SPLIT_KEY_REFUSED = Cause(
    "the traffic split refused the key verify sent ({key_source}): it is none of the keys the "
    "listener's rule holds (trafficListener.apiKeyNames): a key of a name since removed, "
    "another stack's, or a rotation not yet applied",
    "take the stack's key: `export HYPERPOD_DPD_API_KEY=$(pulumi stack output trafficApiKey "
    "--show-secrets --stack {stack})`; if the Secret in the cluster is stale, `pulumi up "
    "--stack {stack}` rewrites it",
    "docs/troubleshooting.md#split-takes-no-key-or-refuses-the-key",
)
SPLIT_UNREACHED = Cause(
    "no answer from the traffic split at {url}: its name does not resolve where the request "
    "came from, the client is not let in (trafficListener.allowedCidrs, "
    "allowedSecurityGroupIds; the HyperPod nodes always are), or no target is healthy",
    "resolve and reach it from the client (`curl -v {url}`); the split's target groups' "
    "health: `aws elbv2 describe-target-health`",
    "docs/troubleshooting.md#split-takes-no-key-or-refuses-the-key",
)
ROUTER_OPEN = Cause(
    "a pod of namespace {outsider} on a GPU node got an answer from the router ({url}), which "
    "asks for no API key: no NetworkPolicy of hyperpod-inference-system keeps it out (the "
    "stack's routers-ingress is missing or admits it), or the VPC CNI enforces no policies",
    "`kubectl get networkpolicy -n hyperpod-inference-system routers-ingress -o yaml`: missing, "
    "run `pulumi up --stack {stack}` (networkPolicy.enabled, the default); present, check the "
    'VPC CNI add-on enforces policies (its configuration `enableNetworkPolicy: "true"`)',
    "docs/troubleshooting.md#router-answers-outsiders",
)
OPERATOR_LB_PUBLIC = Cause(
    "the inference operator's own load balancer of this endpoint (Ingress {ingress}) is "
    "{scheme}: it would put the router, which asks for no API key, on the internet. The stack "
    "denies the load balancer controller's role every load balancer but an internal one (the "
    "role policy inference-operator-alb-internal-only), so such an Ingress gets no address, "
    "unless its load balancer was made before that deny",
    "run `pulumi up --stack {stack}`; if the Ingress has an address ({hostname}), delete it "
    "(`kubectl delete ingress -n {ingress_namespace} {ingress}`: the controller deletes its "
    "load balancer, the operator writes the Ingress again) and check no internet-facing one "
    "is left (`aws elbv2 describe-load-balancers`); report the scheme the operator asked for "
    "to AWS",
    "docs/troubleshooting.md#operator-load-balancer-answers-without-a-key",
)
OPERATOR_LB_OPEN = Cause(
    "the inference operator's own load balancer of this endpoint ({hostname}, Ingress "
    "{ingress}) answered a prompt that carried no API key: it forwards to the router, which "
    "checks none, and its security group (the controller's) admits 443 from anywhere that "
    "reaches it: every pod of the cluster, the CI runner, networks peered with the VPC. The "
    "operator's CRD has no setting for its scheme, sources or authentication",
    "treat the VPC as this door's boundary: peer or connect only trusted networks, keep "
    "untrusted pods off the cluster; clients use the split and its key, never this load "
    "balancer. verify warns (exit 0) until the operator can close it",
    "docs/troubleshooting.md#operator-load-balancer-answers-without-a-key",
)
NODE_METADATA_OPEN = Cause(
    "a pod of namespace {outsider} on a GPU node got an answer from the EC2 instance metadata "
    "service (169.254.169.254), where any pod there gets the node's role, the HyperPod "
    "execution role: the node's boot script did not close pods' route to it (the node was "
    "created before the stack's on_create.sh did, or it has no iptables)",
    "the node's /var/log/provision-hyperpod-dpd.log says which ('pod metadata guard: ...'); "
    "run `pulumi up --stack {stack}` so the bucket holds the current script, then replace the "
    "nodes created before it (`aws sagemaker batch-replace-cluster-nodes --cluster-name "
    "<cluster> --node-ids <id>`)",
    "docs/troubleshooting.md#gpu-nodes-answer-the-metadata-service",
)
# `verify --stack`'s last checks, also preflight's (hyperpod_dpd/shared/node_boot.py): each
# module compares and fills its texts (the S3 object, its bucket, the cluster and the stack).
BOOT_SCRIPT_CHANGED = Cause(boot_script.CAUSE, boot_script.FIX, boot_script.REF)
BOOT_SCRIPT_REWRITTEN = Cause(boot_versions.CAUSE, boot_versions.FIX, boot_versions.REF)
LIFECYCLE_CONFIG_CHANGED = Cause(lifecycle_config.CAUSE, lifecycle_config.FIX, lifecycle_config.REF)
