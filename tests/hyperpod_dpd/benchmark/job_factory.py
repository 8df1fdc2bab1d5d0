"""The happy-path in-cluster run of the dev stack, shared by the tests of the benchmark's
Job (its manifest, its run for real, the command that starts and follows it) and by the
manifest-schema and pinned-pip checks: `_run` (a `ClusterRun`, with any field
overridden) and `_statements` (the benchmark role's S3 statements by Sid)."""

from __future__ import annotations

import json

from hyperpod_dpd.benchmark import job as job_module
from settings import parse_settings
from specs.benchmark import TOKENIZER_FILES, benchmark_access, results_prefix
from tests.conftest import stack_raw

REGION, BUCKET_ARN = "us-east-2", "arn:aws:s3:::models-bkt"


def _run(**overrides) -> job_module.ClusterRun:
    access = benchmark_access("benchmark", parse_settings(stack_raw("dev")), BUCKET_ARN)
    fields = dict(
        run_id="20261202-031500-a1b2", namespace=access.namespace,
        service_account=access.service_account, region=REGION, bucket="models-bkt",
        tokenizer_prefix=access.tokenizer_prefix, tokenizer_files=TOKENIZER_FILES,
        results_prefix=results_prefix("20261202-031500-a1b2"),
        target="http://router.example:443/v1/chat/completions",
        workload=["--scenario", "D(4096,256)", "--concurrency", "8,16,32"],
        endpoint={"mode": "dpd"}, timeout_seconds=3600,
    )  # fmt: skip
    return job_module.ClusterRun(**(fields | overrides))


def _statements(bucket_arn: str = BUCKET_ARN) -> dict[str, dict]:
    access = benchmark_access("benchmark", parse_settings(stack_raw("dev")), bucket_arn)
    return {s["Sid"]: s for s in json.loads(access.policy.props["policy"])["Statement"]}
