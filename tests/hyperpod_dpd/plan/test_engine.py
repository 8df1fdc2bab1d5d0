"""The mock engine records what the engine would receive; the fake cloud answers like AWS."""

from __future__ import annotations

import pytest
from pulumi.runtime import rpc

from hyperpod_dpd.plan.fakes import FakeCloud, UnknownInvokeError
from hyperpod_dpd.plan.wire_values import SECRET, sanitize
from tests.conftest import run_stack, stack_raw


def test_sanitize_hides_secrets_at_any_depth_and_keeps_ints():
    wire = {"a": [{"b": rpc.wrap_rpc_secret("hf_x")}], "n": 8.0, "f": 0.75}
    assert sanitize(wire) == {"a": [{"b": SECRET}], "n": 8, "f": 0.75}


def test_resource_references_become_urns():
    ref = {rpc._special_sig_key: rpc._special_resource_sig, "urn": "urn:pulumi:a::b::t::n"}
    assert sanitize({"r": ref}) == {"r": "urn:pulumi:a::b::t::n"}


def test_fake_ids_are_deterministic_and_aws_shaped():
    cloud = FakeCloud(region="us-east-2")
    rid, state = cloud.create("aws:ec2/subnet:Subnet", "x", {"availabilityZoneId": "use2-az2"})
    assert rid == cloud.create("aws:ec2/subnet:Subnet", "x", {"availabilityZoneId": "use2-az2"})[0]
    assert rid.startswith("subnet-0") and len(rid) == len("subnet-") + 17
    assert state["availabilityZone"] == "us-east-2b"
    assert state["arn"] == f"arn:aws:ec2:us-east-2:123456789012:subnet/{rid}"


def test_caller_identity_and_unknown_invokes():
    cloud = FakeCloud(region="eu-west-1")
    assert cloud.invoke("aws:index/getCallerIdentity:getCallerIdentity", {})["accountId"] == (
        "123456789012"
    )
    with pytest.raises(UnknownInvokeError, match="aws:index/getAmi:getAmi"):
        cloud.invoke("aws:index/getAmi:getAmi", {})


def test_runs_are_isolated_from_each_other():
    first = run_stack(stack_raw("dev"))
    second = run_stack(stack_raw("prod"), stack="prod")
    assert {r.urn.split("::")[0] for r in second.resources} == {"urn:pulumi:prod"}
    assert len(first.resources) != len(second.resources)
    assert first.outputs["region"] == "us-east-2" and second.outputs["region"] == "us-west-2"


def test_records_parent_provider_and_dependencies():
    run = run_stack(stack_raw("dev"))
    subnet = run.named("network-gpu-use2-az2")
    vpc = run.named("network-vpc")
    assert subnet.custom and subnet.parent.endswith("::network")
    assert vpc.urn in subnet.depends_on


def test_a_duplicate_urn_fails_as_in_the_real_engine(tmp_path):
    import pytest

    from hyperpod_dpd.plan.engine import DuplicateUrnError, run_program

    program = tmp_path / "__main__.py"
    program.write_text("import pulumi_aws as aws\naws.s3.Bucket('same')\naws.s3.Bucket('same')\n")
    with pytest.raises(DuplicateUrnError, match="Duplicate resource URN 'urn:pulumi:dev::p::"):
        run_program(program, {"aws:region": "us-east-2"}, [], project="p", stack="dev")
    # A failed run leaves nothing behind for the next one in the same process.
    program.write_text("import pulumi_aws as aws\naws.s3.Bucket('one')\n")
    run = run_program(program, {"aws:region": "us-east-2"}, [], project="p", stack="dev")
    assert [r.name for r in run.resources] == ["one"]


