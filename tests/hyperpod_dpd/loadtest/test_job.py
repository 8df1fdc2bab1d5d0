"""`benchmark run --stack S` without --target: the Job's manifest, what its role may touch, and
the whole run (the Job's own command, from its ConfigMap's files) against a local S3 and a
local streaming server."""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys

import boto3
import pytest

from core.versions import JOB_PYTHON_IMAGE
from core.vocabulary import ROLE_LABEL
from hyperpod_dpd.cli import main
from hyperpod_dpd.loadtest import cluster_run as cluster_run_module
from hyperpod_dpd.loadtest import job as job_module
from hyperpod_dpd.loadtest.run import RunError
from hyperpod_dpd.loadtest.scenario import add_workload_flags, workload_argv
from hyperpod_dpd.shared.kube import ClusterError
from settings import parse_settings
from specs.loadtest import TOKENIZER_FILES, benchmark_access, results_prefix
from tests.checkpoint.s3server import RecordingMotoServer
from tests.conftest import ROOT, stack_raw
from tests.hyperpod_dpd.loadtest.conftest import WORD_TOKENIZER, results_of
from tests.hyperpod_dpd.loadtest.fake_cluster import FakeCluster

REGION, BUCKET_ARN = "us-east-2", "arn:aws:s3:::models-bkt"
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")  # what the API server accepts as a ConfigMap key


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


