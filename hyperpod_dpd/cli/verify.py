"""`hyperpod-dpd verify`: check a deployed DPD endpoint the way the docs do by hand.

  hyperpod-dpd verify --stack dev [--endpoint KEY] [--kubeconfig K] [--router-url URL] [--format json]
  hyperpod-dpd verify --name N --namespace NS [--routing-threshold T] [--kubeconfig K]

With --stack, `serves the staged copy` fails when the live IEC loads another checkpoint copy
(bucket and prefix: another revision) than the stack stages for the endpoint, and `boot script
unchanged` when the nodes' lifecycle script in S3 is not the one `pulumi up` uploaded (AWS
credentials that may read it; skipped where `pulumi stack output` does not answer). An endpoint
behind the stack's traffic split also gets `split refuses no key` and `split answers the key`: a
prompt to the split without the API key must get 401, and one with it an answer (the key from
the stack's Secret for the curl pods, from HYPERPOD_DPD_API_KEY or the stack's trafficApiKey
output with --router-url). A colocated
endpoint of the stack gets that check and `router service`: its router's Service is where the
traffic split and the benchmark Job look for it (core/vocabulary.py RouterService). Every
endpoint of the stack also gets the model's other doors tried without a key
(hyperpod_dpd/verify/doors.py): `router refuses outsiders` (a curl pod of `default` on a GPU
node must get no answer from the router's Service) and `operator load balancer` (the inference
operator's own load balancer of the endpoint must be internal and answer no prompt without a
key); both from pods, not with --router-url. From the same kind of pod, `metadata closed on GPU
nodes`: the instance metadata service must not answer a pod on a GPU node (the boot script's
rule, hyperpod_dpd/verify/node_metadata.py).

Exit codes: 0 every check passed (skipped ones allowed), 1 a check failed, 2 bad input (unknown
stack, no kubeconfig, unreachable API server, endpoint not found).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cli_inputs as inputs
from core.cli_help import described
from core.versions import VERIFY_CURL_IMAGE
from core.vocabulary import BENCHMARK_NAMESPACE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a deployed DPD endpoint: pods, router Service, roles, routing, KV transfer "
        "(kubernetes API); a colocated one: its router Service",
        description="Check a deployed DPD endpoint the way the AWS docs do by hand (pods, "
        "the router's Service, each role's flags, routing by prompt length, KV transferred "
        "rather than recomputed), through the Kubernetes API of your kubeconfig.",
    )
    described(
        parser,
        ["hyperpod-dpd verify --stack dev",
         "hyperpod-dpd verify --stack canary --endpoint candidate --format json",
         "hyperpod-dpd verify --name llama --namespace inference --no-prompts"],
        {0: "every check passed (skipped ones allowed)",
         1: "a check failed (with its cause and fix: docs/troubleshooting.md)",
         2: "bad input: unknown stack or endpoint, no kubeconfig, an API server out of reach"},
    )  # fmt: skip
    where = parser.add_argument_group("endpoint (--stack, or --name and --namespace)")
    where.add_argument(
        "--stack",
        type=inputs.stack_name,
        help="stack name: reads the endpoint from Pulumi.<stack>.yaml",
    )
    where.add_argument(
        "--endpoint",
        metavar="KEY",
        help="with --stack: which of its endpoints (a key of hyperpod-dpd:endpoints; needed when "
        "it has several)",
    )
    where.add_argument("--name", help="InferenceEndpointConfig name (overrides the stack's)")
    where.add_argument("--namespace", help="endpoint namespace (default: the stack's, or default)")
    where.add_argument(
        "--routing-threshold",
        type=int,
        help="expected router threshold in tokens (default: the IEC's pdSpec.routingThreshold)",
    )
    parser.add_argument(
        "--kubeconfig", type=inputs.input_file, help="default: $KUBECONFIG or ~/.kube/config"
    )
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    prompts = parser.add_argument_group("prompts")
    prompts.add_argument(
        "--router-url",
        help="POST prompts here directly (e.g. http://127.0.0.1:8443/v1/chat/completions after "
        "`kubectl port-forward`) instead of from a one-shot curl pod in the cluster",
    )
    prompts.add_argument(
        "--insecure", action="store_true", help="with an https --router-url: skip TLS verification"
    )
    prompts.add_argument(
        "--traffic-url",
        help="the traffic split's URL (default with --stack: https://<trafficListener."
        "domainName>/v1/chat/completions, else the stack's trafficUrl output): checked to refuse "
        "a prompt without the API key and to answer one with it",
    )
    prompts.add_argument(
        "--prompt-namespace",
        help=f"namespace of the curl pod (default: the stack's {BENCHMARK_NAMESPACE}; the "
        "endpoints' own admit only the operator's pods)",
    )
    prompts.add_argument(
        "--curl-image",
        default=VERIFY_CURL_IMAGE,
        type=inputs.image_reference,
        help="image of the curl pod (pin it: repo:tag@sha256:..., `hyperpod-dpd fetch --stack` "
        "prints the line)",
    )
    prompts.add_argument("--model", help="model name in requests (default: the IEC's --model)")
    prompts.add_argument(
        "--no-prompts",
        action="store_true",
        help="read-only: skip prompts and log checks after them",
    )
    limits = parser.add_argument_group("time limits (seconds)")
    limits.add_argument(
        "--timeout", type=inputs.finite_float, default=300.0, help="per prompt (default 300)"
    )
    limits.add_argument(
        "--api-timeout",
        type=inputs.finite_float,
        default=30.0,
        help="per Kubernetes request (default 30)",
    )
    limits.add_argument(
        "--poll-interval",
        type=inputs.finite_float,
        default=2.0,
        help="between pod/log polls (default 2)",
    )
    parser.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    parser.add_argument(
        "--project-dir", type=inputs.project_dir, help="directory of Pulumi.yaml (default: found)"
    )
    parser.set_defaults(handler=run, client_factory=None)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.verify.command import run as verify

    return verify(args, project_dir)
