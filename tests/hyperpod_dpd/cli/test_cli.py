"""`hyperpod-dpd plan` as users run it: output, exit codes, messages."""

from __future__ import annotations

import gc
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hyperpod_dpd.cli import main
from tests.conftest import ROOT, split_of, write_project


def test_plan_prints_a_table_and_exits_0(tmp_path, capsys):
    assert main(["plan", "--stack", "dev", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Offline plan of stack 'dev': us-east-2, GPU AZ use2-az2" in out
    assert "aws:ec2/subnet:Subnet" in out and "Policy violations, mandatory" not in out
    # The one advisory of the repo's dev stack: its worker and Job images run by tag.
    assert "Policy violations, advisory (2):" in out and "hyperpod-dpd-images-by-digest" in out
    # The README's first command says what it prints: the same count and cost.
    readme = (ROOT / "README.md").read_text()
    plan_line = re.search(r"Plan: \d+ to add", out)[0]
    cost = re.search(r"Cost: (\$[\d.]+/h, about \$[\d,]+/month)", out)[1]
    assert f"`{plan_line}`" in readme and f"`{cost}`" in readme


def test_a_plan_hands_the_collector_back_on_with_nothing_young_to_scan(tmp_path, capsys):
    """The plan runs with the cyclic collector off. What it allocated (hundreds of thousands of
    objects) must not be left in the young generations, which the collector scans whole on the
    next allocations (0.4 s a plan on 2 cores), but moved to the oldest."""
    gc.collect(1)  # the young generations emptied (the oldest, the suite's heap, is not judged)
    assert main(["plan", "--stack", "dev", "--out", str(tmp_path)]) == 0
    assert gc.isenabled()
    young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
    assert young < 10_000 < len(gc.get_objects(generation=2))


def test_json_format(tmp_path, capsys):
    assert main(["plan", "--stack", "prod", "--out", str(tmp_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["stack"] == "prod" and doc["exitCode"] == 0
    assert doc["byType"]["aws:ec2/natGateway:NatGateway"] == 3


def _project_with(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    assert old in text
    (tmp_path / "Pulumi.dev.yaml").write_text(text.replace(old, new))
    return tmp_path


def test_bad_config_exits_2_naming_the_key_and_writes_nothing(tmp_path, capsys):
    project = _project_with(tmp_path, "routingStrategy: prefixaware", "routingStrategy: fastest")
    out = tmp_path / "out"
    code = main(["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "hyperpod-dpd:endpoint.routingStrategy: got 'fastest'" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_a_sixth_endpoint_in_the_split_exits_2_before_anything_is_registered(tmp_path, capsys):
    project = write_project(tmp_path / "project", split_of(6), stack="canary")
    out = tmp_path / "out"
    code = main(["plan", "--stack", "canary", "--project-dir", str(project), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "hyperpod-dpd:traffic: got {" in err and "at most 5 endpoints (6 here)" in err
    assert "Fix: in Pulumi.canary.yaml set hyperpod-dpd:traffic to {" in err  # its own file
    assert "Traceback" not in err
    assert not out.exists()


def test_unknown_stack_exits_2(capsys):
    assert main(["plan", "--stack", "nope"]) == 2
    assert "found: canary, dev, prod" in capsys.readouterr().err


def test_pulumi_yaml_is_up_to_date():
    assert main(["pulumi-yaml", "--check", "--project-dir", str(ROOT)]) == 0


@pytest.mark.long
def test_console_script_runs_the_plan(tmp_path):
    script = Path(sys.executable).parent / "hyperpod-dpd"
    result = subprocess.run(
        [str(script), "plan", "--stack", "prod", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "resources.json").exists()


@pytest.mark.long
def test_a_reader_that_closes_the_pipe_early_ends_the_plan_quietly(tmp_path):
    """`hyperpod-dpd plan | head -1`: the reader's choice, not an internal error. Exit 141 as a
    program SIGPIPE ends, nothing on stderr; the plan's files are written all the same."""
    script = Path(sys.executable).parent / "hyperpod-dpd"
    with subprocess.Popen(
        [str(script), "plan", "--stack", "dev", "--out", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as plan:
        # The reader goes before the plan writes a byte (as `head -0`, or a `head -1` that took
        # its line before the plan's next write): every write meets a closed pipe.
        plan.stdout.close()
        err = plan.stderr.read()
        code = plan.wait()
    # Nothing on stderr: the advisories the program logs are the plan's to list (on stdout).
    assert code == 141 and err == "", err
    assert (tmp_path / "plan.json").exists()


BROKEN = [
    ("instanceType: ml.p5.48xlarge\n      instanceCount: 1\n      role: prefill",
     "instanceType: ml.g6e.48xlarge\n      instanceCount: 1\n      role: prefill",
     "hyperpod-dpd-instance-type: hyperpod-cluster: instance group prefill (prefill) uses ml.g6e.48xlarge",
     "hyperpod-dpd:instanceGroups.prefill.instanceType"),
    ("    pdBufferSize: 8GiB\n",
     "    pdBufferSize: 8GiB\n    environmentVariables:\n      PYTHONHASHSEED: null\n",
     "hyperpod-dpd-hash-seed: endpoint-iec: PYTHONHASHSEED is not set",
     "hyperpod-dpd:endpoint.environmentVariables"),
    ("pdBufferSize: 8GiB", "pdBufferSize: 32GiB",
     "hyperpod-dpd-pd-buffer-fits: endpoint-iec: PD_BUFFER_SIZE 32 GiB + 2 GiB overhead does not fit",
     "hyperpod-dpd:endpoint.pdBufferSize"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "violation", "key"), BROKEN)
def test_policy_violation_exits_1_naming_rule_resource_and_key(
    tmp_path, capsys, old, new, violation, key
):
    project = _project_with(tmp_path, old, new)
    code = main(
        ["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(tmp_path / "o")]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    line = next(line for line in out.splitlines() if violation in line)
    assert key in line


def test_gpu_capacity_in_two_azs_cannot_be_configured(tmp_path, capsys):
    project = _project_with(
        tmp_path, "availabilityZoneId: use2-az2", "availabilityZoneId: [use2-az2, use2-az3]"
    )
    assert main(["plan", "--stack", "dev", "--project-dir", str(project)]) == 2
    assert "hyperpod-dpd:availabilityZoneId: got" in capsys.readouterr().err


def test_policy_config_of_prod_makes_advisories_mandatory(capsys):
    assert main(["policy-config", "--stack", "prod"]) == 0
    config = json.loads(capsys.readouterr().out)
    assert config["hyperpod-dpd-routing-strategy"] == {"enforcementLevel": "mandatory"}
    assert main(["policy-config", "--stack", "dev"]) == 0
    assert json.loads(capsys.readouterr().out)["hyperpod-dpd-routing-strategy"] == {
        "enforcementLevel": "advisory"
    }


def test_every_command_module_is_on_the_command_line():
    """A module in hyperpod_dpd/cli/ that COMMANDS leaves out is a command users cannot run
    (`hyperpod-dpd fetch`, which `make fetch` calls, once was)."""
    from hyperpod_dpd.cli import COMMANDS

    modules = {p.stem for p in (ROOT / "hyperpod_dpd" / "cli").glob("*.py")} - {
        "__init__",
        "__main__",
    }
    assert {c.__name__.rsplit(".", 1)[1] for c in COMMANDS} == modules
    for name in modules:
        with pytest.raises(SystemExit) as exited:
            main([name.replace("_", "-"), "--help"])
        assert exited.value.code == 0, name


def test_ctrl_c_ends_any_command_with_130_and_no_traceback(monkeypatch, capsys, tmp_path):
    from hyperpod_dpd.cli import benchmark

    def interrupted(args, project_dir):
        raise KeyboardInterrupt

    monkeypatch.setattr(benchmark, "compare_runs", interrupted)
    assert main(["benchmark", "compare", str(tmp_path), str(tmp_path), "--out", "x"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted"
