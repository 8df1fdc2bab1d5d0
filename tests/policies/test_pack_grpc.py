"""The CrossGuard pack as the Pulumi CLI runs it, over the Analyzer gRPC API.

The CLI starts a local Python pack as `<pack>/venv/bin/python -u -m pulumi.policy <engine>
<pack>` with the pack directory as working directory and no PYTHONPATH (pulumi/pulumi
pkg/resource/plugin, the analyzer plugin host), reads the port it prints, then calls
GetAnalyzerInfo, Configure, ConfigureStack and AnalyzeStack. Resource properties travel as the
engine marshals them for analyzers (pkg/resource/plugin/analyzer_plugin.go: KeepUnknowns and
KeepSecrets): a `google.protobuf.Struct`, so every number is a double, an unknown is the
engine's sentinel string and a secret is a signed object holding its value. Here the pack is a
copy of the assembled directory alone, started the same way.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import itertools
import pkgutil
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import analyzer_pb2 as proto
from pulumi.runtime.proto import analyzer_pb2_grpc

from core.vocabulary import RULE_NAMES, SECRET_TYPE
from hyperpod_dpd.policy.assemble import assemble, build_venv
from hyperpod_dpd.shared.venvs import foreign_env
from policies.pack import UNCHECKED_POLICY, build_policies, pack_config
from policies.rules import Limits, ResourceView
from tests.conftest import ROOT, run_stack, stack_raw
from tests.policies import rules as rule_tests
from tests.policies.conftest import gpu_group, iec_spec, named, recorded
from tests.policies.test_pack import run_pack
from tests.support.pinned_images import pinned
from tests.support.program_runs import exclusive

PACK = ROOT / "build" / "policy-pack"
TOKEN = "hf_" + "T" * 34


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory) -> Path:
    """The pack assembled on its own into a fresh directory, with the pack's venv (built from
    its requirements.txt, once: parallel test workers take turns through a lock)."""
    out = assemble(tmp_path_factory.mktemp("published") / "hyperpod-dpd-pack")
    PACK.mkdir(parents=True, exist_ok=True)
    with exclusive(PACK.parent / ".policy-pack.lock"):
        shutil.copyfile(out / "requirements.txt", PACK / "requirements.txt")
        venv = build_venv(PACK)
    (out / "venv").symlink_to(venv)
    return out


class Analyzer:
    def __init__(self, pack: Path):
        env = foreign_env()
        self.process = subprocess.Popen(
            [str(pack / "venv" / "bin" / "python"), "-u", "-m", "pulumi.policy",
             "127.0.0.1:1", str(pack)],
            cwd=pack, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            self.process.kill()
            raise AssertionError(f"the pack did not start: {line}{self.process.stderr.read()}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{line.strip()}")
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)

    def configure(self, config: dict) -> None:
        policy_config = {}
        for name, value in config.items():
            properties = struct_pb2.Struct()
            properties.update({k: v for k, v in value.items() if k != "enforcementLevel"})
            level = proto.EnforcementLevel.Value(value["enforcementLevel"].upper())
            policy_config[name] = proto.PolicyConfig(enforcementLevel=level, properties=properties)
        self.stub.Configure(proto.ConfigureAnalyzerRequest(policyConfig=policy_config))

    def analyze(self, views) -> list[tuple[str, str, str, str]]:
        resources = [
            proto.AnalyzerResource(
                type=v.type,
                properties=_struct(engine_wire(v.props, TOKEN if v.type == SECRET_TYPE else "x")),
                urn=v.urn,
                name=v.name,
                options=proto.AnalyzerResourceOptions(),
            )
            for v in views
        ]
        response = self.stub.AnalyzeStack(proto.AnalyzeStackRequest(resources=resources))
        level = proto.EnforcementLevel.Name
        # pulumi-policy sends "<policy description>\n<message>" as a violation's message.
        return sorted(
            (
                d.policyName,
                level(d.enforcementLevel).lower(),
                d.urn,
                d.message.removeprefix(f"{d.description}\n"),
            )
            for d in response.diagnostics
        )

    def close(self) -> None:
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def analyzer(pack_dir):
    a = Analyzer(pack_dir)
    info = a.stub.GetAnalyzerInfo(proto.google_dot_protobuf_dot_empty__pb2.Empty())
    assert info.name == "hyperpod-dpd"
    assert {p.name for p in info.policies} == {p.name for p in build_policies()}
    a.stub.ConfigureStack(
        proto.AnalyzerStackConfigureRequest(stack="dev", project="hyperpod-dpd", dry_run=True)
    )
    yield a
    a.close()


def engine_wire(value, secret: str):
    """A recorded input as the engine sends it to analyzers: "[unknown]" as the engine's
    unknown sentinel, "[secret]" as a signed secret carrying `secret` (the engine hands
    analyzers secret values in the clear; a Kubernetes Secret here carries the token)."""
    if value == "[unknown]":
        return rpc.UNKNOWN
    if value == "[secret]":
        return {rpc._special_sig_key: rpc._special_secret_sig, "value": secret}
    if isinstance(value, dict):
        return {k: engine_wire(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [engine_wire(v, secret) for v in value]
    return value


def _struct(props: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(props)  # every number becomes a double, as on the wire
    return struct


def direct(views, config=None) -> list[tuple[str, str, str, str]]:
    """The same policies called in-process with plain dicts (tests/policies/test_pack.py), at
    the levels and with the properties of a `--policy-pack-config` document; a policy it
    disables is not run, as pulumi-policy's AnalyzeStack skips it."""
    config = config or {}
    levels = {p.name: p.enforcement_level.value for p in build_policies()}
    levels.update({name: value["enforcementLevel"] for name, value in config.items()})
    props = {k: v for k, v in next(iter(config.values()), {}).items() if k != "enforcementLevel"}
    enabled = {name for name, level in levels.items() if level != "disabled"}
    return sorted(
        (policy, levels[policy], urn or "", message)
        for policy, found in run_pack(views, props or None, only=enabled).items()
        for urn, message in found
    )


