"""Only the inference operator's pods run in an endpoint's namespace, and only within Pod Security
`baseline` plus IPC_LOCK: the admission policies the stacks render, their CEL evaluated by a CEL
interpreter against AdmissionReview-shaped requests (tests/specs/isolation/admission_review.py),
for the operator's pods as the AWS DPD guide shows them and for pods, Deployments, ReplicaSets
and Jobs of anyone else (tests/specs/isolation/operator_pods.py)."""

from __future__ import annotations

import copy

import pytest

from core.versions import SUPPORTED_KUBERNETES_VERSIONS
from core.vocabulary import (
    ADMINS_GROUP,
    BENCHMARK_NAMESPACE,
    IEC_KIND,
    OPERATOR_NAMESPACE,
    STAGING_NAMESPACE,
)
from hyperpod_dpd.benchmark import job as benchmark_job
from tests.conftest import run_stack, stack_raw, with_cache
from tests.specs.isolation.admission_review import Request, admit
from tests.specs.isolation.conftest import ADMIN, NS, OPERATOR
from tests.specs.isolation.conftest import manifests as _manifests
from tests.specs.isolation.operator_pods import (
    CRONJOB_CONTROLLER,
    DAEMONSET_CONTROLLER,
    DEPLOYMENT_CONTROLLER,
    JOB_CONTROLLER,
    REPLICASET_CONTROLLER,
    USER,
    deployment,
    owner,
    plain_pod,
    worker_pod,
)


def _iecs(manifests):
    return [m for m in manifests if m["kind"] == IEC_KIND]


def _roles(iec):
    return ["prefill", "decode"] if "pdSpec" in iec["spec"] else ["colocated"]


def _create(obj, username, namespace=NS, groups=("system:authenticated",), **kind):
    return Request("CREATE", namespace, username, obj, groups=groups, **kind)


def _deployments(obj, username, operation="CREATE", old=None, resource="deployments"):
    return Request(operation, NS, username, obj, old, group="apps", resource=resource)


# --- The operator's pods are admitted ----------------------------------------------------------


def test_every_worker_pod_of_every_stack_is_admitted(stack):
    name, manifests = stack
    iecs = _iecs(manifests)
    assert iecs, name
    for iec in iecs:
        for role in _roles(iec):
            pod = worker_pod(iec, role)
            decision = admit(manifests, _create(pod, REPLICASET_CONTROLLER))
            assert decision.allowed, (name, iec["metadata"]["name"], role, decision.messages)


def test_a_worker_mounting_its_weights_cache_is_admitted():
    raw = with_cache(stack_raw("canary"), weights=True)
    manifests = _manifests("canary", raw)
    (candidate,) = [i for i in _iecs(manifests) if i["metadata"]["name"] == "candidate"]
    pod = worker_pod(candidate, "decode")
    assert any("hostPath" in v for v in pod["spec"]["volumes"])
    assert admit(manifests, _create(pod, REPLICASET_CONTROLLER)).allowed
    # The same volume is refused where no endpoint caches its weights.
    decision = admit(_manifests("canary"), _create(pod, REPLICASET_CONTROLLER))
    assert not decision.allowed and any("hostPath" in m for m in decision.messages)


def test_the_operator_and_the_admins_may_create_pods_themselves(dev):
    pod = plain_pod("debug")
    assert admit(dev, _create(pod, OPERATOR)).allowed
    assert admit(dev, _create(pod, ADMIN, groups=(ADMINS_GROUP, "system:authenticated"))).allowed


def test_the_controllers_make_what_the_operators_workloads_own(dev):
    """A Job's pod by the job controller; a ReplicaSet of a Deployment by the deployment
    controller; a Job of a CronJob by the cronjob controller (the workloads themselves are the
    operator's: see the refusals below)."""
    job_pod = plain_pod("warm-cache")
    job_pod["metadata"]["ownerReferences"] = [owner("Job", "warm-cache", "batch/v1")]
    assert admit(dev, _create(job_pod, JOB_CONTROLLER)).allowed
    # The DaemonSet controller's service account is spelt daemon-set-controller.
    daemon_pod = plain_pod("prepull")
    daemon_pod["metadata"]["ownerReferences"] = [owner("DaemonSet", "prepull")]
    assert admit(dev, _create(daemon_pod, DAEMONSET_CONTROLLER)).allowed
    replica_set = deployment("prefill-x", worker_pod(_iecs(dev)[0], "prefill"))
    replica_set["kind"] = "ReplicaSet"
    replica_set["metadata"]["ownerReferences"] = [owner("Deployment", "prefill-x")]
    request = _deployments(replica_set, DEPLOYMENT_CONTROLLER, resource="replicasets")
    assert admit(dev, request).allowed
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "ownerReferences":
           [owner("CronJob", "c", "batch/v1")]}, "spec": {"template": {"spec": job_pod["spec"]}}}  # fmt: skip
    request = Request("CREATE", NS, CRONJOB_CONTROLLER, job, group="batch", resource="jobs")
    assert admit(dev, request).allowed


