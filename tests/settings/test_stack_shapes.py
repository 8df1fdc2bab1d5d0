"""Every shape of `endpoints` is judged without a traceback: hypothesis draws
stacks of 1 to 6 endpoints of both modes, pinned or not, with and without `traffic` and
`autoscaling`, over instance groups of every role, and each ends as the plan ends: refused by
key (exit 2), refused by a mandatory policy (exit 1) or planned (exit 0), never anything else
(exit 3). Every key an exit 2 names is one of the drawn stack: its groups and endpoints are the
drawn ones, and the rest of its path is a key the settings declare.

The same for the newer keys (slo, alert subscriptions, caches, the NetworkPolicy, the split's
listener, the Jobs, autoscaling): values drawn at each of them, found by walking the model."""

from __future__ import annotations

import copy
import re
from typing import Annotated, Any, Literal, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from hyperpod_dpd.cli import main
from hyperpod_dpd.plan.planner import make_plan
from policies.gate import judge
from settings import ConfigError, StackSettings, parse_settings
from settings.endpoint.autoscaling import ScalingConfig, ScalingMetric
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


# One segment of a key in pulumi's property-path syntax (settings/config/errors.py full_key): .name,
# a list index [0], or a quoted map key ["ml.p5.48xlarge"] (only \" escaped).
SEGMENT = re.compile(r'\.([^.\[\]"]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def key_path(key: str) -> tuple[str, str, list[str | int]] | None:
    """'ns:top.a[0]["b.c"]' as ('ns', 'top', ['a', 0, 'b.c']); None: not a property path."""
    namespace, _, dotted = key.partition(":")
    top, rest = re.match(r"([^.\[]*)(.*)", dotted).groups()
    parts: list[str | int] = []
    at = 0
    for m in SEGMENT.finditer(rest):
        if m.start() != at:
            return None
        name, index, quoted = m.groups()
        parts.append(int(index) if index is not None else name or quoted.replace('\\"', '"'))
        at = m.end()
    return (namespace, top, parts) if at == len(rest) else None


def _written(node: Any, parts: list[str | int]) -> bool:
    """The stack file holds this path (a key of the user's own, declared or not)."""
    for part in parts:
        in_list = isinstance(part, int) and isinstance(node, list) and part < len(node)
        if not (in_list or (isinstance(part, str) and isinstance(node, dict) and part in node)):
            return False
        node = node[part]
    return True


def names_a_drawn_key(key: str, raw: dict[str, Any]) -> bool:
    """A key the refusal may name: one the stack file holds, or one the settings declare below
    the drawn map keys (a required key left out)."""
    if key in raw or key == "aws:region":
        return True
    parsed = key_path(key)
    if parsed is None or parsed[0] != NS:
        return False
    _, top, parts = parsed
    if f"{NS}:{top}" in raw and _written(raw[f"{NS}:{top}"], parts):
        return True
    field = next((f for f in StackSettings.model_fields.values() if f.alias == top), None)
    names = [p for p in parts if isinstance(p, str)]
    return field is not None and _declared(field.annotation, names, raw.get(f"{NS}:{top}"))


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(raw=stacks())
def test_any_shape_of_endpoints_ends_in_exit_0_1_or_2_by_name(raw):
    ends_by_name(raw, "dev")


def ends_by_name(raw: dict[str, Any], stack: str) -> None:
    """What the plan does before the program runs: refused naming drawn keys (exit 2), or a
    desired state of resources of distinct names that the gate judges (exit 1 or 0)."""
    try:
        s = parse_settings(raw)
    except ConfigError as error:  # exit 2
        assert error.problems
        for problem in error.problems:
            assert problem.render()
            assert names_a_drawn_key(problem.key, raw), problem.render()
        return
    desired = desired_state(s, NS, stack)
    # The engine refuses a second resource of one name (exit 3: DuplicateUrnError in the plan).
    urns = [d.urn(desired.stack, desired.project) for d in desired.resources()]
    assert len(urns) == len(set(urns)), sorted(u for u in urns if urns.count(u) > 1)
    judge(desired)  # exit 1 on a mandatory violation, else 0: never raises


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
    # A key of the user's own, declared or not, in any spelling of the path syntax.
    raw[f"{NS}:endpoints"]["e0"]["autoscaling"] = {"decode": {"": 0, "a.b": [1, {"x": 2}]}}
    assert names_a_drawn_key(f'{NS}:endpoints.e0.autoscaling.decode[""]', raw)
    assert names_a_drawn_key(f'{NS}:endpoints.e0.autoscaling.decode["a.b"][1].x', raw)
    assert not names_a_drawn_key(f'{NS}:endpoints.e0.autoscaling.decode["a.b"][2]', raw)
    assert not names_a_drawn_key(f'{NS}:endpoints.e0.autoscaling.decode["a.b"', raw)


# --- the newer keys: slo, alerts, caches, NetworkPolicy, the listener, the Jobs, autoscaling ---

# Where they live, under the stack or an endpoint ("*": a key of endpoints). Their leaves are
# found by walking the settings model, so a key added under one of them later is drawn too.
NEW_SECTIONS = (
    ("slo",), ("observability",), ("networkPolicy",), ("trafficListener",), ("jobs",),
    ("endpoints", "*", "cache"), ("endpoints", "*", "slo"), ("endpoints", "*", "autoscaling"),
)  # fmt: skip
CANARY = stack_raw("canary")
# Values users write at these keys, right and wrong, by the key's name (any other string key
# draws from all of them): drawn beside the types' own values.
WORDS = {
    "alertSubscriptions": ["oncall@example.com", "ops+llm@sub.example.org",
                           "https://hooks.example.com/sns", "mailto:oncall@example.com",
                           "On Call <oncall@example.com>", "http://hooks.example.com/sns",
                           "https://", "a@b", "oncall@EXAMPLE.com"],
    "image": ["python:3.11-slim-bookworm", "public.ecr.aws/docker/library/python:3.11",
              "registry.internal/jobs:1.4", "python@sha256:" + "0" * 64, "python:3.12-slim",
              "python:3-alpine", "python:latest", "pypy:3.10"],
    "pipIndexUrl": ["https://pypi.internal/simple", "https://nexus.internal:8443/pypi/simple",
                    "http://pypi.internal/simple", "https://user:pw@pypi.internal/simple"],
    "allowCidrs": ["10.0.96.0/24", "10.0.97.0/24", "10.0.0.0/16", "0.0.0.0/0", "10.0.96.1/24"],
    "allowedCidrs": ["10.20.0.0/16", "10.30.0.0/16", "0.0.0.0/0", "10.0.0.0/16"],
    "allowedSecurityGroupIds": ["sg-0123456789abcdef0", "sg-89abcdef", "sg-XYZ"],
    "allowNamespaces": ["gateway", "ingress-nginx", "kube-system", "Gateway"],
    "certificateArn": [
        "arn:aws:acm:us-east-2:111122223333:certificate/0b7e3c3a-5f1d-4c2e-9a8b-2d6f1e4c7a90",
        "arn:aws:acm:us-west-2:111122223333:certificate/0b7e3c3a-5f1d-4c2e-9a8b-2d6f1e4c7a90",
    ],
    "query": ["sum(vllm:num_requests_waiting)", "avg(vllm:kv_cache_usage_perc)",
              "histogram_quantile(0.99, sum by (le) "
              "(rate(vllm:time_to_first_token_seconds_bucket[5m])))",
              'sum(vllm:num_requests_running{namespace="$namespace"})',
              "avg(vllm:gpu_cache_usage_perc)", "sum by (pod) (vllm:num_requests_running)", "("],
}  # fmt: skip
ALL_WORDS = sorted({w for words in WORDS.values() for w in words})
NUMBERS = [0, 1, 2, 5, 9, 10, 16, 29, 32, 59, 60, 80, 90, 300, 900, 2000, 3600, 3601, 3650,
           3651, 4000, 4001, 2_559_999, 2_560_000, 2**31, -1]  # fmt: skip
FRACTIONS = [0.001, 0.005, 0.01, 0.069, 0.07, 0.1, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0, 1.5]


def _unwrap(annotation: Any) -> Any:
    """`X | None` and Annotated[X, ...] as X."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    options = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) not in (dict, list, Literal) and len(options) == 1:
        return _unwrap(options[0])
    return annotation


def _model_at(path: tuple[str, ...]) -> type[BaseModel]:
    model: Any = StackSettings
    for part in path:
        if part == "*":
            model = _unwrap(get_args(model)[1])
            continue
        field = next(f for f in model.model_fields.values() if f.alias == part)
        model = _unwrap(field.annotation)
    return model


def new_leaves() -> list[tuple[tuple[str, ...], Any]]:
    """(path, annotation) of every key under NEW_SECTIONS, objects included (set whole)."""
    out = []

    def walk(model: type[BaseModel], path: tuple[str, ...]) -> None:
        for field in model.model_fields.values():
            here, kind = (*path, field.alias), _unwrap(field.annotation)
            out.append((here, kind))
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                walk(kind, here)

    for section in NEW_SECTIONS:
        walk(_model_at(section), section)
    return out


NEW_LEAVES = new_leaves()


def value_for(kind: Any, name: str, depth: int = 0) -> st.SearchStrategy:
    """Values a user may write at key `name` of type `kind`: the type's own and the words above,
    rarely anything at all (tests/settings/test_hostile_stacks.py's)."""
    from tests.settings.test_hostile_stacks import HOSTILE

    origin = get_origin(kind)
    if kind is bool:
        own = st.booleans()
    elif kind is int:
        own = st.sampled_from(NUMBERS) | st.integers(-5, 5000)
    elif kind is float:
        own = st.sampled_from(FRACTIONS) | st.floats(0, 2) | st.sampled_from(NUMBERS)
    elif kind is str:
        own = st.sampled_from(WORDS.get(name, ALL_WORDS))
    elif origin is Literal:
        own = st.sampled_from(get_args(kind)) | st.just("bogus")
    elif origin is list:
        entry = value_for(_unwrap(get_args(kind)[0]), name, depth + 1)
        # Half the time an entry twice (the exit 3 of a repeated resource name, if let through).
        own = st.booleans().flatmap(
            lambda twice: st.lists(entry, min_size=int(twice), max_size=3).map(
                lambda xs: xs + xs[:1] if twice else xs
            )
        )
    elif isinstance(kind, type) and issubclass(kind, BaseModel) and depth < 2:
        own = _object(kind, depth)
        if "target" in kind.model_fields:  # a pool's autoscaling: also as a user writes it
            own = own | _scaling(kind)
    else:
        own = st.sampled_from(ALL_WORDS) | st.sampled_from(NUMBERS)
    # One in six anything at all (one_of would flatten HOSTILE's own branches and draw them as
    # often as this key's values).
    return st.integers(0, 5).flatmap(lambda i: own if i else HOSTILE)


@st.composite
def _object(draw, kind: type[BaseModel], depth: int) -> dict[str, Any]:
    fields = {f.alias: _unwrap(f.annotation) for f in kind.model_fields.values()}
    names = draw(st.lists(st.sampled_from(sorted(fields)), max_size=5, unique=True))
    return {name: draw(value_for(fields[name], name, depth + 1)) for name in names}


@st.composite
def _seed(draw, mode: str) -> dict[str, Any]:
    """A whole autoscaling of an endpoint of `mode`: per role for DPD, one pool's colocated."""
    pool = draw(_scaling(ScalingConfig))
    return {draw(st.sampled_from(("prefill", "decode"))): pool} if mode == "dpd" else pool


@st.composite
def _scaling(draw, kind: type[BaseModel]) -> dict[str, Any]:
    """A pool's autoscaling as a user writes it (a DPD endpoint's per role, under prefill or
    decode; a colocated one's at the top): one signal, a target, a window."""
    pool: dict[str, Any] = {"minReplicas": 1, "maxReplicas": draw(st.sampled_from((1, 2)))}
    if draw(st.booleans()):
        pool["metric"] = draw(st.sampled_from(get_args(ScalingMetric)))
    else:
        pool["query"] = draw(st.sampled_from(WORDS["query"]))
    pool["target"] = draw(st.sampled_from(FRACTIONS + NUMBERS[1:8]))
    pool["scaleDownStabilizationSeconds"] = draw(st.sampled_from((60, 300, 3600, 3601)))
    role = draw(st.sampled_from(("decode", "prefill", None)))
    return pool if role is None or role not in kind.model_fields else {role: pool}


def _set_drawn(draw, raw: dict[str, Any], path: tuple[str, ...], kind: Any) -> None:
    """A drawn value at `path` ("*": either endpoint), making the objects above it."""
    path = tuple(draw(st.sampled_from(("baseline", "candidate"))) if p == "*" else p
                 for p in path)  # fmt: skip
    node = raw.setdefault(f"{NS}:{path[0]}", {})
    for part in path[1:-1]:
        if not isinstance(node.get(part), dict):
            # An autoscaling a user writes whole, before tuning one of its keys.
            seeded = part == "autoscaling" and not rarely(draw)
            node[part] = draw(_seed(node.get("mode", "dpd"))) if seeded else {}
        node = node[part]
    node[path[-1]] = draw(value_for(kind, path[-1]))


def _any_leaf(draw) -> tuple[tuple[str, ...], Any]:
    section = draw(st.sampled_from(NEW_SECTIONS))  # each section as often, however large
    return draw(st.sampled_from([x for x in NEW_LEAVES if x[0][: len(section)] == section]))


@st.composite
def newer_key_stacks(draw, leaf: tuple[tuple[str, ...], Any] | None = None) -> dict[str, Any]:
    """The canary stack (two endpoints, a split, an SLO, an HTTPS listener) with newer keys set
    to drawn values: `leaf` and rarely another, or (no leaf) 1 to 4 of any."""
    raw = copy.deepcopy(CANARY)
    leaves = [leaf] if leaf else []
    others = (1 if rarely(draw) else 0) if leaf else draw(st.integers(1, 4))
    for path, kind in leaves + [_any_leaf(draw) for _ in range(others)]:
        _set_drawn(draw, raw, path, kind)
    return raw


def test_the_newer_keys_are_all_drawn():
    drawn = {".".join(path) for path, _ in NEW_LEAVES}
    for key in ("slo.errorRate", "observability.alertSubscriptions", "jobs.image",
                "jobs.pipIndexUrl", "networkPolicy.allowCidrs", "trafficListener.sslPolicy",
                "endpoints.*.cache.weights", "endpoints.*.slo.itlP99Ms",
                "endpoints.*.autoscaling.decode.scaleDownStabilizationSeconds",
                "endpoints.*.autoscaling.query"):  # fmt: skip
        assert key in drawn, key


# Each key a few times (so none is left to chance), a list more (half its draws repeat an
# entry: the exit 3 of a repeated resource name, if one got through), rarely beside another key:
# in-process, as the plan judges before the program runs.
@pytest.mark.parametrize("leaf", NEW_LEAVES, ids=[".".join(path) for path, _ in NEW_LEAVES])
def test_any_value_at_the_newer_keys_key_by_key_ends_in_exit_0_1_or_2_by_name(leaf):
    examples = 12 if get_origin(leaf[1]) is list else 4

    @settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(raw=newer_key_stacks(leaf))
    def walk(raw):
        ends_by_name(raw, "canary")

    walk()


# Fewer: each stack the settings take runs the whole program, as `hyperpod-dpd plan` does (about
# one drawn stack in five; the walk above judges every key's values before the program).
@pytest.mark.long
@settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=newer_key_stacks())
def test_any_value_at_the_newer_keys_plans_as_the_command_line_plans(raw, tmp_path_factory, capsys):
    project = write_project(tmp_path_factory.mktemp("newer"), raw, "canary")
    capsys.readouterr()
    code = main(["plan", "--stack", "canary", "--project-dir", str(project),
                 "--out", str(project / "plan")])  # fmt: skip
    out = capsys.readouterr()
    assert code in (0, 1, 2), (out.out + out.err)[-2000:]
    assert "Traceback" not in out.err and "internal error" not in out.err, out.err[-2000:]
