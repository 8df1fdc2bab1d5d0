"""Every shape of `endpoints` is judged without a traceback: hypothesis draws
stacks of 1 to 6 endpoints of both modes, pinned or not, with and without `traffic` and
`autoscaling`, over instance groups of every role, and each ends as the plan ends: refused by
key (exit 2), refused by a mandatory policy (exit 1) or planned (exit 0), never anything else
(exit 3). Every key an exit 2 names is one of the drawn stack: its groups and endpoints are the
drawn ones, and the rest of its path is a key the settings declare."""

from __future__ import annotations

import copy
import re
from typing import Any, get_args, get_origin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from hyperpod_dpd.plan.planner import make_plan
from policies.gate import judge
from settings import ConfigError, StackSettings, parse_settings
from specs.desired import desired_state
from tests.conftest import stack_raw, write_project

NS = "hyperpod-dpd"
BASE = stack_raw("dev")
ROLES = ("prefill", "decode", "colocated", "system")
GPU_TYPES = ("ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p4d.24xlarge", "ml.g6e.12xlarge")
SYSTEM_TYPES = ("ml.m5.4xlarge", "ml.m5.large")


def rarely(draw) -> bool:
    """True one time in five: the drawn stacks are mostly ones a user means, some broken."""
    return draw(st.integers(0, 4)) == 0


@st.composite
def groups(draw) -> dict[str, dict[str, Any]]:
    out = {}
    if not rarely(draw):
        out["system"] = {"instanceType": "ml.m5.4xlarge", "instanceCount": 1, "role": "system"}
    roles = [role for role in ROLES[:3] if not rarely(draw)]  # mostly one group of each role
    roles += draw(st.lists(st.sampled_from(ROLES), max_size=3))
    for i, role in enumerate(roles):
        types = SYSTEM_TYPES if role == "system" else GPU_TYPES[: 4 if rarely(draw) else 2]
        kind = draw(st.sampled_from(types))
        out[f"{role}-{i}"] = {"instanceType": kind, "instanceCount": draw(st.integers(1, 8)),
                              "role": role}  # fmt: skip
    return out


@st.composite
def scaling(draw, pool: str) -> dict[str, Any]:
    low = draw(st.integers(0, 2))
    out: dict[str, Any] = {"minReplicas": low, "maxReplicas": draw(st.integers(max(low, 1), 4))}
    if rarely(draw):
        out["maxReplicas"] = max(low - 1, 0) or None
    if not rarely(draw):
        out["metric"] = "waiting-requests" if pool == "prefill" else "running-requests"
    else:
        out["query"] = draw(st.sampled_from(['sum(vllm:num_requests_waiting{job="x"})', "("]))
    if not rarely(draw):
        out["target"] = draw(st.integers(1, 32))
    return {k: v for k, v in out.items() if v is not None}


def pins(draw, mode: str, drawn: dict[str, dict[str, Any]]) -> list[str]:
    """One group per pool of the endpoint's roles (as a user pins), or rarely any groups."""
    names = sorted(drawn)
    if rarely(draw):
        return draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
    picked = []
    for role in ("prefill", "decode") if mode == "dpd" else ("colocated",):
        fitting = [n for n in names if drawn[n]["role"] == role]
        if fitting:
            picked.append(draw(st.sampled_from(fitting)))
    return picked or names[:1]


@st.composite
def endpoint(draw, drawn: dict[str, dict[str, Any]]) -> dict[str, Any]:
    mode = draw(st.sampled_from(("dpd", "colocated")))
    out: dict[str, Any] = {"mode": mode, "model": "llama-3.3-70b", "maxModelLen": 16384}
    out["tensorParallelSize"] = draw(st.sampled_from((4, 3, 2))) if rarely(draw) else 8
    if draw(st.booleans()):
        out["groups"] = pins(draw, mode, drawn)
    for role in ("prefill", "decode"):
        role_config: dict[str, Any] = {"replicas": draw(st.integers(1, 2))}
        if rarely(draw):
            role_config["tensorParallelSize"] = draw(st.sampled_from((1, 2, 3, 4, 8, 16)))
        if rarely(draw):
            role_config["maxNumSeqs"] = draw(st.sampled_from((16, 256, 10000)))
        out[role] = role_config
    if mode == "colocated":
        out["replicas"] = draw(st.integers(1, 2))
    if rarely(draw):
        # Both right shapes and wrong ones: per role in dpd, one pool in colocated, or crossed.
        if (mode == "dpd") != rarely(draw):
            roles = draw(st.lists(st.sampled_from(("prefill", "decode")), min_size=1, unique=True))
            out["autoscaling"] = {role: draw(scaling(role)) for role in roles}
        else:
            out["autoscaling"] = draw(scaling("colocated"))
    if rarely(draw):
        out["namespace"] = draw(st.sampled_from(("team-b", "kube-system", "cert-manager")))
    return out


