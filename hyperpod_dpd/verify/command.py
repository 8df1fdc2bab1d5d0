"""`hyperpod-dpd verify`, run: the endpoint to check (from the stack, read once, or the flags),
the cluster, the prompt client, the checks (runner.py) and the report. The parser is
hyperpod_dpd/cli/verify.py."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from core import api_key
from core.colour import Palette
from core.exits import EXIT_BAD_INPUT, UsageProblem
from core.json_output import dumps
from core.vocabulary import (
    BENCHMARK_NAMESPACE,
    CHAT_COMPLETIONS_PATH,
    OPERATOR_NAMESPACE,
    router_url,
)
from hyperpod_dpd.shared import boot_script, node_boot
from hyperpod_dpd.shared.aws import client_factory
from hyperpod_dpd.shared.endpoints import choose_endpoint
from hyperpod_dpd.shared.kube import Cluster, ClusterError, KubeconfigError, kubeconfig_path
from hyperpod_dpd.shared.stack_outputs import OutputUnavailable, stack_output
from hyperpod_dpd.verify.door_checks import DoorClients, SplitClients
from hyperpod_dpd.verify.doors import OUTSIDER_CURL_SECONDS, gpu_node_placement
from hyperpod_dpd.verify.prompts import HttpPromptClient, PodPromptClient
from hyperpod_dpd.verify.report import render_text, report_json
from hyperpod_dpd.verify.results import FAIL, PASS, SKIP, Check, Split, StagedCopy, Target
from hyperpod_dpd.verify.run_state import Options
from hyperpod_dpd.verify.runner import EndpointNotFound, verify
from settings.stack_file import read_stack
from specs.isolation.routers import client_namespaces


def run(args: argparse.Namespace, project_dir: Path) -> int:
    try:
        target = resolve_target(args, project_dir)
        for flag in ("timeout", "api_timeout", "poll_interval"):
            if getattr(args, flag) <= 0:
                raise UsageProblem(f"--{flag.replace('_', '-')} must be > 0")
        cluster = Cluster.from_kubeconfig(
            kubeconfig_path(args.kubeconfig),
            args.context,
            args.api_timeout,
            "--kubeconfig" if args.kubeconfig else None,
        )
    except (UsageProblem, KubeconfigError) as exc:  # a stack file's ConfigError among them
        return _bad_input(args, str(exc))
    try:
        client = prompt_client(args, cluster, target)
        options = Options(
            send_prompts=not args.no_prompts, model=args.model, poll_interval=args.poll_interval
        )
        clients = split_clients(args, cluster, target, project_dir) if target.split else None
        # From pods in the cluster: not when the prompts go from here (--router-url).
        doors = door_clients(args, cluster) if target.doors and not args.router_url else None
        try:
            report = verify(cluster, target, client, options, _progress(args), clients, doors)
        except EndpointNotFound as exc:
            return _bad_input(args, str(exc))
        except ClusterError as exc:
            return _bad_input(args, f"cannot read the endpoint: {exc}")
    finally:
        cluster.close()
    if args.stack:  # the nodes the endpoint runs on booted with the stack's script
        for check in boot_checks(args, project_dir):
            report.checks.append(check)
            if progress := _progress(args):
                progress(check)
    for warning in client.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(dumps(report_json(report)))
    else:
        print(render_text(report))
    return report.exit_code


def resolve_target(args: argparse.Namespace, project_dir: Path) -> Any:

    key = getattr(args, "endpoint", None)
    if args.stack:
        settings = read_stack(project_dir, args.stack).settings
        entry = choose_endpoint(settings, args.stack, key)
        endpoint = entry.config
        return Target(
            name=args.name or endpoint.name,
            namespace=args.namespace or endpoint.namespace,
            routing_threshold=args.routing_threshold,
            fallback_threshold=endpoint.routing_threshold,
            colocated=endpoint.mode != "dpd" and not args.name,
            network_policy=settings.network_policy.enabled and not args.name,
            staged=staged_copy(settings, entry, args.stack, project_dir),
            split=split_of(settings, entry, args, project_dir),
            doors=not args.name,
            router_clients=(
                (OPERATOR_NAMESPACE, *client_namespaces(settings))
                if settings.network_policy.enabled
                else None
            ),
        )
    if key is not None:
        raise UsageProblem(
            f"--endpoint {key!r}: a key of the stack's endpoints, with --stack STACK; add "
            "--stack, or name the endpoint with --name NAME [--namespace NS]"
        )
    if not args.name:
        raise UsageProblem("say which endpoint: --stack STACK, or --name NAME [--namespace NS]")
    if args.routing_threshold is not None and args.routing_threshold < 0:
        raise UsageProblem("--routing-threshold must be >= 0")
    split = Split(args.traffic_url) if args.traffic_url else None
    return Target(args.name, args.namespace or "default", args.routing_threshold, split=split)


def split_of(settings: Any, entry: Any, args: argparse.Namespace, project_dir: Path) -> Any:
    """The stack's split when the endpoint is behind it (or --traffic-url names one): the URL
    its clients call, from --traffic-url, else the name the stack gives it
    (trafficListener.domainName), else the stack's trafficUrl output (the load balancer's own
    name, which only `pulumi up` knows)."""
    if args.traffic_url:
        return Split(args.traffic_url, args.stack)
    if entry.key is None or entry.key not in settings.traffic:
        return None
    name = settings.traffic_listener.domain_name
    if name is not None:
        return Split(f"https://{name}{CHAT_COMPLETIONS_PATH}", args.stack)
    try:
        return Split(stack_output(project_dir, args.stack, "trafficUrl"), args.stack)
    except OutputUnavailable as exc:
        return Split(None, args.stack, f"no trafficUrl output ({exc}); give --traffic-url URL")


def split_clients(
    args: argparse.Namespace, cluster: Any, target: Any, project_dir: Path
) -> SplitClients:
    """What sends the split's two prompts: from this machine with --router-url (the key from
    HYPERPOD_DPD_API_KEY, else the stack's output), else from one-shot pods in the cluster (the
    key from the stack's Secret in their namespace, the benchmark namespace)."""
    split = target.split
    url = split.url or ""
    if args.router_url:
        key, source, why = _local_key(split.stack, project_dir)
        keyed = HttpPromptClient(url, args.timeout, args.insecure, key) if key else None
        return SplitClients(HttpPromptClient(url, args.timeout, args.insecure), keyed, source, why)
    namespace = args.prompt_namespace or BENCHMARK_NAMESPACE  # where the stack's Secret is
    pod = dict(
        cluster=cluster, namespace=namespace, url=url, timeout=args.timeout,
        poll_interval=args.poll_interval, image=args.curl_image,
    )  # fmt: skip
    source = f"Secret {namespace}/{api_key.SECRET_NAME}"
    return SplitClients(PodPromptClient(**pod), PodPromptClient(**pod, keyed=True), source)


