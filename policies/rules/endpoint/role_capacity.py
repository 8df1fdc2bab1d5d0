"""hyperpod-dpd-role-capacity: each DPD worker owns a whole node, so a role's replicas must not
exceed the instances of the HyperPod groups labelled with that role (extra pods stay Pending,
and the endpoint never becomes ready)."""

from __future__ import annotations

from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    nodes: dict[str, int] = {}
    for _, group in views.gpu_groups(resources):
        count = views.as_int(group.get("instanceCount"))
        if count is not None:
            role = views.group_role(group)
            nodes[role] = nodes.get(role, 0) + count
    if not nodes:
        return  # no HyperPod cluster in this stack: nothing to compare with
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            wanted = {"prefill or decode": views.as_int(views.spec(iec).get("replicas", 1)) or 1}
            have = {"prefill or decode": sum(nodes.values())}
        else:
            wanted = {
                r: views.as_int(views.role_spec(iec, r).get("replicas", 1)) or 1
                for r in views.DPD_ROLES
            }
            have = {r: nodes.get(r, 0) for r in views.DPD_ROLES}
        for role, replicas in wanted.items():
            if replicas > have[role]:
                key = views.endpoint_key(
                    iec, *(["replicas"] if " " in role else [role, "replicas"])
                )
                groups = [views.group_name(g) for _, g in views.gpu_groups(resources)
                          if " " in role or views.group_role(g) == role]  # fmt: skip
                fewer = f"lower {key} to {have[role]}, or " if have[role] else ""
                largest = max(groups, key=lambda n: nodes_of(resources, n), default=None)
                more = (f"raise {views.group_key(largest, 'instanceCount')} to "
                        f"{nodes_of(resources, largest) + replicas - have[role]}"
                        if largest else f"add a {role} instance group")  # fmt: skip
                yield Finding(
                    iec.urn,
                    f"{replicas} {role} replicas need {replicas} nodes but the {role} instance "
                    f"groups have {have[role]}: {fewer}{more}",
                )


def nodes_of(resources, name: str) -> int:
    return sum(
        views.as_int(g.get("instanceCount")) or 0
        for _, g in views.gpu_groups(resources)
        if views.group_name(g) == name
    )


RULE = Rule(
    "hyperpod-dpd-role-capacity",
    "A role's replicas fit the nodes of its instance groups (one worker per node)",
    "mandatory",
    check,
)
