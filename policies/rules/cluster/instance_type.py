"""hyperpod-dpd-instance-type: DPD runs only on the five NVLink + EFA RDMA instance types."""

from __future__ import annotations

from core.sizing.catalog import DPD_INSTANCE_TYPES
from policies.rules import views
from policies.rules.base import Finding, Rule

ALLOWED = ", ".join(DPD_INSTANCE_TYPES)


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        for t in views.instance_types(iec):
            if views.known(t) and t not in DPD_INSTANCE_TYPES:
                yield Finding(
                    iec.urn,
                    f"endpoint instance type {t} does not support DPD (allowed: {ALLOWED}); "
                    f"{_retype(resources)}, or set {views.endpoint_key(iec, 'mode')} to colocated",
                )
        for role in views.DPD_ROLES:
            selected = views.role_spec(iec, role).get("nodeSelector", {})
            t = selected.get("node.kubernetes.io/instance-type")
            if views.known(t) and t not in DPD_INSTANCE_TYPES:
                yield Finding(
                    iec.urn, f"{role} nodeSelector selects {t}, not a DPD type ({ALLOWED})"
                )
    # The groups DPD pods land on: those of DPD's roles, in a stack that has a DPD endpoint. A
    # colocated pool runs on any GPU type with EFA whose nodes hold its workers (the canary's
    # baseline on its own groups included): the settings refuse the others before any plan
    # (settings/placement/gpu_groups.py), and the gpu-memory policy judges it as it judges DPD's.
    if not any(views.pd_spec(iec) is not None for iec in views.endpoints(resources)):
        return
    for cluster, group in views.gpu_groups(resources):
        if views.group_role(group) not in views.DPD_ROLES:
            continue
        t = group.get("instanceType")
        if views.unknown(t):
            yield views.unchecked(
                cluster.urn, f"instance type of group {group.get('instanceGroupName')}"
            )
        if views.known(t) and t not in DPD_INSTANCE_TYPES:
            name = group.get("instanceGroupName")
            yield Finding(
                cluster.urn,
                f"instance group {name} ({views.group_role(group)}) uses {t}, which does not "
                f"support DPD (allowed: {ALLOWED}); set {views.group_key(name, 'instanceType')} "
                f"to {DPD_INSTANCE_TYPES[0]} (or another of them)",
            )


def _retype(resources) -> str:
    """Set every DPD group that is not a DPD type to the first allowed type, in one line."""
    names = [
        views.group_name(g)
        for _, g in views.gpu_groups(resources)
        if views.group_role(g) in views.DPD_ROLES  # a colocated group may keep its type
        and views.known(g.get("instanceType"))
        and g.get("instanceType") not in DPD_INSTANCE_TYPES
    ]
    keys = " and ".join(views.group_key(n, "instanceType") for n in names)
    if not keys:
        keys = views.group_key(None, "instanceType")
    return f"set {keys} to {DPD_INSTANCE_TYPES[0]} (or another of them)"


RULE = Rule(
    "hyperpod-dpd-instance-type",
    "Prefill and decode run on ml.p5/p5e/p5en/p6-b200/p6-b300.48xlarge only",
    "mandatory",
    check,
)
