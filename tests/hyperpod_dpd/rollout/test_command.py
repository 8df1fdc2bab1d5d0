"""`hyperpod-dpd rollout` end to end: judged on a real Prometheus (a healthy, a failing and a
quiet candidate), applied through the Automation API of the pinned SDK to the stand-in Pulumi
CLI (pulumi_standin.py), committed to the project's own git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_HOLD, EXIT_OK
from hyperpod_dpd.cli import main
from tests.conftest import ROOT
from tests.hyperpod_dpd.rollout.conftest import HOUR, STACK, git

UNREACHABLE = "http://127.0.0.1:9"  # a step that judges would fail on it: these never judge


def rollout(project, url, *more, capsys=None):
    code = main(["rollout", "--stack", STACK, "--endpoint", "candidate", "--prometheus-url", url,
                 "--project-dir", str(project), *more])  # fmt: skip
    out = capsys.readouterr() if capsys else None
    return code, out


def weights(project) -> dict:
    return yaml.safe_load((project / f"Pulumi.{STACK}.yaml").read_text())["config"][
        "hyperpod-dpd:traffic"
    ]


def docs(out) -> list[dict]:
    return [json.loads(line) for line in out.out.splitlines()]


def test_a_dry_run_judges_prints_the_step_and_its_calls_and_changes_nothing(
    world, prometheus, capsys
):
    project, standin = world("healthy")
    before = (project / f"Pulumi.{STACK}.yaml").read_text()
    code, out = rollout(project, prometheus.url, "--dry-run", capsys=capsys)
    assert code == EXIT_OK, out.err
    line, *calls = out.out.splitlines()
    assert " canary promote: candidate 5% -> 25% (dry run: nothing changed): error rate " in line
    assert calls == [
        "  would run: pulumi config set-all --path --plaintext hyperpod-dpd:traffic.baseline=75 "
        "--plaintext hyperpod-dpd:traffic.candidate=25 --stack canary",
        "  would run: pulumi preview --policy-pack build/policy-pack --policy-pack-config "
        ".hyperpod-dpd/rollout/canary.policy.json --stack canary",
        "  would run: pulumi up --yes --skip-preview --policy-pack build/policy-pack "
        "--policy-pack-config .hyperpod-dpd/rollout/canary.policy.json --message "
        "'hyperpod-dpd rollout canary: promote candidate 5% -> 25%; weights "
        "baseline=75,candidate=25 (was baseline=95,candidate=5)' --stack canary",
    ]
    assert standin.calls() == []  # not even `pulumi version`
    assert (project / f"Pulumi.{STACK}.yaml").read_text() == before
    assert not (project / ".hyperpod-dpd").exists()


def test_a_healthy_candidate_takes_the_next_step_through_pulumi_and_git(
    world, prometheus, capsys
):
    project, standin = world("healthy")
    code, out = rollout(project, prometheus.url, "--once", "--commit", "--format", "json",
                        capsys=capsys)  # fmt: skip
    assert code == EXIT_OK, out.err
    (doc,) = docs(out)
    assert doc["decision"] == doc["verdict"] == "promote"
    assert doc["weights"] == {"before": {"baseline": 95, "candidate": 5},
                              "after": {"baseline": 75, "candidate": 25}}  # fmt: skip
    assert (doc["applied"], doc["update"]) == (True, 2)
    assert doc["measures"]["candidate"]["requests"] == pytest.approx(18000, rel=0.02)
    assert doc["measures"]["candidate"]["errorRate"] == 0
    # The stack file: written by `config set-all --path` (numbers, not strings), comments kept.
    text = (project / f"Pulumi.{STACK}.yaml").read_text()
    assert weights(project) == {"baseline": 75, "candidate": 25}
    assert text.startswith("# Canary stack: DPD adopted") and "# The split's listener" in text
    # The calls the Automation API made, in order, as the CLI receives them.
    assert standin.commands() == [
        "version", "stack select", "stack output", "stack output", "stack history",
        "stack output", "stack output", "config set-all", "preview", "up", "stack output",
        "stack output", "stack history",
    ]  # fmt: skip
    calls = {" ".join(c[:2]): c for c in standin.calls()}
    assert calls["config set-all"] == [
        "config", "set-all", "--stack", "canary", "--path",
        "--plaintext", "hyperpod-dpd:traffic.baseline=75",
        "--plaintext", "hyperpod-dpd:traffic.candidate=25",
    ]  # fmt: skip
    up = calls["up --yes"]
    assert up[up.index("--policy-pack") + 1] == str(project / "build" / "policy-pack")
    pack_config = up[up.index("--policy-pack-config") + 1]
    assert json.loads(open(pack_config).read()) == _policy_config(project, capsys)
    assert up[up.index("--message") + 1].startswith(
        "hyperpod-dpd rollout canary: promote candidate 5% -> 25%; weights "
    )
    assert up[up.index("--exec-kind") + 1] == "auto.local"
    assert up[up.index("--event-log") + 1].startswith("tcp://127.0.0.1:")  # the CLI's gRPC path
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == weights(project)
    # The commit: the stack file alone, the verdict and its reasons in the message.
    assert doc["commit"] == git(project, "rev-parse", "HEAD")
    message = git(project, "log", "-1", "--format=%B")
    assert message.startswith("rollout canary: promote candidate 5% -> 25%\n")
    assert "hyperpod-dpd canary's verdict over 30m: promote" in message
    assert "hyperpod-dpd:traffic: baseline 95 -> 75, candidate 5 -> 25" in message
    assert git(project, "show", "--name-only", "--format=", "HEAD") == f"Pulumi.{STACK}.yaml"
    assert not (project / ".hyperpod-dpd" / "rollout" / f"{STACK}.json").exists()  # no journal


def _policy_config(project, capsys) -> dict:
    assert main(["policy-config", "--stack", STACK, "--project-dir", str(project)]) == 0
    return json.loads(capsys.readouterr().out)
