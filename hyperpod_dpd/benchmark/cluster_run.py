"""`benchmark run --stack S` without --target: the run as a Job in the stack's cluster.

1. Checks every flag and finds what the Job needs before creating anything: the stack's
   endpoint facts, the model bucket (--bucket, else `checkpoint.bucketName`, else `pulumi
   stack output modelBucket`), the endpoint's in-cluster URL (its router's Service,
   core/vocabulary.py RouterService, found in the cluster; else --service).
2. Creates the Job (hyperpod_dpd/benchmark/job.py) and its code's ConfigMap, owned by the Job
   (`--dry-run`: prints them as YAML instead, after every check, and creates nothing).
3. Follows it: the pod's state while it waits (scheduling, image pull) and its log as it runs.
4. Copies s3://<bucket>/benchmarks/<run id>/ to --out (the Job uploaded it there).

Ctrl-C stops following, not the run: the Job keeps going and uploads its results; the message
says where they will be and how to fetch or stop it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from core.problems import MISSING
from core.vocabulary import BENCHMARK_LABEL
from hyperpod_dpd.benchmark.job import (
    CONTAINER,
    ClusterRun,
    code_files,
    config_map,
    job,
    new_run_id,
    owned_by,
)
from hyperpod_dpd.benchmark.run import (
    RunError,
    endpoint_record,
    run_plan,
    stack_endpoint,
    summary,
)
from hyperpod_dpd.benchmark.scenario import BenchmarkArgError, workload_argv
from hyperpod_dpd.shared.endpoints import single_view
from hyperpod_dpd.shared.kube import ClusterError
from hyperpod_dpd.shared.stack_outputs import OutputUnavailable, stack_output
from settings import ConfigError
from settings.cluster.capacity import BENCHMARK_JOB, check_system_fits_jobs

FOLLOW_RETRIES = 6  # API errors in a row while following before giving up (the run goes on)
NO_POD_HINT_SECONDS = 60.0
_STUCK = {"ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError", "InvalidImageName"}


@dataclass
class Follow:
    """What the follower has shown so far."""

    log_chars: int = 0
    pod_state: str = ""
    waited_without_pod: float = 0.0
    hinted: bool = False


def model_bucket(args: argparse.Namespace, settings: Any, project_dir: Path) -> str:
    if args.bucket:
        return args.bucket
    if settings.checkpoint.bucket_name:
        return settings.checkpoint.bucket_name
    try:
        return stack_output(project_dir, args.stack, "modelBucket")
    except OutputUnavailable as exc:
        if exc.no_cli:
            raise BenchmarkArgError(
                "--bucket",
                MISSING,
                "the model bucket's name: given with --bucket, or read from the stack with the "
                "Pulumi CLI, which is not installed here (no `pulumi` on PATH)",
                "pass --bucket NAME (the stack's modelBucket output, e.g. from the AWS console "
                "or a machine with Pulumi), or install Pulumi (https://www.pulumi.com/docs/install/)",
            ) from None
        raise BenchmarkArgError(
            "--bucket", MISSING, f"the model bucket's name ({exc})",
            f"pass --bucket NAME (pulumi stack output modelBucket --stack {args.stack})",
        ) from None  # fmt: skip


def in_cluster_target(
    args: argparse.Namespace, settings: Any, cluster: Any, entry: Any = None
) -> str:
    """The URL the Job sends the load to: `entry`'s (None: the stack's only endpoint) router, in
    either mode (core/vocabulary.py RouterService: the one the split and verify use too), once
    the cluster shows its Service where the operator puts it."""
    from core.vocabulary import RouterService

    if args.service:
        if not args.service.startswith(("http://", "https://")):
            raise BenchmarkArgError(
                "--service", args.service, "an http:// or https:// in-cluster URL",
                "for example --service http://<svc>.<namespace>.svc.cluster.local:8080",
            )  # fmt: skip
        return args.service
    e = (entry or settings.entries()[0]).config
    router = RouterService(e.name, e.namespace)
    names = {svc.get("metadata", {}).get("name") for svc in cluster.list_services(router.namespace)}
    if router.name in names:
        return router.url()
    raise BenchmarkArgError(
        "--service", None,
        f"the router of {e.mode} endpoint {e.namespace}/{e.name}: no Service {router.name} in "
        f"{router.namespace}, where the operator creates it for an endpoint with intelligent "
        "routing (`hyperpod-dpd verify` checks it)",
        f"find the endpoint's Service with `kubectl get svc -A | grep {e.name}` and pass "
        f"--service http://<svc>.<namespace>.svc.cluster.local:<port>",
    )  # fmt: skip


def cluster_run(args: argparse.Namespace, project_dir: Path) -> int:
    from hyperpod_dpd.shared.kube import Cluster, KubeconfigError, kubeconfig_path
    from specs.benchmark import TOKENIZER_FILES, benchmark_access, results_prefix
    from specs.desired import BENCHMARK

    plan = run_plan(args)
    if args.tokenizer is not None:
        raise BenchmarkArgError(
            "--tokenizer", str(args.tokenizer), "no --tokenizer for an in-cluster run",
            "drop it: the Job reads the staged checkpoint's tokenizer from the model bucket",
        )  # fmt: skip
    if args.timeout < 1:
        raise BenchmarkArgError("--timeout", args.timeout, "minutes >= 1", "use --timeout 120")
    if args.poll_interval <= 0:
        raise BenchmarkArgError(
            "--poll-interval", args.poll_interval, "seconds > 0", "use --poll-interval 5"
        )
    settings, entry = stack_endpoint(args, project_dir)
    if problems := check_system_fits_jobs(settings.instance_groups, BENCHMARK_JOB):
        raise ConfigError(problems, source=f"Pulumi.{args.stack}.yaml for an in-cluster run")
    endpoint = endpoint_record(args, settings, entry)
    # The runner's service account lives in the namespace of the endpoint it loads; the
    # tokenizer is that endpoint's own copy's (endpoints.<key>.checkpoint, else the stack's).
    access = benchmark_access(BENCHMARK, single_view(settings, entry), "")
    bucket = model_bucket(args, settings, project_dir)
    try:
        cluster = Cluster.from_kubeconfig(kubeconfig_path(args.kubeconfig), args.context, 30.0)
    except KubeconfigError as exc:
        raise BenchmarkArgError("--kubeconfig", args.kubeconfig, "a kubeconfig of the stack's "
                                "cluster", str(exc)) from None  # fmt: skip
    try:
        run_id = new_run_id()
        run = ClusterRun(
            run_id=run_id, namespace=access.namespace, service_account=access.service_account,
            region=settings.region, bucket=bucket, tokenizer_prefix=access.tokenizer_prefix,
            tokenizer_files=TOKENIZER_FILES, results_prefix=results_prefix(run_id),
            target=in_cluster_target(args, settings, cluster, entry),
            # The label as a local run would name it (the --out here, not the pod's directory).
            workload=workload_argv(args, label=plan.label),
            endpoint=endpoint, timeout_seconds=int(args.timeout * 60),
            image=settings.jobs.image, pip_index_url=settings.jobs.pip_index_url,
        )  # fmt: skip
        runner_exists(cluster, run, args.stack)
    except ClusterError as exc:
        cluster.close()
        raise RunError(f"the cluster ({cluster.server}): {exc}") from None
    except BaseException:
        cluster.close()
        raise
    if args.dry_run:
        cluster.close()
        print(manifests_yaml(run))
        return EXIT_OK
    started = False
    try:
        start(cluster, run)
        started = True
        code = follow(cluster, run, args.poll_interval)
    except KeyboardInterrupt:
        print(interrupted(run) if started else "stopped before the Job was created",
              file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    except ClusterError as exc:
        raise RunError(f"the cluster ({cluster.server}): {exc}") from None
    finally:
        cluster.close()
    try:
        fetched = download(run, plan.out)
    except KeyboardInterrupt:
        print(f"stopped copying; the results stay in s3://{run.bucket}/{run.results_prefix}/",
              file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    results = plan.out / "results.json"
    if results.exists():
        print(summary(json.loads(results.read_text())))
    print(f"copied {fetched} files from s3://{bucket}/{run.results_prefix}/ to {plan.out}")
    if code == 0 and not results.exists():
        raise RunError(f"the Job finished but wrote no results.json; see {plan.out}")
    return code


def runner_exists(cluster: Any, run: ClusterRun, stack: str) -> None:
    """The service account the Job runs as: `pulumi up` creates it (workloads/benchmark.py).
    Without it the Job would never get a pod, and only its deadline would say so."""
    try:
        cluster.read_service_account(run.namespace, run.service_account)
    except ClusterError as exc:
        if exc.status != 404:
            raise
        raise BenchmarkArgError(
            "--stack", run.namespace, f"a stack whose cluster has service account "
            f"{run.namespace}/{run.service_account}",
            f"run `pulumi up --stack {stack}` with this version of hyperpod-dpd first (it creates the account "
            "and its role); is the kubeconfig's context the stack's cluster?",
        ) from None  # fmt: skip


def manifests_yaml(run: ClusterRun) -> str:
    """What `start` would create, as YAML documents (the ConfigMap without its owner reference:
    the Job's uid exists only once the Job does)."""
    import yaml

    files = code_files()
    docs = [job(run, files), config_map(run, files)]
    return yaml.safe_dump_all(docs, sort_keys=False, width=10**9)


def start(cluster: Any, run: ClusterRun) -> None:
    files = code_files()
    created = cluster.create_job(run.namespace, job(run, files))
    # The pod waits (ContainerCreating) until its ConfigMap exists; owned by the Job, it is
    # deleted with it. Without it the pod would wait (holding its CPUs) until the deadline.
    try:
        cluster.create_config_map(run.namespace, owned_by(config_map(run, files), created))
    except BaseException:
        cluster.delete_job(run.namespace, run.name)
        raise
    print(f"started Job {run.namespace}/{run.name} against {run.target}", file=sys.stderr)
    print(f"  results: s3://{run.bucket}/{run.results_prefix}/", file=sys.stderr)


def follow(
    cluster: Any, run: ClusterRun, poll_interval: float, sleep: Callable = time.sleep
) -> int:
    """Show the run until its Job ends: 0 succeeded, else 1 (with the reason)."""
    seen, failures = Follow(), 0
    while True:
        try:
            status = cluster.read_job(run.namespace, run.name).get("status") or {}
            pod = _pod(cluster, run)
        except ClusterError as exc:
            failures += 1
            if failures > FOLLOW_RETRIES:
                raise RunError(f"the API server stopped answering ({exc}); "
                               + interrupted(run).removeprefix("stopped following; ")) from None  # fmt: skip
            print(f"  (no answer from the API server: {exc}; retrying)", file=sys.stderr)
            sleep(poll_interval)
            continue
        failures = 0
        if pod is not None:
            _show_pod(cluster, run, pod, seen)
        else:
            _no_pod_yet(run, status, seen, poll_interval)
        if status.get("succeeded"):
            return EXIT_OK
        if status.get("failed") or _condition(status, "Failed"):
            reason = _condition(status, "Failed") or "the pod failed"
            print(f"error: Job {run.namespace}/{run.name} failed: {reason}", file=sys.stderr)
            return EXIT_FAILED
        sleep(poll_interval)


def _no_pod_yet(run: ClusterRun, status: dict[str, Any], seen: Follow, waited: float) -> None:
    """A Job without a pod for a minute: quota, an admission webhook or a missing account."""
    seen.waited_without_pod += waited
    if seen.hinted or seen.waited_without_pod < NO_POD_HINT_SECONDS:
        return
    seen.hinted = True
    conditions = "; ".join(
        f"{c.get('type')}: {c.get('reason', '')} {c.get('message', '')}".strip()
        for c in status.get("conditions") or []
    )
    print(f"  no pod yet after {seen.waited_without_pod:.0f} s{f' ({conditions})' if conditions else ''}"
          f"; `kubectl -n {run.namespace} describe job {run.name}` shows why", file=sys.stderr)  # fmt: skip


def _pod(cluster: Any, run: ClusterRun) -> dict[str, Any] | None:
    pods = cluster.list_pods(run.namespace, f"{BENCHMARK_LABEL}={run.run_id}")
    return pods[-1] if pods else None


def _condition(status: dict[str, Any], kind: str) -> str | None:
    for c in status.get("conditions") or []:
        if c.get("type") == kind and c.get("status") == "True":
            return f"{c.get('reason', '')}: {c.get('message', '')}".strip(": ")
    return None


def _show_pod(cluster: Any, run: ClusterRun, pod: dict[str, Any], seen: Follow) -> None:
    status = pod.get("status") or {}
    phase = status.get("phase", "Pending")
    detail = ""
    for c in status.get("containerStatuses") or []:
        waiting = (c.get("state") or {}).get("waiting")
        if waiting:
            detail = f"{waiting.get('reason', '')} {waiting.get('message', '')}".strip()
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            detail = f"{c.get('reason', '')}: {c.get('message', '')}"
    state = f"{phase} {detail}".strip()
    if state != seen.pod_state:
        print(f"  pod {pod['metadata']['name']}: {state}", file=sys.stderr)
        if any(reason in detail for reason in _STUCK):
            print(f"  (the Job fails after its {run.timeout_seconds // 60} min deadline; "
                  f"`kubectl -n {run.namespace} describe pod {pod['metadata']['name']}`)",
                  file=sys.stderr)  # fmt: skip
        seen.pod_state = state
    if phase in ("Running", "Succeeded", "Failed"):
        try:
            log = cluster.read_log(run.namespace, pod["metadata"]["name"], CONTAINER)
        except ClusterError:
            return  # a container that never started has no log; the Job's status says why
        # Whole lines only while it runs (the rest comes with the next read); all at the end.
        upto = len(log) if phase != "Running" else log.rfind("\n") + 1
        for line in log[seen.log_chars : upto].splitlines():
            print(f"  | {line}", file=sys.stderr)
        seen.log_chars = max(seen.log_chars, upto)


def download(run: ClusterRun, out: Path) -> int:
    """Every object the Job uploaded, at its relative path under `out`."""
    from botocore.exceptions import BotoCoreError, ClientError

    from hyperpod_dpd.shared.aws import client_factory

    prefix = f"{run.results_prefix}/"
    s3 = client_factory(run.region)("s3")
    count = 0
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=run.bucket, Prefix=prefix):
            for obj in page.get("Contents") or []:
                target = out / obj["Key"][len(prefix) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                s3.download_file(run.bucket, obj["Key"], str(target))
                count += 1
    except (BotoCoreError, ClientError) as exc:
        raise RunError(
            f"copying s3://{run.bucket}/{prefix} to {out} failed: {exc}; the results stay there "
            f"(aws s3 cp --recursive s3://{run.bucket}/{prefix} {out})"
        ) from None
    return count


def interrupted(run: ClusterRun) -> str:
    return (
        f"stopped following; Job {run.namespace}/{run.name} keeps running and uploads to "
        f"s3://{run.bucket}/{run.results_prefix}/.\n"
        f"  follow:  kubectl -n {run.namespace} logs -f job/{run.name}\n"
        f"  fetch:   aws s3 cp --recursive s3://{run.bucket}/{run.results_prefix}/ <dir>\n"
        f"  stop it: kubectl -n {run.namespace} delete job {run.name}"
    )