# --- Cases: the acceptance three, the repo stacks, first-preview unknowns --------------------


def _threshold_100(views):
    iec_spec(views)["pdSpec"]["routingThreshold"] = 100


def _g6e_decode(views):
    gpu_group(views, "decode")["instanceType"] = "ml.g6e.48xlarge"


def _token_in_config_map(views):
    named(views, "checkpoint-code").props["data"]["settings.env"] = TOKEN


ACCEPTANCE = {
    "routingThreshold 100": (_threshold_100, "hyperpod-dpd-routing-threshold"),
    "g6e decode group": (_g6e_decode, "hyperpod-dpd-instance-type"),
    "plaintext token in a ConfigMap": (_token_in_config_map, "hyperpod-dpd-hf-token"),
}


@pytest.mark.parametrize("case", sorted(ACCEPTANCE))
def test_the_pack_reports_each_as_a_mandatory_violation(analyzer, case):
    mutate, policy = ACCEPTANCE[case]
    views = recorded("dev")
    mutate(views)
    found = analyzer.analyze(views)
    assert [(p, level) for p, level, _, _ in found] == [(policy, "mandatory")]
    assert found == direct(views)


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize("preview", [False, True], ids=["update", "first-preview"])
def test_the_repo_stacks_pass_with_no_preview_errors(analyzer, stack, preview):
    config = pack_config({}, advisories_mandatory=stack == "prod")
    analyzer.configure(config)
    try:
        views = recorded(stack, preview=preview)
        found = analyzer.analyze(views)
    finally:
        analyzer.configure(pack_config({}, advisories_mandatory=False))
    assert [f for f in found if f[1] == "mandatory"] == []
    assert not any("can't run policy" in message for *_, message in found)
    unchecked = [f for f in found if f[0] == "hyperpod-dpd-preview-unchecked"]
    assert bool(unchecked) == preview  # only a first preview has values nobody knows yet
    assert all(
        m.split(": ", 1)[1].startswith("cannot check during preview:") for *_, m in unchecked
    )
    assert found == direct(views, config)


