"""`hyperpod-dpd verify`, run: the endpoint to check (from the stack, read once, or the flags),
the cluster, the prompt client, the checks (runner.py) and the report. The parser is
hyperpod_dpd/cli/verify.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.colour import Palette
from core.exits import EXIT_BAD_INPUT, UsageProblem
from core.json_output import dumps
from core.vocabulary import router_url
from hyperpod_dpd.shared.endpoints import choose_endpoint
from hyperpod_dpd.shared.kube import Cluster, ClusterError, KubeconfigError, kubeconfig_path
from hyperpod_dpd.shared.stack_outputs import OutputUnavailable, stack_output
from hyperpod_dpd.verify.prompts import HttpPromptClient, PodPromptClient
from hyperpod_dpd.verify.report import render_text, report_json
from hyperpod_dpd.verify.results import StagedCopy, Target
from hyperpod_dpd.verify.runner import EndpointNotFound, Options, verify
from settings.stack_file import read_stack


def run(args: argparse.Namespace, project_dir: Path) -> int:
    try:
        target = resolve_target(args, project_dir)
        for flag in ("timeout", "api_timeout", "poll_interval"):
            if getattr(args, flag) <= 0:
                raise UsageProblem(f"--{flag.replace('_', '-')} must be > 0")
        cluster = Cluster.from_kubeconfig(
            kubeconfig_path(args.kubeconfig), args.context, args.api_timeout
        )
    except (UsageProblem, KubeconfigError) as exc:  # a stack file's ConfigError among them
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
    return Target(args.name, args.namespace or "default", args.routing_threshold)


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


def _revision(c: Any) -> str:
    return f"{c.source}@{c.revision}" if c.revision else c.source


def prompt_client(args: argparse.Namespace, cluster: Any, target: Any) -> Any:
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
