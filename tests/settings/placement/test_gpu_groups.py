"""A GPU group's instance type must be one its workers can run on (settings/placement/gpu_groups.py): a type
the EC2 data has, with NVIDIA GPUs and EFA, and, for the groups a colocated pool runs on, as many
GPUs as its TP and GPUs that can hold the model. Each refusal names the group's instanceType, the
numbers and the nearest type that serves; the printed fix is applied to the same stack."""

from __future__ import annotations

import pytest

from hyperpod_dpd.cli import main
from policies.gate import judge
from settings import ConfigError, parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit, stack_raw, write_project
from tests.settings.cluster.test_capacity import fix_value
from tests.settings.problems import only_problem, problems_of
from tests.support.pinned_images import beside_tags

NS = "hyperpod-dpd"
COLOCATED = f"{NS}:instanceGroups.colocated.instanceType"
DECODE = f"{NS}:instanceGroups.decode.instanceType"
BASELINE_TP = f"{NS}:endpoints.baseline.tensorParallelSize"


def problem_at(raw, key: str) -> str:
    """The one problem of `raw` at `key`."""
    found = [p for p in problems_of(raw) if p.startswith(f"{key}: ")]
    assert len(found) == 1, found
    return found[0]


def keys_of(raw) -> list[str]:
    """The keys of `raw`'s problems (none when it parses)."""
    try:
        parse_settings(raw)
    except ConfigError as error:
        return [p.key for p in error.problems]
    return []


def small_model(raw, tp: int = 1):
    """The canary with llama-3.1-8b on both endpoints, the baseline at `tp`."""
    edit(raw, f"{NS}:endpoints.baseline.model", "llama-3.1-8b")
    edit(raw, f"{NS}:endpoints.candidate.model", "llama-3.1-8b")
    edit(raw, f"{NS}:checkpoint.source", "hf://meta-llama/Llama-3.1-8B-Instruct")
    edit(raw, BASELINE_TP, tp)
    return raw


def test_a_colocated_group_with_fewer_gpus_than_tp_that_cannot_hold_the_model():
    """ml.g5.12xlarge: 4 A10G of 22.4 GiB. TP 8 needs 8 GPUs, and at TP 4 llama-3.3-70b needs
    36.1 GiB per GPU. The plan used to render a p5's 8 GPUs, 96 CPUs and 1024 GiB for it."""
    raw = edit(canary_raw(), COLOCATED, "ml.g5.12xlarge")
    message = problem_at(raw, COLOCATED)
    assert message.startswith(f"{COLOCATED}: got 'ml.g5.12xlarge'; allowed: a type the group's")
    assert (
        f"{BASELINE_TP} (8) spreads each worker of endpoints.baseline over 8 GPUs of one node "
        "(a worker is one pod), and ml.g5.12xlarge has 4 GPUs" in message
    )
    assert "llama-3.3-70b needs 36.1 GiB per GPU inside vLLM's share" in message
    assert "even at TP 4, the most ml.g5.12xlarge's 4 GPUs allow: more than each A10G's 22.4" in (
        message
    )
    # The TP key is refused too, on its own terms (check_sizing_inputs): two ways out.
    assert "the 4 GPUs of one ml.g5.12xlarge" in problem_at(raw, BASELINE_TP)
    value = fix_value(message, COLOCATED)
    assert value == "ml.g7.48xlarge"  # 8 GPUs of 32 GiB: the smallest that holds it at 0.75
    edit(raw, COLOCATED, value)
    s = parse_settings(raw)
    # The whole plan's judgement agrees: no policy finds the baseline's workers short.
    found = beside_tags(judge(desired_state(s, NS, "canary")))  # its image runs by tag: advisory
    assert not [v for v in found if "baseline" in v.urn]


def test_following_the_tp_fix_leaves_the_memory_refusal():
    raw = edit(canary_raw(), COLOCATED, "ml.g5.12xlarge")
    edit(raw, BASELINE_TP, int(fix_value(problem_at(raw, BASELINE_TP), BASELINE_TP)))
    assert keys_of(raw) == [COLOCATED]  # TP 4 fits its GPUs; the model still does not fit them
    assert "spreads each worker" not in only_problem(raw)


@pytest.mark.parametrize(
    ("instance_type", "words"),
    [("ml.m5.4xlarge", "ml.m5.4xlarge has no NVIDIA GPU (EC2 GpuInfo)"),
     ("ml.trn1.32xlarge", "ml.trn1.32xlarge has no NVIDIA GPU (EC2 GpuInfo)"),
     ("ml.p6e-gb200.36xlarge", "ml.p6e-gb200.36xlarge is not in the EC2 data the workers are "
                               "sized with (core/aws/ec2_instances.py, moto 5.2.5's")],
)  # fmt: skip
def test_a_colocated_group_of_a_type_without_gpu_numbers(instance_type, words):
    raw = edit(canary_raw(), COLOCATED, instance_type)
    message = only_problem(raw)
    assert message.startswith(f"{COLOCATED}: got '{instance_type}'; allowed:")
    assert words in message
    value = fix_value(message, COLOCATED)
    edit(raw, COLOCATED, value)
    parse_settings(raw)