def test_a_failed_run_is_reported_once_not_again_when_collected(tmp_path, caplog):
    """The failure reaches the caller; the SDK's copies of it on the failed resource's other
    outputs are not reported again, when collected, as "Future exception was never retrieved"
    (56 tracebacks for one duplicate Bucket, in whatever later test's output)."""
    import asyncio
    import gc

    from hyperpod_dpd.plan.engine import DuplicateUrnError, run_program

    program = tmp_path / "__main__.py"
    program.write_text("import pulumi_aws as aws\naws.s3.Bucket('same')\naws.s3.Bucket('same')\n")
    try:
        run_program(program, {"aws:region": "us-east-2"}, [], project="p", stack="dev")
    except DuplicateUrnError as error:
        failure = error
    unread = [
        o for o in gc.get_objects()
        # type(), not isinstance(): the heap may hold a proxy of a freed object, which raises
        if issubclass(type(o), asyncio.Future) and o.done() and o._log_traceback
        and o._exception is failure
    ]  # fmt: skip
    assert unread  # the SDK's copies of the failure, left for the collector
    for future in unread:
        future.__del__()  # what the collector does when it frees one
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_the_programs_warnings_reach_stderr_but_not_the_advisories_the_plan_lists(tmp_path, capsys):
    from hyperpod_dpd.plan.engine import run_program

    program = tmp_path / "__main__.py"
    program.write_text(
        "import pulumi\n"
        "pulumi.log.warn('advisory hyperpod-dpd-x: endpoint-iec: listed by the plan')\n"
        "pulumi.log.warn('the chart is not fetched: run make fetch')\n"
    )
    run_program(program, {"aws:region": "us-east-2"}, [], project="p", stack="dev")
    assert capsys.readouterr().err == "warning: the chart is not fetched: run make fetch\n"


def _qualified_type(r, by_urn) -> str:
    """The rule, from the resources alone: the types of its component ancestors, outermost
    first, then its own; the root stack (never recorded) is no ancestor."""
    types, parent = [r.type], by_urn.get(r.parent)
    while parent is not None:
        types.insert(0, parent.type)
        parent = by_urn.get(parent.parent)
    return "$".join(types)


@pytest.mark.parametrize("stack", ["dev", "canary"])
def test_every_urn_and_parent_is_the_engines(stack):
    """pulumi's NewURN (sdk/go/common/resource/urn.go): the parent's whole qualified type, `$`,
    the type; the root stack's type never in it. Users copy these into `pulumi state`,
    `--target`, aliases and protect."""
    run = run_stack(stack_raw(stack), stack=stack)
    by_urn = {r.urn: r for r in run.resources}
    for r in run.resources:
        assert r.urn == f"urn:pulumi:{stack}::hyperpod-dpd::{_qualified_type(r, by_urn)}::{r.name}"
        assert "pulumi:pulumi:Stack$" not in r.urn
        assert r.parent in by_urn or r.parent.endswith(
            f"::pulumi:pulumi:Stack::hyperpod-dpd-{stack}"
        )
        assert all(d in by_urn for d in r.depends_on), r.name


def test_a_nested_components_children_carry_the_whole_chain():
    run = run_stack(stack_raw("dev"))
    urns = {r.name: r.urn for r in run.resources}
    assert urns["eks"] == "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:infra:Eks::eks"
    assert urns["inference-operator-tls-bucket"] == (
        "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:infra:InferenceOperator"
        "$hyperpod-dpd:infra:SecureBucket$aws:s3/bucket:Bucket::inference-operator-tls-bucket"
    )


def test_a_load_balancer_name_too_long_to_auto_name_fails_as_the_provider_fails_it():
    """pulumi-aws auto-names ALBs and target groups with at most 32 characters and a 7-character
    suffix after a hyphen: a logical name of 24 fits, 25 does not (the fake once cut it to fit, hiding it)."""
    cloud = FakeCloud(region="us-east-2")
    for kind in ("aws:lb/targetGroup:TargetGroup", "aws:lb/loadBalancer:LoadBalancer"):
        _, state = cloud.create(kind, "t" * 24, {})
        assert len(state["name"]) == 32
        with pytest.raises(
            ValueError, match="plus 7 random chars is longer than maximum length 32"
        ):
            cloud.create(kind, "t" * 25, {})
        assert cloud.create(kind, "t" * 40, {"name": "given"})[1]["name"] == "given"