def door_clients(args: argparse.Namespace, cluster: Any) -> DoorClients:
    """One-shot pods that try the model's other doors without a key (doors.py): one in a
    namespace the routers do not admit, on a GPU node; one in the prompts' namespace."""
    common = dict(
        cluster=cluster, timeout=args.timeout, poll_interval=args.poll_interval,
        image=args.curl_image,
    )  # fmt: skip
    return DoorClients(
        outsider=lambda namespace, url: PodPromptClient(
            namespace=namespace,
            url=url,
            placement=gpu_node_placement(),
            curl_timeout=OUTSIDER_CURL_SECONDS,
            **common,
        ),
        inside=lambda url: PodPromptClient(
            namespace=args.prompt_namespace or BENCHMARK_NAMESPACE, url=url, **common
        ),
    )


def _local_key(stack: str, project_dir: Path) -> tuple[str | None, str, str]:
    """The key this machine presents, where it came from, and why there is none."""
    if key := os.environ.get(api_key.ENV):
        return key, api_key.ENV, ""
    why = f"no key: {api_key.ENV} is not set"
    if stack:
        try:
            key = stack_output(project_dir, stack, api_key.OUTPUT, show_secrets=True)
            return key, f"stack output {api_key.OUTPUT}", ""
        except OutputUnavailable as exc:
            why += f" and the stack's {api_key.OUTPUT} output is not at hand ({exc})"
    fix = (
        f"export {api_key.ENV}=$(pulumi stack output {api_key.OUTPUT} --show-secrets "
        f"--stack {stack or 'STACK'})"
    )
    return None, "", f"{why}; {fix}"