def test_a_type_without_ec2_numbers_is_refused_naming_the_types_known():
    """Not guessed: the refusal lists the GPU types with EFA the data has, by family."""
    raw = edit(canary_raw(), COLOCATED, "ml.p6e-gb200.36xlarge")
    message = only_problem(raw)
    assert "the types it knows that a GPU group may be: ml.g4dn.{8,12,16}xlarge, " in message
    assert "ml.g5.{8,12,16,24,48}xlarge" in message and "ml.p6-b300.48xlarge." in message
    assert "ml.g5.4xlarge" not in message  # no EFA: not a GPU group's type
    assert fix_value(message, COLOCATED) == "ml.p6-b200.48xlarge"  # the closest name


def test_a_gpu_type_without_efa():
    """ml.g5.4xlarge has a GPU but no EFA, and every GPU group gets an EFA interface: refused,
    for the nearest type with EFA that holds llama-3.1-8b at TP 1 and utilization 0.75."""
    raw = small_model(edit(canary_raw(), COLOCATED, "ml.g5.4xlarge"))
    message = only_problem(raw)
    assert "ml.g5.4xlarge has no EFA (EC2 EfaSupported false): every GPU group is created " in (
        message
    )
    value = fix_value(message, COLOCATED)
    assert value == "ml.g7.8xlarge"  # no A10G holds it at 0.75: one 32 GiB RTX PRO 4500
    edit(raw, COLOCATED, value)
    parse_settings(raw)


@pytest.mark.parametrize(
    ("instance_type", "tp"),
    [("ml.p4d.24xlarge", 8), ("ml.g6e.48xlarge", 8), ("ml.g5.48xlarge", 8), ("ml.g6e.12xlarge", 4)],
)
def test_colocated_groups_of_types_that_hold_the_workers_pass(instance_type, tp):
    """ml.p4d.24xlarge: 8 A100 of 40 GiB (its worker asks for 48 of its 96 vCPUs)."""
    raw = edit(canary_raw(), COLOCATED, instance_type)
    edit(raw, BASELINE_TP, tp)
    parse_settings(raw)


def test_the_type_is_refused_at_the_tp_the_args_give():
    raw = small_model(edit(canary_raw(), COLOCATED, "ml.g6e.12xlarge"), tp=4)
    args = f"{NS}:endpoints.baseline.decode.args"
    edit(raw, args, ["--tensor-parallel-size", "8"])
    message = problem_at(raw, COLOCATED)
    assert f"--tensor-parallel-size in {args} (8) spreads each worker" in message
    value = fix_value(message, COLOCATED)
    assert value == "ml.g6e.48xlarge"  # its family's 8 GPUs
    edit(raw, COLOCATED, value)
    parse_settings(raw)


def test_a_tp_beyond_every_node_is_the_tp_keys_problem_not_the_types():
    raw = edit(canary_raw(), BASELINE_TP, 16)
    assert keys_of(raw) == [BASELINE_TP]


def test_a_colocated_stack_without_a_colocated_group_runs_on_its_gpu_groups():
    """One colocated endpoint and no colocated group: its workers land on the decode group."""
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.mode", "colocated")
    edit(raw, DECODE, "ml.g5.12xlarge")
    message = problem_at(raw, DECODE)
    assert "spreads each worker of the endpoint over 8 GPUs" in message
    assert "the endpoint's model llama-3.3-70b needs 36.1 GiB" in message
    edit(raw, DECODE, fix_value(message, DECODE))
    parse_settings(raw)


@pytest.mark.parametrize(
    ("instance_type", "suggested"),
    [("ml.m5.4xlarge", "ml.p5.48xlarge"), ("ml.g5.4xlarge", "ml.p5.48xlarge"),
     ("ml.p6e-gb200.36xlarge", "ml.p6-b200.48xlarge")],
)  # fmt: skip
def test_a_dpd_group_is_offered_a_dpd_type(instance_type, suggested):
    """A decode group beside a DPD endpoint runs DPD workers: only the five DPD types will do
    (the instance-type policy), so the fix names one of them."""
    raw = edit(stack_raw("dev"), DECODE, instance_type)
    message = problem_at(raw, DECODE)
    assert f"{DECODE}: got '{instance_type}'" in message
    assert fix_value(message, DECODE) == suggested
    edit(raw, DECODE, suggested)
    parse_settings(raw)


def test_the_plan_refuses_the_canary_on_a_type_its_baseline_cannot_run_on(tmp_path, capsys):
    """The report's case: `hyperpod-dpd plan` exited 0 and wrote the p5 amounts for it."""
    raw = edit(canary_raw(), COLOCATED, "ml.g5.12xlarge")
    project = write_project(tmp_path / "project", raw, stack="canary")
    out = tmp_path / "plan"
    code = main(["plan", "--stack", "canary", "--project-dir", str(project), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{COLOCATED}: got 'ml.g5.12xlarge'" in err and "ml.g7.48xlarge" in err
    assert not out.exists()
