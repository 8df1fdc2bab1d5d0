"""`benchmark run --stack S` without --target, the whole run for real: the Job's own command
from its ConfigMap's files against a local S3 and a local streaming server that wants the
traffic split's API key, a sweep of two concurrencies, with its S3 requests held to what its
role allows, and no two of its 120 prompts sharing a beginning (the test tokenizer's few words
make many prompts alike, as a run by duration sends aiperf's 100 prompts again: a real vLLM
would answer those from its prefix cache); the shipped program alone refusing a missing
tokenizer; and on SIGTERM (its deadline) stopping aiperf and uploading what it has."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys

import boto3
import pytest

from core import api_key
from core.vocabulary import BENCHMARK_NAMESPACE
from hyperpod_dpd.benchmark import job as job_module
from hyperpod_dpd.cli import main
from settings import parse_settings
from tests.checkpoint.s3server import RecordingMotoServer
from tests.conftest import ROOT, stack_raw
from tests.hyperpod_dpd.benchmark.conftest import WORD_TOKENIZER, results_of
from tests.hyperpod_dpd.benchmark.fake_cluster import FakeCluster
from tests.hyperpod_dpd.benchmark.job_factory import REGION, _statements


@pytest.fixture(scope="module")
def s3_server():
    with RecordingMotoServer() as server:
        yield server


@pytest.fixture(scope="module")
def s3_env(s3_server):
    """What a process needs to reach the local S3 with dummy credentials (and nothing else)."""
    return {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL_S3": s3_server.endpoint, "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    }  # fmt: skip


@pytest.fixture
def bucket(s3_env, monkeypatch, request):
    for name, value in s3_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:50]
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
    return name


def _stage_tokenizer(bucket: str, prefix: str) -> None:
    s3 = boto3.client("s3", region_name=REGION)
    for path in WORD_TOKENIZER.iterdir():
        s3.put_object(Bucket=bucket, Key=f"{prefix}/{path.name}", Body=path.read_bytes())


@pytest.mark.long
@pytest.mark.xdist_group("aiperf")
def test_an_in_cluster_run_measures_the_endpoint_and_lands_in_s3_and_out(
    bucket, s3_env, s3_server, fake_server, tmp_path, monkeypatch, capsys
):
    prefix = parse_settings(stack_raw("dev")).checkpoint.effective_prefix
    _stage_tokenizer(bucket, prefix)
    # The endpoint wants the traffic split's key, which the pod takes from the stack's Secret.
    key = "k" * 48
    server = fake_server(key=key, first_token_ms=5, prefill_ms_per_token=0.1, tpot_ms=1)
    cluster = FakeCluster(tmp_path / "pod", s3_env)
    cluster.secrets[(BENCHMARK_NAMESPACE, api_key.SECRET_NAME)] = {api_key.SECRET_KEY: key}
    (tmp_path / "pod").mkdir()
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    out = tmp_path / "run"
    mark = s3_server.recorder.mark()
    code = main([
        "benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--bucket", bucket,
        "--service", server.url, "--kubeconfig", str(kubeconfig), "--poll-interval", "0.2",
        "--scenario", "D(64,8)", "--concurrency", "1,2", "--requests", "60", "--out", str(out),
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    (job,) = cluster.jobs.values()
    run_id = job["metadata"]["labels"]["hyperpod-dpd/benchmark"]
    # Progress: the pod's own log lines, as they came.
    assert f"started Job hyperpod-dpd-benchmark/benchmark-{run_id}" in err
    assert "  | tokenizer: tokenizer.json, tokenizer_config.json from s3://" in err
    assert "  | uploaded" in err
    # The results, as a local run writes them, with the stack's endpoint recorded ...
    results = results_of(out)
    assert results["label"] == "run"  # named after --out here, as a local run is
    assert results["scenario"] == "D(64,8)" and results["target"] == server.url
    assert results["endpoint"]["mode"] == "dpd" and results["endpoint"]["stack"] == "dev"
    assert results["endpoint"]["hourlyCostUsd"] > 0
    # The sweep: each level its own aiperf summary (concurrency_<c>/), each request served.
    assert list(results["levels"]) == ["1", "2"]
    for level in results["levels"].values():
        assert level["errors"] == 0 and level["requests"] == 60 and level["outputTokens"] == 8
    assert "  |   aiperf: concurrency 2: 60 requests in" in err
    # Each of the 120 prompts prefilled, none found in the server's prefix cache, each 64 tokens.
    assert server.prefix_cache() == {"queries": 120 * 64, "hits": 0}
    # ... in the bucket under benchmarks/<run id>/, and copied from there to --out.
    s3 = boto3.client("s3", region_name=REGION)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert f"benchmarks/{run_id}/results.json" in keys
    assert f"benchmarks/{run_id}/aiperf.log" in keys
    assert f"benchmarks/{run_id}/aiperf/concurrency_2/profile_export_aiperf.json" in keys
    assert (out / "aiperf.log").exists()
    assert cluster.closed
    # The key reached the endpoint (no request failed, aiperf started with it as a local run
    # starts it: run.execute) and is in no file the run wrote (all of them are in --out).
    assert not [p for p in out.rglob("*") if p.is_file() and key in p.read_text(errors="replace")]
    # What the pod did to S3 is what its role allows (moto does not enforce IAM): until the
    # command starts copying (its first list), only the tokenizer reads and the results' writes.
    requests = s3_server.recorder.since(mark, bucket)
    first_list = next(i for i, r in enumerate(requests) if r.op == "ListObjects")
    statements = _statements(f"arn:aws:s3:::{bucket}")
    for r in requests[:first_list]:
        arn = f"arn:aws:s3:::{bucket}/{r.key}"
        if r.op == "GetObject":
            assert arn in statements["ReadTokenizer"]["Resource"], r
        else:
            assert r.op in ("PutObject", "CreateMultipartUpload", "UploadPart",
                            "CompleteMultipartUpload"), r  # fmt: skip
            (allowed,) = statements["WriteResults"]["Resource"]
            assert fnmatch.fnmatch(arn, allowed) and r.key.startswith(f"benchmarks/{run_id}/"), r
    assert {r.op for r in requests[first_list:]} <= {"ListObjects", "HeadObject", "GetObject"}


def _shipped(app):
    """The Job's program as its ConfigMap ships it, and nothing else, under `app`."""
    for path, text in job_module.code_files().items():
        (app / path).parent.mkdir(parents=True, exist_ok=True)
        (app / path).write_text(text)
    return app


