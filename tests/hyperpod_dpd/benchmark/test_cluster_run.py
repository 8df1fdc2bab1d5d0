"""`benchmark run --stack S` without --target, the command's side of an in-cluster run
(hyperpod_dpd/benchmark/cluster_run.py): the target of an endpoint, its router's Service found
in the cluster, a refused ConfigMap taking its Job away, and following the Job (why
its pod waits, its log once, why it failed, API errors retried, Ctrl-C's advice)."""

from __future__ import annotations

import argparse

import pytest

from hyperpod_dpd.benchmark import cluster_run as cluster_run_module
from hyperpod_dpd.benchmark.run import RunError
from hyperpod_dpd.shared.kube import ClusterError
from settings import parse_settings
from tests.conftest import stack_raw
from tests.hyperpod_dpd.benchmark.fake_cluster import FakeCluster
from tests.hyperpod_dpd.benchmark.job_factory import _run


@pytest.mark.parametrize("mode", ["colocated", "dpd"])
def test_either_mode_is_loaded_through_its_router_found_in_the_cluster(tmp_path, mode):
    """One router Service (core/vocabulary.py RouterService), looked for where the operator puts
    it: an endpoint whose Service is elsewhere (or missing) is refused, naming --service."""
    raw = stack_raw("dev")
    raw["hyperpod-dpd:endpoint"] = {**raw["hyperpod-dpd:endpoint"], "mode": mode}
    settings = parse_settings(raw)
    router = {"metadata": {"name": "llama-3-3-70b-inference-routing-service",
                           "namespace": "hyperpod-inference-system"}}  # fmt: skip
    elsewhere = {"metadata": {"name": router["metadata"]["name"], "namespace": "inference"}}
    args = argparse.Namespace(service=None)
    url = cluster_run_module.in_cluster_target(
        args, settings, FakeCluster(tmp_path, {}, services=[elsewhere, router])
    )
    assert url == (
        "http://llama-3-3-70b-inference-routing-service.hyperpod-inference-system"
        ".svc.cluster.local:443/v1/chat/completions"
    )
    with pytest.raises(Exception, match="--service") as err:
        cluster_run_module.in_cluster_target(args, settings, FakeCluster(tmp_path, {}, [elsewhere]))
    assert "no Service llama-3-3-70b-inference-routing-service in hyperpod-inference-system" in (
        str(err.value)
    )


def test_a_refused_config_map_takes_its_job_away(tmp_path):
    cluster = FakeCluster(tmp_path, {})
    cluster.refuse_config_maps = True
    with pytest.raises(ClusterError, match="exceeded quota"):
        cluster_run_module.start(cluster, _run())
    assert cluster.jobs == {} and cluster.deleted == ["benchmark-20261202-031500-a1b2"]


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
    assert "kubectl -n hyperpod-dpd-benchmark describe pod p" in err
    # Each log line once and whole, the last one too.
    assert [x for x in err.splitlines() if x.startswith("  | ")] == [
        "  | line 1", "  | line 2", "  | partial line", "  | last",
    ]  # fmt: skip
    assert "failed: DeadlineExceeded: Job was active longer than specified" in err


def test_ctrl_c_says_where_the_results_will_be_and_how_to_stop_the_run():
    message = cluster_run_module.interrupted(_run())
    assert "keeps running" in message
    assert "s3://models-bkt/benchmarks/20261202-031500-a1b2/" in message
    assert "kubectl -n hyperpod-dpd-benchmark delete job benchmark-20261202-031500-a1b2" in message


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
    assert "kubectl -n hyperpod-dpd-benchmark logs -f job/benchmark-20261202-031500-a1b2" in str(
        err.value
    )


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
    assert "kubectl -n hyperpod-dpd-benchmark describe job benchmark-20261202-031500-a1b2" in err