def test_a_run_uses_the_stacks_image_and_mirror():
    run = _run(image="registry.internal/python:3.11-slim", pip_index_url="https://pypi.internal/s")
    (container,) = job_module.job(run, {})["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.internal/python:3.11-slim"
    assert {"name": "PIP_INDEX_URL", "value": "https://pypi.internal/s"} in container["env"]


def test_the_job_runs_the_shipped_program_on_the_system_nodes_as_the_runner():
    run = _run()
    manifest = job_module.job(run, job_module.code_files())
    spec = manifest["spec"]
    assert manifest["metadata"] == {
        "name": "benchmark-20261202-031500-a1b2", "namespace": "inference",
        "labels": {"hyperpod-dpd/benchmark": run.run_id},
    }  # fmt: skip
    assert spec["backoffLimit"] == 0  # a retry would send the load twice
    assert spec["activeDeadlineSeconds"] == 3600
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == "benchmark-runner"
    assert pod["nodeSelector"] == {ROLE_LABEL: "system"}
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == JOB_PYTHON_IMAGE
    shell, flag, script = container["command"]
    assert (shell, flag) == ("/bin/sh", "-c")
    assert "exec python -m hyperpod_dpd.loadtest.in_cluster --target" in script
    assert "--scenario 'D(4096,256)' --concurrency 8,16,32" in script
    assert {"name": "AWS_REGION", "value": REGION} in container["env"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
    }  # fmt: skip
    # A non-root pod can write its scratch volume only: the program, boto3 and the venv go there.
    (scratch,) = [m["mountPath"] for m in container["volumeMounts"] if m["name"] == "scratch"]
    assert "pip install --user" in script
    assert f"cd {scratch}/" in script
    assert {"name": "HOME", "value": f"{scratch}/home"} in container["env"]
    # Every shipped file is laid out at its path; every key is one the API server accepts.
    (code,) = [v for v in pod["volumes"] if v["name"] == "code"]
    items = code["configMap"]["items"]
    assert sorted(i["path"] for i in items) == sorted(job_module.CODE_FILES)
    config_map = job_module.config_map(run, job_module.code_files())
    assert code["configMap"]["name"] == config_map["metadata"]["name"]
    assert all(CONFIG_KEY.match(k) for k in config_map["data"])
    assert {i["key"] for i in items} == set(config_map["data"])


def test_the_job_writes_and_reads_only_what_its_role_allows():
    run = _run()
    statements = _statements()
    assert set(statements) == {"ReadTokenizer", "WriteResults"}
    (put,) = statements["WriteResults"]["Resource"]
    assert statements["WriteResults"]["Action"] == ["s3:PutObject", "s3:AbortMultipartUpload"]
    # Every object the Job uploads (results_prefix/...) is inside its one PutObject resource.
    assert fnmatch.fnmatch(f"{BUCKET_ARN}/{run.results_prefix}/results.json", put)
    assert not fnmatch.fnmatch(f"{BUCKET_ARN}/{run.tokenizer_prefix}/config.json", put)
    # It reads exactly the tokenizer files it asks for, none of the weights.
    reads = statements["ReadTokenizer"]["Resource"]
    assert reads == [f"{BUCKET_ARN}/{run.tokenizer_prefix}/{f}" for f in run.tokenizer_files]
    assert not any(r.endswith("*") or "safetensors" in r for r in reads)


def test_the_workload_flags_reach_the_job_as_given():
    parser = argparse.ArgumentParser()
    add_workload_flags(parser)
    given = parser.parse_args(
        ["--scenario", "D(512,64)", "--concurrency", "1,4", "--duration", "30", "--label", "a b"]
    )
    assert parser.parse_args(workload_argv(given)) == given


def test_the_owner_reference_makes_the_code_go_with_the_job():
    run = _run()
    created = {"metadata": {"name": run.name, "uid": "u-1"}}
    owned = job_module.owned_by(job_module.config_map(run, {}), created)
    assert owned["metadata"]["ownerReferences"] == [
        {"apiVersion": "batch/v1", "kind": "Job", "name": run.name, "uid": "u-1"}
    ]


# --- The whole run, for real ------------------------------------------------------------


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
    server = fake_server(first_token_ms=20, prefill_ms_per_token=0.1, tpot_ms=5)
    cluster = FakeCluster(tmp_path / "pod", s3_env)
    (tmp_path / "pod").mkdir()
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    out = tmp_path / "run"
    mark = s3_server.recorder.mark()
    code = main([
        "benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--bucket", bucket,
        "--service", server.url, "--kubeconfig", str(kubeconfig), "--poll-interval", "0.2",
        "--scenario", "D(64,8)", "--concurrency", "2", "--requests", "4", "--out", str(out),
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    (job,) = cluster.jobs.values()
    run_id = job["metadata"]["labels"]["hyperpod-dpd/benchmark"]
    # Progress: the pod's own log lines, as they came.
    assert f"started Job inference/benchmark-{run_id}" in err
    assert "  | tokenizer: tokenizer.json, tokenizer_config.json from s3://" in err
    assert "  | uploaded" in err
    # The results, as a local run writes them, with the stack's endpoint recorded ...
    results = results_of(out)
    assert results["label"] == "run"  # named after --out here, as a local run is
    assert results["scenario"] == "D(64,8)" and results["target"] == server.url
    assert results["endpoint"]["mode"] == "dpd" and results["endpoint"]["stack"] == "dev"
    assert results["endpoint"]["hourlyCostUsd"] > 0
    assert results["levels"]["2"]["errors"] == 0 and results["levels"]["2"]["outputTokens"] == 8
    # ... in the bucket under benchmarks/<run id>/, and copied from there to --out.
    s3 = boto3.client("s3", region_name=REGION)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert f"benchmarks/{run_id}/results.json" in keys
    assert f"benchmarks/{run_id}/aiperf.log" in keys
    assert (out / "aiperf.log").exists()
    assert cluster.closed
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
        [sys.executable, "-m", "hyperpod_dpd.loadtest.in_cluster", "--target", "http://x:1",
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


# --- What the command finds before it creates anything -----------------------------------


def _colocated(tmp_path):
    raw = stack_raw("dev")
    raw["hyperpod-dpd:endpoint"] = {**raw["hyperpod-dpd:endpoint"], "mode": "colocated"}
    return parse_settings(raw)


def test_a_colocated_endpoint_is_loaded_through_the_service_it_owns(tmp_path):
    owned = {
        "metadata": {"name": "llama-svc", "namespace": "inference",
                     "ownerReferences": [{"kind": "InferenceEndpointConfig",
                                          "name": "llama-3-3-70b"}]},
        "spec": {"ports": [{"port": 8080}]},
    }  # fmt: skip
    other = {"metadata": {"name": "x", "namespace": "inference"}, "spec": {"ports": [{"port": 1}]}}
    args = argparse.Namespace(service=None)
    settings = _colocated(tmp_path)
    cluster = FakeCluster(tmp_path, {}, services=[other, owned])
    url = cluster_run_module.in_cluster_target(args, settings, cluster)
    assert url == "http://llama-svc.inference.svc.cluster.local:8080"
    with pytest.raises(Exception, match="--service") as err:
        cluster_run_module.in_cluster_target(args, settings, FakeCluster(tmp_path, {}, [other]))
    assert "kubectl -n inference get svc" in str(err.value)


class _Scripted:
    """A cluster whose Job and pod go through the given states, one per poll."""

    def __init__(self, states):
        self.states, self.i = states, -1

    def read_job(self, namespace, name):
        self.i = min(self.i + 1, len(self.states) - 1)
        return {"status": self.states[self.i][0]}

    def list_pods(self, namespace, selector):
        pod = self.states[self.i][1]
        return [] if pod is None else [{"metadata": {"name": "p"}, "status": pod}]

    def read_log(self, namespace, pod, container):
        return self.states[self.i][2]


def test_following_shows_why_the_pod_waits_its_log_once_and_why_the_job_failed(capsys):
    pulling = {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {
        "reason": "ImagePullBackOff", "message": "pull access denied"}}}]}  # fmt: skip
    unschedulable = {"phase": "Pending", "conditions": [{"type": "PodScheduled",
        "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]}  # fmt: skip
    failed = {"failed": 1, "conditions": [{"type": "Failed", "status": "True",
        "reason": "DeadlineExceeded", "message": "Job was active longer than specified"}]}  # fmt: skip
    cluster = _Scripted([
        ({}, None, ""),
        ({}, unschedulable, ""),
        ({}, pulling, ""),
        ({}, pulling, ""),
        ({}, {"phase": "Running"}, "line 1\nline 2\npart"),
        ({}, {"phase": "Running"}, "line 1\nline 2\npartial line\n"),
        (failed, {"phase": "Failed"}, "line 1\nline 2\npartial line\nlast"),
    ])  # fmt: skip
    code = cluster_run_module.follow(cluster, _run(), 0, sleep=lambda s: None)
    err = capsys.readouterr().err
    assert code == 1
    assert "pod p: Pending Unschedulable: 0/3 nodes are available" in err
    assert err.count("ImagePullBackOff pull access denied") == 1  # shown when it changes
    assert "kubectl -n inference describe pod p" in err
    # Each log line once and whole, the last one too.
    assert [x for x in err.splitlines() if x.startswith("  | ")] == [
        "  | line 1", "  | line 2", "  | partial line", "  | last",
    ]  # fmt: skip
    assert "failed: DeadlineExceeded: Job was active longer than specified" in err


def test_ctrl_c_says_where_the_results_will_be_and_how_to_stop_the_run():
    message = cluster_run_module.interrupted(_run())
    assert "keeps running" in message
    assert "s3://models-bkt/benchmarks/20261202-031500-a1b2/" in message
    assert "kubectl -n inference delete job benchmark-20261202-031500-a1b2" in message


def test_api_errors_while_following_are_retried_then_say_the_run_goes_on(capsys):
    class Flaky(_Scripted):
        def __init__(self, states, failures):
            super().__init__(states)
            self.failures = failures

        def read_job(self, namespace, name):
            if self.failures:
                self.failures -= 1
                raise ClusterError("no answer from https://eks: timed out")
            return super().read_job(namespace, name)

    done = [({"succeeded": 1}, {"phase": "Succeeded"}, "ok\n")]
    assert cluster_run_module.follow(Flaky(done, 3), _run(), 0, sleep=lambda s: None) == 0
    assert capsys.readouterr().err.count("retrying") == 3
    with pytest.raises(RunError) as err:
        cluster_run_module.follow(Flaky(done, 100), _run(), 0, sleep=lambda s: None)
    assert "the API server stopped answering" in str(err.value)
    assert "kubectl -n inference logs -f job/benchmark-20261202-031500-a1b2" in str(err.value)


def test_a_pod_that_never_started_still_reports_why_the_job_failed(capsys):
    class NoLog(_Scripted):
        def read_log(self, namespace, pod, container):
            raise ClusterError('container "benchmark" is waiting to start', 400)

    failed = {"failed": 1, "conditions": [{"type": "Failed", "status": "True",
              "reason": "DeadlineExceeded", "message": "too long"}]}  # fmt: skip
    cluster = NoLog([(failed, {"phase": "Failed"}, "")])
    assert cluster_run_module.follow(cluster, _run(), 0, sleep=lambda s: None) == 1
    assert "failed: DeadlineExceeded: too long" in capsys.readouterr().err


def test_a_job_without_a_pod_for_a_minute_says_where_to_look(capsys):
    waiting = [({"conditions": []}, None, "")] * 30 + [({"succeeded": 1}, None, "")]
    assert cluster_run_module.follow(_Scripted(waiting), _run(), 5, sleep=lambda s: None) == 0
    err = capsys.readouterr().err
    assert err.count("no pod yet after 60 s") == 1
    assert "kubectl -n inference describe job benchmark-20261202-031500-a1b2" in err


def test_a_refused_config_map_takes_its_job_away(tmp_path):
    cluster = FakeCluster(tmp_path, {})
    cluster.refuse_config_maps = True
    with pytest.raises(ClusterError, match="exceeded quota"):
        cluster_run_module.start(cluster, _run())
    assert cluster.jobs == {} and cluster.deleted == ["benchmark-20261202-031500-a1b2"]


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
        [sys.executable, "-m", "hyperpod_dpd.loadtest.in_cluster", "--target",
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