def test_without_a_staged_tokenizer_the_job_says_so_and_sends_nothing(bucket, s3_env, tmp_path):
    """The Job's program from its shipped files alone (no repository on the path)."""
    app = _shipped(tmp_path / "app")
    proc = subprocess.run(
        [sys.executable, "-m", "hyperpod_dpd.benchmark.in_cluster", "--target", "http://x:1",
         "--bucket", bucket, "--tokenizer-prefix", "models/none", "--tokenizer-file",
         "tokenizer.json", "--results-prefix", "benchmarks/r1", "--out", str(tmp_path / "o")],
        cwd=app, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "AWS_REGION": REGION, **s3_env},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"s3://{bucket}/models/none/" in proc.stderr and "stage the checkpoint" in proc.stderr
    assert "Traceback" not in proc.stderr
    s3 = boto3.client("s3", region_name=REGION)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)


@pytest.mark.xdist_group("aiperf")  # it starts aiperf: not beside a measuring test
def test_on_its_deadline_the_job_uploads_what_it_has(bucket, s3_env, bench_venv, tmp_path):
    """SIGTERM (the Job's deadline or deletion) reaches the program as PID 1 would get it: it
    stops aiperf and uploads the log, then exits non-zero."""
    import os
    import signal
    import threading
    import time

    app = _shipped(tmp_path / "app")
    (app / "build").mkdir()
    (app / "build" / "loadtest-venv").symlink_to(bench_venv)
    _stage_tokenizer(bucket, "models/t")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hyperpod_dpd.benchmark.in_cluster", "--target",
         "http://127.0.0.1:9", "--model", "m", "--bucket", bucket, "--tokenizer-prefix",
         "models/t", "--tokenizer-file", "tokenizer.json", "--tokenizer-file",
         "tokenizer_config.json", "--results-prefix", "benchmarks/r2",
         "--out", str(tmp_path / "o"), "--duration", "600", "--concurrency", "1"],
        cwd=app, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={"PATH": "/usr/bin:/bin", "AWS_REGION": REGION, "PYTHONUNBUFFERED": "1",
             **s3_env},
    )  # fmt: skip
    watchdog = threading.Timer(120, proc.kill)  # a hung start fails the test, not the suite
    watchdog.start()
    lines = []
    for line in proc.stdout:  # until aiperf has started
        lines.append(line)
        if line.startswith("benchmark D("):
            break
    watchdog.cancel()
    time.sleep(1)
    os.kill(proc.pid, signal.SIGTERM)
    rest, _ = proc.communicate(timeout=60)
    output = "".join(lines) + rest
    assert proc.returncode == 1, output
    assert "stopped (SIGTERM" in output and "uploaded" in output and "Traceback" not in output
    s3 = boto3.client("s3", region_name=REGION)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert "benchmarks/r2/aiperf.log" in keys