@st.composite
def stacks(draw) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    del raw[f"{NS}:endpoint"]
    raw[f"{NS}:instanceGroups"] = drawn = draw(groups())
    count = draw(st.integers(1, 6))
    keys = [f"e{i}" for i in range(count)]
    endpoints = {key: draw(endpoint(drawn)) for key in keys}
    if count == 1 and draw(st.booleans()):
        raw[f"{NS}:endpoint"] = {"name": "solo", **endpoints["e0"]}  # the single-endpoint form
    else:
        raw[f"{NS}:endpoints"] = endpoints
        if draw(st.booleans()):
            behind = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=5, unique=True))
            weights = [100 // len(behind)] * len(behind)
            weights[0] += 100 - sum(weights)
            if rarely(draw):
                weights[-1] += 1  # not summing to 100
            raw[f"{NS}:traffic"] = dict(zip(behind, weights, strict=True))
    return raw


def _declared(annotation: Any, path: list[str], raw: Any) -> bool:
    """`path` under a value of type `annotation` (whose drawn value is `raw`) is a key the
    settings declare, and every map key in it is one the stack has."""
    if not path:
        return True
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is not dict and len(args) == 1:
        annotation = args[0]
    head, rest = path[0], path[1:]
    below = raw.get(head) if isinstance(raw, dict) else None
    if get_origin(annotation) is dict:
        return (
            isinstance(raw, dict)
            and head in raw
            and _declared(get_args(annotation)[1], rest, below)
        )
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = next((f for f in annotation.model_fields.values() if f.alias == head), None)
        return field is not None and _declared(field.annotation, rest, below)
    return False  # a path below a leaf


def names_a_drawn_key(key: str, raw: dict[str, Any]) -> bool:
    if key in raw or key == "aws:region":
        return True
    namespace, _, dotted = key.partition(":")
    top, *path = re.sub(r"\[\d+\]", "", dotted).split(".")
    field = next((f for f in StackSettings.model_fields.values() if f.alias == top), None)
    return (
        namespace == NS
        and field is not None
        and _declared(field.annotation, path, raw.get(f"{NS}:{top}"))
    )


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(raw=stacks())
def test_any_shape_of_endpoints_ends_in_exit_0_1_or_2_by_name(raw):
    try:
        s = parse_settings(raw)
    except ConfigError as error:  # exit 2
        assert error.problems
        for problem in error.problems:
            assert problem.render()
            assert names_a_drawn_key(problem.key, raw), problem.render()
        return
    judge(desired_state(s, NS, "dev"))  # exit 1 on a mandatory violation, else 0: never raises


# Fewer: each stack the settings take runs the whole program through the offline engine.
@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=stacks())
def test_any_shape_of_endpoints_the_settings_take_plans_whole(raw, tmp_path_factory):
    """What `hyperpod-dpd plan` runs after the settings: the program's components too, not only
    the specs the gate judges."""
    try:
        parse_settings(raw)
    except ConfigError:
        return
    project = write_project(tmp_path_factory.mktemp("shape"), raw)
    make_plan(project, "dev", project / "plan")  # a PolicyStop is a plan too: it returns


def test_the_key_check_tells_drawn_keys_from_others():
    raw = {f"{NS}:instanceGroups": {"decode-0": {}}, f"{NS}:endpoints": {"e0": {"mode": "dpd"}}}
    assert names_a_drawn_key(f"{NS}:instanceGroups.decode-0.instanceCount", raw)
    assert names_a_drawn_key(f"{NS}:endpoints.e0.autoscaling.decode.maxReplicas", raw)
    assert not names_a_drawn_key(f"{NS}:instanceGroups.decode-9.instanceCount", raw)
    assert not names_a_drawn_key(f"{NS}:endpoints.e1.mode", raw)
    assert not names_a_drawn_key(f"{NS}:endpoints.e0.nope", raw)
