"""Pod Security `baseline`, plus what the inference operator's pods need, as CEL validations of a
ValidatingAdmissionPolicy on the pods of the endpoints' namespaces (specs/isolation/admission.py).

The namespaces enforce Pod Security `privileged` (specs/isolation/pod_security.py: EFA workers
lock memory, a capability `baseline` refuses) and Pod Security admission has no per-capability
exemption, so this policy enforces `baseline` itself with exactly two additions:
- the capability IPC_LOCK (memory registration for EFA's RDMA);
- hostPath volumes under the weights cache's host path, when an endpoint caches its weights on
  the nodes' NVMe (specs/iec.py ModelCacheConfig: "pods ... mount the cache read-only", AWS
  sagemaker-hyperpod-model-deployment-model-caching).
Everything else is `baseline` as Kubernetes 1.33's Pod Security admission checks it
(kubernetes/pod-security-admission v0.33.13, policy/check_*.go of Level baseline): host
namespaces, privileged, capabilities, hostPath volumes, host ports, AppArmor, SELinux, /proc
mount, seccomp, sysctls and Windows HostProcess, over the init, regular and ephemeral
containers alike (policy/visitor.go). The lists only grow in later versions, so a newer
cluster is judged at least as strictly as its own `baseline` would be.

Each check tolerates absent fields (`has()`): an unset field is the default, which `baseline`
allows. Containers are visited as two homogeneous lists (containers and init containers are
`Container`, ephemeral ones `EphemeralContainer`): Kubernetes' CEL environment refuses list
literals that mix element types (cel.HomogeneousAggregateLiterals).
"""

from __future__ import annotations

from typing import Any

# kubernetes/pod-security-admission v0.33.13 policy/check_capabilities_baseline.go
BASELINE_CAPABILITIES = (
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
)  # fmt: skip
OPERATOR_CAPABILITIES = ("IPC_LOCK",)  # EFA: pinned memory for RDMA registration
# policy/check_sysctls.go, as of 1.32 (the newest list that version has).
SAFE_SYSCTLS = (
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
)  # fmt: skip
# policy/check_seLinuxOptions.go, as of 1.31.
SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
PROFILE_TYPES = ("RuntimeDefault", "Localhost")  # seccomp and AppArmor profiles allowed
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"

# The variables the checks read (VAP spec.variables): every container, in two typed lists.
# Every container of object `{o}`, in parentheses: CEL's `?:` binds loosest of all operators.
CONTAINERS = "({o}.spec.containers + (has({o}.spec.initContainers) ? {o}.spec.initContainers : []))"
EPHEMERAL = "(has({o}.spec.ephemeralContainers) ? {o}.spec.ephemeralContainers : [])"
VARIABLES = (
    {"name": "containers", "expression": CONTAINERS.format(o="object")},
    {"name": "ephemeralContainers", "expression": EPHEMERAL.format(o="object")},
)


def _list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def _unset_or(root: str, path: str, condition: str) -> str:
    """`root.path` is absent, or `condition` holds of it (`has()` on each step of the path)."""
    steps = path.split(".")
    absent = [f"!has({root}.{'.'.join(steps[: i + 1])})" for i in range(len(steps))]
    return "(" + " || ".join([*absent, condition]) + ")"


def _every_container(condition: str) -> str:
    """`condition` (of `c`) holds for every container, init and ephemeral ones included."""
    return (
        f"variables.containers.all(c, {condition}) && "
        f"variables.ephemeralContainers.all(c, {condition})"
    )


def _pod_and_containers(path: str, condition: str) -> str:
    """The pod's `spec.<path>` and each container's `<path>` meet `condition` (of `{x}`, the
    field) or are unset."""
    pod = _unset_or("object.spec", path, condition.format(x=f"object.spec.{path}"))
    return pod + " && " + _every_container(_unset_or("c", path, condition.format(x=f"c.{path}")))


def _selinux(x: str) -> str:
    return (
        f"(!has({x}.type) || {x}.type in {_list(SELINUX_TYPES)}) && "
        f"(!has({x}.user) || {x}.user == '') && (!has({x}.role) || {x}.role == '')"
    )


def _host_path(allowed: tuple[str, ...]) -> str:
    """No hostPath volume but under `allowed` (none: no hostPath at all)."""
    inside = " || ".join(
        f"v.hostPath.path == '{p}' || v.hostPath.path.startsWith('{p}/')" for p in allowed
    )
    ok = f"(!v.hostPath.path.contains('..') && ({inside}))" if allowed else "false"
    return f"!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath) || {ok})"


def baseline_validations(host_paths: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """One validation per `baseline` control, each with the message a refused user reads;
    `host_paths`: the directories hostPath volumes may mount (the weights caches')."""
    capabilities = _list(BASELINE_CAPABILITIES + OPERATOR_CAPABILITIES)
    checks = [
        (
            " && ".join(
                f"(!has(object.spec.{f}) || !object.spec.{f})"
                for f in ("hostNetwork", "hostPID", "hostIPC")
            ),
            "must not share the host's network, PID or IPC namespace",
        ),
        (
            _every_container(
                _unset_or("c", "securityContext.privileged", "!c.securityContext.privileged")
            ),
            "must not run a privileged container",
        ),
        (
            _every_container(
                _unset_or(
                    "c",
                    "securityContext.capabilities.add",
                    f"c.securityContext.capabilities.add.all(x, x in {capabilities})",
                )
            ),
            f"may add only Pod Security baseline's capabilities and {', '.join(OPERATOR_CAPABILITIES)}",
        ),
        (
            _host_path(host_paths),
            "may mount no hostPath volume"
            + (f" outside {', '.join(host_paths)} (the weights cache)" if host_paths else ""),
        ),
        (
            _every_container(
                "!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"
            ),
            "must not use host ports",
        ),
        (
            _pod_and_containers(
                "securityContext.appArmorProfile", f"{{x}}.type in {_list(PROFILE_TYPES)}"
            )
            + " && (!has(object.metadata.annotations) || object.metadata.annotations.all(k, "
            f"!k.startsWith('{APPARMOR_ANNOTATION}') || "
            "object.metadata.annotations[k] in ['', 'runtime/default'] || "
            "object.metadata.annotations[k].startsWith('localhost/')))",
            "must not run unconfined by AppArmor",
        ),
        (
            _pod_and_containers("securityContext.seLinuxOptions", _selinux("{x}")),
            "must not set a custom SELinux user, role or type",
        ),
        (
            _every_container(
                _unset_or(
                    "c", "securityContext.procMount", "c.securityContext.procMount == 'Default'"
                )
            ),
            "must keep the default /proc mount",
        ),
        (
            _pod_and_containers(
                "securityContext.seccompProfile", f"{{x}}.type in {_list(PROFILE_TYPES)}"
            ),
            "must not run unconfined by seccomp",
        ),
        (
            _unset_or(
                "object.spec",
                "securityContext.sysctls",
                f"object.spec.securityContext.sysctls.all(s, s.name in {_list(SAFE_SYSCTLS)})",
            ),
            "may set only Pod Security baseline's safe sysctls",
        ),
        (
            _pod_and_containers("securityContext.windowsOptions.hostProcess", "!{x}"),
            "must not run as a Windows HostProcess",
        ),
    ]
    return [
        {"expression": expression, "message": f"a pod in an endpoint's namespace {message}"}
        for expression, message in checks
    ]