# --- Anyone else's are refused ----------------------------------------------------------------


def test_a_user_who_may_create_pods_cannot_run_one_there(dev):
    """Not a pod of their own, not a copy of the operator's worker with its labels (which the
    workers' NetworkPolicy admits), not one claiming a ReplicaSet owner."""
    worker = worker_pod(_iecs(dev)[0], "prefill")
    for pod in (plain_pod(), worker):
        decision = admit(dev, _create(pod, USER))
        assert not decision.allowed
        assert decision.messages[0] == (
            f"pods in {NS} are created by the inference operator's workloads only, not by {USER}"
        )


def test_a_controller_creating_a_pod_for_another_kind_of_owner_is_refused(dev):
    """The replicaset controller makes pods of ReplicaSets only; a pod that names none (or a
    ReplicaSet of another API group) was not made by it for the operator."""
    pod = plain_pod()
    assert not admit(dev, _create(pod, REPLICASET_CONTROLLER)).allowed
    pod["metadata"]["ownerReferences"] = [owner("ReplicaSet", "x", "example.com/v1")]
    assert not admit(dev, _create(pod, REPLICASET_CONTROLLER)).allowed
    pod["metadata"]["ownerReferences"] = [{**owner("ReplicaSet", "x"), "controller": False}]
    assert not admit(dev, _create(pod, REPLICASET_CONTROLLER)).allowed
    pod["metadata"]["ownerReferences"] = [owner("Job", "x", "batch/v1")]
    assert not admit(dev, _create(pod, REPLICASET_CONTROLLER)).allowed


def test_the_benchmark_runners_pod_runs_in_its_own_namespace_not_an_endpoints(dev):
    """The class the runner was one member of: a Job's pod of someone else's Job. In the
    endpoint's namespace its Job is refused (only the operator makes Jobs there); in the
    benchmark namespace the job controller's pod of it runs."""
    from tests.hyperpod_dpd.benchmark.job_factory import _run

    job = benchmark_job.job(_run(), {})
    assert job["metadata"]["namespace"] == BENCHMARK_NAMESPACE
    request = Request("CREATE", NS, ADMIN, job, group="batch", resource="jobs")
    assert not admit(dev, request).allowed  # no admin group: an ordinary user's kubectl
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "r", "ownerReferences": [owner("Job", job["metadata"]["name"], "batch/v1")]},
        "spec": job["spec"]["template"]["spec"]}  # fmt: skip
    assert admit(dev, _create(pod, JOB_CONTROLLER, namespace=BENCHMARK_NAMESPACE)).allowed


def test_a_user_who_may_create_deployments_or_replicasets_or_jobs_cannot_either(dev):
    worker = worker_pod(_iecs(dev)[0], "prefill")
    made = deployment("mine", worker)
    decision = admit(dev, _deployments(made, USER))
    assert not decision.allowed
    assert decision.messages == [
        f"workloads in {NS} are made by the inference operator only: {USER} may not create "
        "them or change their pod template"
    ]
    assert admit(dev, _deployments(made, OPERATOR)).allowed
    forged = copy.deepcopy(made)
    forged["kind"] = "ReplicaSet"
    forged["metadata"]["ownerReferences"] = [owner("Deployment", "prefill-x")]
    assert not admit(dev, _deployments(forged, USER, resource="replicasets")).allowed
    for kind, resource in (("StatefulSet", "statefulsets"), ("DaemonSet", "daemonsets")):
        assert not admit(dev, _deployments({**made, "kind": kind}, USER, resource=resource)).allowed
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": made["spec"]["template"]}}  # fmt: skip
    assert not admit(dev, Request("CREATE", NS, USER, job, group="batch", resource="jobs")).allowed
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": job["spec"]}}}  # fmt: skip
    request = Request("CREATE", NS, USER, cron, group="batch", resource="cronjobs")
    assert not admit(dev, request).allowed