def staged_copy(settings: Any, entry: Any, stack: str, project_dir: Path) -> StagedCopy:
    """The copy the stack stages for `entry`; its bucket from checkpoint.bucketName, else the
    stack's modelBucket output (Pulumi generates the name), else unknown (the prefix alone is
    compared, and the check says so)."""
    c = settings.checkpoint_of(entry)
    key = (
        entry.config_key("checkpoint")
        if c is not settings.checkpoint
        else "hyperpod-dpd:checkpoint"
    )
    bucket, note = settings.checkpoint.bucket_name, ""
    if bucket is None:
        try:
            bucket = stack_output(project_dir, stack, "modelBucket")
        except OutputUnavailable as exc:
            note = f"no checkpoint.bucketName and no modelBucket output ({exc})"
    users: dict[str, list[str]] = {}
    for x in settings.entries():
        users.setdefault(settings.checkpoint_of(x).effective_prefix, []).append(x.label)
    copies = tuple(
        (
            copy.effective_prefix,
            f"{_revision(copy)} for {', '.join(users.get(copy.effective_prefix, ['no endpoint']))}",
        )
        for copy in settings.staged_checkpoints()
    )
    return StagedCopy(stack, key, c.effective_prefix, _revision(c), bucket, note, copies)


def boot_checks(args: argparse.Namespace, project_dir: Path) -> list[Check]:
    """What the nodes boot with against what the stack's `pulumi up` made: the script in S3,
    its versions since, the cluster's lifecycle configuration (hyperpod_dpd/shared/node_boot.py),
    with the caller's AWS credentials."""
    where = boot_script.deployed(project_dir, args.stack)
    factory = args.client_factory
    if factory is None:
        region = read_stack(project_dir, args.stack).settings.region
        factory = client_factory(region)
    return [
        Check(name, {"pass": PASS, "skip": SKIP}.get(v.result, FAIL), v.detail, v.cause,
              v.fix, v.ref)
        for name, v in node_boot.verdicts(where, factory)
    ]  # fmt: skip


def _revision(c: Any) -> str:
    return f"{c.source}@{c.revision}" if c.revision else c.source


def prompt_client(args: argparse.Namespace, cluster: Any, target: Any) -> Any:
    if args.router_url:
        return HttpPromptClient(args.router_url, args.timeout, args.insecure)
    url = router_url(target.name, target.namespace)
    return PodPromptClient(
        cluster,
        # A client of the endpoint, like a benchmark run: in the stack's namespace for those.
        args.prompt_namespace or BENCHMARK_NAMESPACE,
        url,
        args.timeout,
        args.poll_interval,
        args.curl_image,
    )


def _progress(args: argparse.Namespace) -> Any:
    if args.format != "text" or not sys.stderr.isatty():
        return None
    palette = Palette(sys.stderr)
    paint = {"FAIL": palette.red, "pass": palette.green}

    def show(c) -> None:
        result = paint.get(c.result, str)(f"{c.result:<4}")
        print(f"  {result}  {c.name}", file=sys.stderr)

    return show


def _bad_input(args: argparse.Namespace, message: str) -> int:
    print(f"{Palette(sys.stderr).red('error:')} {message}", file=sys.stderr)
    if getattr(args, "format", "text") == "json":
        print(dumps({"error": message, "exitCode": EXIT_BAD_INPUT}))
    return EXIT_BAD_INPUT
