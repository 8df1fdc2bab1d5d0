"""The stack's own namespaces that hold credentials (the staging Job's: write access to the model
bucket and the Hugging Face token; the benchmark's: the runner's IAM role and the split's API
key) run only the pods of Jobs the admins create, `pulumi up` and the CLI's runs among them
(specs/isolation/admission.py): the stacks' staging Jobs and their pods, a benchmark run's Job and
verify's prompt pod from an admin are admitted; the same from anyone else refused."""

from __future__ import annotations

import pytest

from core.vocabulary import BENCHMARK_NAMESPACE, JOB_TYPE, STAGING_NAMESPACE
from hyperpod_dpd.benchmark import job as benchmark_job
from hyperpod_dpd.verify.prompts import PodPromptClient, short_prompt
from tests.specs.isolation.admission_review import Request, admit
from tests.specs.isolation.conftest import ADMIN, ADMIN_GROUPS
from tests.specs.isolation.operator_pods import JOB_CONTROLLER, USER, owner, plain_pod

JOB_KIND = JOB_TYPE.rsplit(":", 1)[-1]


def _job(job, username, groups=("system:authenticated",)):
    namespace = job["metadata"]["namespace"]
    return Request("CREATE", namespace, username, job, groups=groups, group="batch",
                   resource="jobs")  # fmt: skip


def _pod_of(job):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{job['metadata']['name']}-x7k2p",
                         "ownerReferences": [owner("Job", job["metadata"]["name"], "batch/v1")]},
            "spec": job["spec"]["template"]["spec"]}  # fmt: skip


def _staging_jobs(manifests):
    jobs = [m for m in manifests if m["kind"] == JOB_KIND]
    assert jobs and {j["metadata"]["namespace"] for j in jobs} == {STAGING_NAMESPACE}
    return jobs


def test_the_staging_jobs_of_every_stack_run_from_pulumi_up(stack):
    """`pulumi up` creates them as the deploying role, an admin; the job controller their pods."""
    name, manifests = stack
    for job in _staging_jobs(manifests):
        decision = admit(manifests, _job(job, ADMIN, ADMIN_GROUPS))
        assert decision.allowed, (name, decision.messages)
        pod = Request("CREATE", STAGING_NAMESPACE, JOB_CONTROLLER, _pod_of(job))
        assert admit(manifests, pod).allowed, name


def test_nobody_else_runs_a_pod_where_the_model_bucket_is_writable(dev):
    """The checkpoint-stager's role writes the weights every endpoint loads: a pod of one's own
    there, a Job of one's own, or a copy of the stack's Job, is refused."""
    (job, *_) = _staging_jobs(dev)
    stager = plain_pod("mine", serviceAccountName="checkpoint-stager")
    decision = admit(dev, Request("CREATE", STAGING_NAMESPACE, USER, stager))
    assert not decision.allowed
    assert decision.messages == [
        f"pods in {STAGING_NAMESPACE} are created by the stack's own Jobs only, not by {USER}"
    ]
    decision = admit(dev, _job(job, USER))
    assert not decision.allowed
    assert decision.messages == [
        f"workloads in {STAGING_NAMESPACE} are made by the stack's admins (eks.adminRoleArns "
        f"and the deploying role) only: {USER} may not create them or change their pod template"
    ]


@pytest.fixture(scope="module")
def run_job():
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    return benchmark_job.job(_run(), {})


def test_a_benchmark_run_is_an_admins(dev, run_job):
    """`hyperpod-dpd benchmark run --stack` creates the Job as whoever runs it: an admin's runs;
    anyone else's would act as the runner's IAM role and hold the split's API key."""
    assert run_job["metadata"]["namespace"] == BENCHMARK_NAMESPACE
    assert admit(dev, _job(run_job, ADMIN, ADMIN_GROUPS)).allowed
    pod = Request("CREATE", BENCHMARK_NAMESPACE, JOB_CONTROLLER, _pod_of(run_job))
    assert admit(dev, pod).allowed
    assert not admit(dev, _job(run_job, USER)).allowed
    runner = plain_pod("mine", serviceAccountName=run_job["spec"]["template"]["spec"][
        "serviceAccountName"])  # fmt: skip
    assert not admit(dev, Request("CREATE", BENCHMARK_NAMESPACE, USER, runner)).allowed


def test_verifys_prompt_pod_with_the_key_is_an_admins(dev):
    client = PodPromptClient(None, BENCHMARK_NAMESPACE, "http://router:443/v1/chat/completions",
                             timeout=10, poll_interval=0.1, keyed=True)  # type: ignore[arg-type]  # fmt: skip
    pod = client.pod_manifest(short_prompt("m"), "dpd-verify-short-a1b2c3")
    assert admit(
        dev, Request("CREATE", BENCHMARK_NAMESPACE, ADMIN, pod, groups=ADMIN_GROUPS)
    ).allowed
    assert not admit(dev, Request("CREATE", BENCHMARK_NAMESPACE, USER, pod)).allowed