def test_a_user_may_scale_the_operators_deployment_but_not_change_its_pods(dev):
    """Updates that keep the pod template pass (scaling, labels, the controllers' and the
    garbage collector's bookkeeping); a changed template (another image) is refused."""
    ours = deployment("prefill-x", worker_pod(_iecs(dev)[0], "prefill"))
    scaled = copy.deepcopy(ours)
    scaled["spec"]["replicas"] = 3
    scaled["metadata"]["labels"] = {"team": "ml"}
    assert admit(dev, _deployments(scaled, USER, "UPDATE", ours)).allowed
    swapped = copy.deepcopy(ours)
    swapped["spec"]["template"]["spec"]["containers"][0]["image"] = "attacker/vllm:latest"
    assert not admit(dev, _deployments(swapped, USER, "UPDATE", ours)).allowed
    assert admit(dev, _deployments(swapped, OPERATOR, "UPDATE", ours)).allowed


def test_a_user_cannot_change_a_running_workers_image_or_debug_it(dev):
    pod = worker_pod(_iecs(dev)[0], "decode")
    relabelled = copy.deepcopy(pod)
    relabelled["metadata"]["labels"]["team"] = "ml"
    assert admit(dev, Request("UPDATE", NS, USER, relabelled, pod)).allowed
    # A queue controller lifting its scheduling gate (Kueue's) changes no container: it passes.
    gated = copy.deepcopy(pod)
    gated["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    kueue = "system:serviceaccount:kueue-system:kueue-controller-manager"
    assert admit(dev, Request("UPDATE", NS, kueue, pod, gated)).allowed
    swapped = copy.deepcopy(pod)
    swapped["spec"]["containers"][0]["image"] = "attacker/vllm:latest"
    assert not admit(dev, Request("UPDATE", NS, USER, swapped, pod)).allowed
    debugged = copy.deepcopy(pod)  # kubectl debug: an ephemeral container
    debugged["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    request = Request("UPDATE", NS, USER, debugged, pod, sub_resource="ephemeralcontainers")
    assert not admit(dev, request).allowed
    admin = Request("UPDATE", NS, ADMIN, debugged, pod, groups=(ADMINS_GROUP,),
                    sub_resource="ephemeralcontainers")  # fmt: skip
    assert admit(dev, admin).allowed
    privileged = copy.deepcopy(debugged)
    privileged["spec"]["ephemeralContainers"][0]["securityContext"] = {"privileged": True}
    admin = Request("UPDATE", NS, ADMIN, privileged, pod, groups=(ADMINS_GROUP,),
                    sub_resource="ephemeralcontainers")  # fmt: skip
    assert not admit(dev, admin).allowed


# --- Beyond baseline, refused for everyone, the operator included -------------------------------

_CONTAINER = {"name": "w", "image": "x"}
BEYOND_BASELINE = {
    "host network": {"hostNetwork": True},
    "host PID": {"hostPID": True},
    "host IPC": {"hostIPC": True},
    "privileged": {"containers": [{**_CONTAINER, "securityContext": {"privileged": True}}]},
    "privileged init container": {
        "initContainers": [{**_CONTAINER, "securityContext": {"privileged": True}}]
    },
    "SYS_ADMIN": {
        "containers": [{**_CONTAINER, "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]
    },
    "NET_RAW": {
        "containers": [{**_CONTAINER, "securityContext": {"capabilities": {"add": ["NET_RAW"]}}}]
    },
    "hostPath": {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]},
    "host port": {"containers": [{**_CONTAINER, "ports": [{"containerPort": 80, "hostPort": 80}]}]},
    "AppArmor unconfined": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
    "SELinux user": {"securityContext": {"seLinuxOptions": {"user": "system_u"}}},
    "SELinux type": {
        "containers": [{**_CONTAINER, "securityContext": {"seLinuxOptions": {"type": "spc_t"}}}]
    },
    "unmasked /proc": {
        "containers": [{**_CONTAINER, "securityContext": {"procMount": "Unmasked"}}]
    },
    "seccomp unconfined": {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
    "unsafe sysctl": {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
    "Windows HostProcess": {
        "securityContext": {"windowsOptions": {"hostProcess": True}, "runAsNonRoot": True}
    },
}


@pytest.mark.parametrize("control", sorted(BEYOND_BASELINE))
def test_what_baseline_refuses_is_refused_even_from_the_operator(dev, control):
    pod = plain_pod("w", **copy.deepcopy(BEYOND_BASELINE[control]))
    decision = admit(dev, _create(pod, OPERATOR))
    assert not decision.allowed, control
    assert all(m.startswith("a pod in an endpoint's namespace ") for m in decision.messages)


def test_an_apparmor_annotation_is_judged_like_the_field(dev):
    pod = plain_pod()
    key = "container.apparmor.security.beta.kubernetes.io/notebook"
    pod["metadata"]["annotations"] = {key: "unconfined"}
    assert not admit(dev, _create(pod, OPERATOR)).allowed
    pod["metadata"]["annotations"] = {key: "runtime/default", "other": "unconfined"}
    assert admit(dev, _create(pod, OPERATOR)).allowed


def test_what_baseline_allows_and_ipc_lock_pass(dev):
    allowed = {
        "containers": [
            {**_CONTAINER, "securityContext": {
                "capabilities": {"add": ["IPC_LOCK", "NET_BIND_SERVICE"], "drop": ["ALL"]},
                "privileged": False, "procMount": "Default",
                "seccompProfile": {"type": "RuntimeDefault"},
                "seLinuxOptions": {"type": "container_t"}},
             "ports": [{"containerPort": 80, "hostPort": 0}]},
        ],
        "securityContext": {"sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}],
                            "appArmorProfile": {"type": "RuntimeDefault"}},
        "hostNetwork": False,
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
    }  # fmt: skip
    assert admit(dev, _create(plain_pod("w", **allowed), OPERATOR)).allowed


def test_a_host_path_cannot_climb_out_of_the_weights_cache():
    manifests = _manifests("canary", with_cache(stack_raw("canary"), weights=True))
    for path in ("/opt/dlami/nvme/../../etc", "/opt/dlami/nvme-other", "/opt/dlami"):
        pod = plain_pod(volumes=[{"name": "c", "hostPath": {"path": path}}])
        assert not admit(manifests, _create(pod, OPERATOR)).allowed, path


# --- Where they apply --------------------------------------------------------------------------


def test_each_policy_binds_its_namespaces_and_nothing_else(stack):
    """The endpoint policies bind every endpoint's namespace; the stack's own pod and workload
    policies its staging and benchmark namespaces; CONNECT all of those and the operator's."""
    _, manifests = stack
    endpoints = sorted({i["metadata"]["namespace"] for i in _iecs(manifests)})
    stack_own = [BENCHMARK_NAMESPACE, STAGING_NAMESPACE]
    expected = {
        "hyperpod-dpd-endpoint-pods": endpoints,
        "hyperpod-dpd-endpoint-workloads": endpoints,
        "hyperpod-dpd-endpoint-models": endpoints,
        "hyperpod-dpd-stack-pods": sorted(stack_own),
        "hyperpod-dpd-stack-workloads": sorted(stack_own),
        "hyperpod-dpd-pod-connect": sorted({*endpoints, *stack_own, OPERATOR_NAMESPACE}),
    }
    bound = {}
    for b in (m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"):
        assert b["spec"]["validationActions"] == ["Deny"]
        (expression,) = b["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        bound[b["spec"]["policyName"]] = sorted(expression["values"])
    assert bound == expected
    for namespace in ("team-b", OPERATOR_NAMESPACE):
        assert admit(manifests, _create(plain_pod(), USER, namespace=namespace)).allowed


def test_an_endpoint_in_default_binds_default():
    raw = stack_raw("dev")
    del raw["hyperpod-dpd:endpoint"]["namespace"]
    manifests = _manifests("dev", raw)
    assert not admit(manifests, _create(plain_pod(), USER, namespace="default")).allowed


def test_every_offered_kubernetes_version_serves_admission_policies_v1():
    """admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy is GA in 1.30
    (https://kubernetes.io/blog/2024/04/24/validating-admission-policy-ga/); an older offered
    version would refuse the stack's manifests at `pulumi up`."""
    for version in SUPPORTED_KUBERNETES_VERSIONS:
        assert tuple(int(x) for x in version.split(".")) >= (1, 30), version


def test_the_deploying_and_admin_roles_are_in_the_admins_group():
    run = run_stack(stack_raw("dev"))
    entries = {r.name: r.inputs for r in run.of_type("aws:eks/accessEntry:AccessEntry")}
    admins = [e for n, e in entries.items() if n.startswith("eks-admin-") or n == "eks-deployer"]
    assert admins and all(e.get("kubernetesGroups") == [ADMINS_GROUP] for e in admins)
    viewers = [e for n, e in entries.items() if n.startswith("eks-view-")]
    assert viewers and all(not e.get("kubernetesGroups") for e in viewers)