def test_a_token_kept_as_a_pulumi_secret_is_not_a_violation(analyzer):
    raw = pinned(stack_raw("dev")) | {"hyperpod-dpd:hfToken": TOKEN}
    run = run_stack(raw, secret_keys=["hyperpod-dpd:hfToken"])
    views = [ResourceView(r.type, r.name, r.urn, r.inputs) for r in run.resources]
    assert named(views, "checkpoint-hf-token").props["stringData"] == "[secret]"
    found = analyzer.analyze(views)  # the Secret arrives holding the token in the clear
    assert found == [] == direct(views)


def _rule_tests() -> dict[str, ModuleType]:
    """Each test function of tests/policies/rules/ and its folders (one module per rule) by name, with the
    module it lives in (a name in two modules would give two cases one id)."""
    tests: dict[str, ModuleType] = {}
    for info in pkgutil.walk_packages(rule_tests.__path__, f"{rule_tests.__name__}."):
        if info.ispkg or not info.name.rsplit(".", 1)[-1].startswith("test_"):
            continue
        module = importlib.import_module(info.name)
        for name, _ in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("test_"):
                assert name not in tests, f"{name} is defined in two rule test modules"
                tests[name] = module
    return tests


RULE_TESTS = _rule_tests()


def _rule_cases() -> list[tuple[str, dict]]:
    """Every case of tests/policies/rules/: (test function, parameters), one per
    parametrized combination, for the functions that judge the dev stack's views."""
    cases = []
    for name in sorted(RULE_TESTS):
        test = getattr(RULE_TESTS[name], name)
        if "dev" not in inspect.signature(test).parameters:
            continue
        marks = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
        grids = [
            [dict(zip(m.args[0].split(","), v if isinstance(v, tuple) else (v,), strict=True))
             for v in m.args[1]]
            for m in marks
        ]  # fmt: skip
        for combo in itertools.product(*grids) or [()]:
            cases.append((name, {k: v for part in combo for k, v in part.items()}))
    return cases


RULE_CASES = _rule_cases()


def _captured(name: str, kwargs: dict) -> list[tuple[str, list, Limits | None]]:
    """The views (and limits) the rule test `name` hands each rule, captured as it runs."""
    captured = []
    module = RULE_TESTS[name]
    original = getattr(module, "findings", None)  # None: the test calls no rule's findings

    def capturing(rule, views, limits=None):
        captured.append((rule, copy.deepcopy(views), limits))
        return original(rule, views, limits)

    if original is not None:
        module.findings = capturing
    try:
        getattr(module, name)(dev=recorded("dev"), **kwargs)
    finally:
        if original is not None:
            module.findings = original
    return captured


def test_the_rule_cases_cover_every_rule():
    source = "".join(inspect.getsource(m) for m in set(RULE_TESTS.values()))
    assert len(RULE_CASES) >= 40
    assert {r for r in RULE_NAMES if f'"{r}"' in source} == set(RULE_NAMES)


@pytest.mark.parametrize(
    ("name", "kwargs"), RULE_CASES, ids=[f"{n}{sorted(k.values())}" for n, k in RULE_CASES]
)
def test_each_rule_test_case_finds_the_same_over_grpc(analyzer, name, kwargs):
    for rule, views, limits in _captured(name, kwargs):
        config = _only(rule, limits)
        analyzer.configure(config)
        try:
            assert analyzer.analyze(views) == direct(views, config)
        finally:
            analyzer.configure(pack_config({}, advisories_mandatory=False))


def _only(rule: str, limits: Limits | None) -> dict:
    """A `--policy-pack-config` document that runs `rule` (its advisory companion and the
    preview check too) at its own level, with `limits` as the properties, and disables the rest:
    each case checks its rule over the wire, the repo-stack cases above run them all."""
    properties = {}
    if limits is not None and limits != Limits():
        properties = {
            "minRoutingThreshold": limits.min_routing_threshold,
            "overheadGiB": limits.overhead_gib,
            "minDenseParamsBillion": limits.min_dense_params_billion,
            "extraDpdImages": list(limits.extra_dpd_images),
        }
    kept = {rule, f"{rule}-advisory", UNCHECKED_POLICY}
    assert rule in {p.name for p in build_policies()}, f"{rule} is no policy of the pack"
    return {
        p.name: {
            "enforcementLevel": p.enforcement_level.value if p.name in kept else "disabled",
            **properties,
        }
        for p in build_policies()
    }
