"""`hyperpod-dpd verify`: check a deployed DPD endpoint the way the docs do by hand.

  hyperpod-dpd verify --stack dev [--kubeconfig K] [--router-url URL] [--format json]
  hyperpod-dpd verify --name N --namespace NS [--routing-threshold T] [--kubeconfig K]

Exit codes: 0 every check passed (skipped ones allowed), 1 a check failed, 2 bad input (unknown
stack, no kubeconfig, unreachable API server, endpoint not found).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.versions import VERIFY_CURL_IMAGE

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    pass


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a deployed DPD endpoint: pods, roles, routing, KV transfer (kubernetes API)",
        description=__doc__.split("\n")[0],
    )
    where = parser.add_argument_group("endpoint (--stack, or --name and --namespace)")
    where.add_argument("--stack", help="stack name: reads the endpoint from Pulumi.<stack>.yaml")
    where.add_argument("--name", help="InferenceEndpointConfig name (overrides the stack's)")
    where.add_argument("--namespace", help="endpoint namespace (default: the stack's, or default)")
    where.add_argument(
        "--routing-threshold",
        type=int,
        help="expected router threshold in tokens (default: the IEC's pdSpec.routingThreshold)",
    )
    parser.add_argument("--kubeconfig", type=Path, help="default: $KUBECONFIG or ~/.kube/config")
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
        "--prompt-namespace", help="namespace of the curl pod (default: endpoint's)"
    )
    prompts.add_argument("--curl-image", default=VERIFY_CURL_IMAGE, help="image of the curl pod")
    prompts.add_argument("--model", help="model name in requests (default: the IEC's --model)")
    prompts.add_argument(
        "--no-prompts",
        action="store_true",
        help="read-only: skip prompts and log checks after them",
    )
    limits = parser.add_argument_group("time limits (seconds)")
    limits.add_argument("--timeout", type=float, default=300.0, help="per prompt (default 300)")
    limits.add_argument(
        "--api-timeout", type=float, default=30.0, help="per Kubernetes request (default 30)"
    )
    limits.add_argument(
        "--poll-interval", type=float, default=2.0, help="between pod/log polls (default 2)"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--project-dir", type=Path)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.verify.cluster import Cluster, ClusterError, KubeconfigError, kubeconfig_path
    from hyperpod_dpd.verify.report import render_text, report_json
    from hyperpod_dpd.verify.runner import EndpointNotFound, Options, verify
    from settings import ConfigError

    try:
        target = resolve_target(args, project_dir)
        for flag in ("timeout", "api_timeout", "poll_interval"):
            if getattr(args, flag) <= 0:
                raise BadInput(f"--{flag.replace('_', '-')} must be > 0")
        cluster = Cluster.from_kubeconfig(
            kubeconfig_path(args.kubeconfig), args.context, args.api_timeout
        )
    except (BadInput, KubeconfigError) as exc:
        return _bad_input(args, str(exc))
    except ConfigError as exc:
        return _bad_input(args, str(exc))
    try:
        client = prompt_client(args, cluster, target)
        options = Options(
            send_prompts=not args.no_prompts, model=args.model, poll_interval=args.poll_interval
        )
        try:
            report = verify(cluster, target, client, options, _progress(args))
        except EndpointNotFound as exc:
            return _bad_input(args, str(exc))
        except ClusterError as exc:
            return _bad_input(args, f"cannot read the endpoint: {exc}")
    finally:
        cluster.close()
    for warning in client.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(report_json(report), indent=2))
    else:
        print(render_text(report))
    return report.exit_code


def resolve_target(args: argparse.Namespace, project_dir: Path) -> Any:
    from hyperpod_dpd.stackfile import load_stack
    from hyperpod_dpd.verify.results import Target
    from settings import parse_settings

    if args.stack:
        stack = load_stack(project_dir, args.stack)
        endpoint = parse_settings(stack.decoded(), stack.secret_keys).endpoint
        if endpoint.mode != "dpd" and not args.name:
            raise BadInput(
                f"stack {args.stack}'s endpoint {endpoint.name} is colocated (endpoint.mode "
                f"{endpoint.mode}); verify checks DPD endpoints"
            )
        return Target(
            name=args.name or endpoint.name,
            namespace=args.namespace or endpoint.namespace,
            routing_threshold=args.routing_threshold,
            fallback_threshold=endpoint.routing_threshold,
        )
    if not args.name:
        raise BadInput("say which endpoint: --stack STACK, or --name NAME [--namespace NS]")
    if args.routing_threshold is not None and args.routing_threshold < 0:
        raise BadInput("--routing-threshold must be >= 0")
    return Target(args.name, args.namespace or "default", args.routing_threshold)


def prompt_client(args: argparse.Namespace, cluster: Any, target: Any) -> Any:
    from core.vocabulary import router_url
    from hyperpod_dpd.verify.prompts import HttpPromptClient, PodPromptClient

    if args.router_url:
        return HttpPromptClient(args.router_url, args.timeout, args.insecure)
    url = router_url(target.name, target.namespace)
    return PodPromptClient(
        cluster,
        args.prompt_namespace or target.namespace,
        url,
        args.timeout,
        args.poll_interval,
        args.curl_image,
    )


def _progress(args: argparse.Namespace) -> Any:
    if args.format != "text" or not sys.stderr.isatty():
        return None
    return lambda c: print(f"  {c.result:<4}  {c.name}", file=sys.stderr)


def _bad_input(args: argparse.Namespace, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    if getattr(args, "format", "text") == "json":
        print(json.dumps({"error": message, "exitCode": EXIT_BAD_INPUT}, indent=2))
    return EXIT_BAD_INPUT
