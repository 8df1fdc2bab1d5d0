"""`hyperpod-dpd plan` as users run it: output, exit codes, messages."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from hyperpod_dpd.cli import main
from tests.conftest import ROOT


def test_plan_prints_a_table_and_exits_0(tmp_path, capsys):
    assert main(["plan", "--stack", "dev", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Offline plan of stack 'dev': us-east-2, GPU AZ use2-az2" in out
    assert "aws:ec2/subnet:Subnet" in out and "Policy violations: none" in out


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


def test_unknown_stack_exits_2(capsys):
    assert main(["plan", "--stack", "nope"]) == 2
    assert "found: dev, prod" in capsys.readouterr().err


def test_pulumi_yaml_is_up_to_date():
    assert main(["pulumi-yaml", "--check", "--project-dir", str(ROOT)]) == 0


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
