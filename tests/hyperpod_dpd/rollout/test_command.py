"""`hyperpod-dpd rollout` end to end: judged on a real Prometheus (a healthy, a failing and a
quiet candidate), applied through the Automation API of the pinned SDK to the stand-in Pulumi
CLI (pulumi_standin.py), committed to the project's own git repository."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_HOLD, EXIT_OK
from hyperpod_dpd.cli import main
from tests.conftest import ROOT
from tests.hyperpod_dpd.rollout.conftest import HOUR, STACK, git
from tests.support.json_style import style_problems
from tests.support.program_runs import shared_runs_env

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


@pytest.mark.parametrize(
    ("scenario", "exit_code", "said"),
    [("failing", EXIT_FAILED, " canary rollback: candidate 5% -> 0% (dry run: nothing changed): "),
     ("quiet", EXIT_HOLD, " canary hold: candidate at 5%: candidate served ")],
)  # fmt: skip
def test_a_dry_run_exits_with_the_verdicts_code_and_changes_nothing(
    world, prometheus, capsys, scenario, exit_code, said
):
    project, standin = world(scenario)
    before = (project / f"Pulumi.{STACK}.yaml").read_text()
    code, out = rollout(project, prometheus.url, "--dry-run", capsys=capsys)
    assert code == exit_code, out.err
    assert said in out.out.splitlines()[0]
    assert standin.calls() == []
    assert (project / f"Pulumi.{STACK}.yaml").read_text() == before


def test_a_healthy_candidate_takes_the_next_step_through_pulumi_and_git(world, prometheus, capsys):
    project, standin = world("healthy")
    code, out = rollout(project, prometheus.url, "--once", "--commit", "--format", "json",
                        capsys=capsys)  # fmt: skip
    assert code == EXIT_OK, out.err
    (doc,) = docs(out)
    assert style_problems(doc, frozenset()) == []  # plan.json's style: camelCase, rounded
    assert doc["decision"] == doc["verdict"] == "promote"
    assert doc["weights"] == {"before": {"baseline": 95, "candidate": 5},
                              "after": {"baseline": 75, "candidate": 25}}  # fmt: skip
    assert (doc["applied"], doc["update"]) == (True, 2)
    assert doc["measures"]["candidate"]["requests"] > 1000  # slo.minRequests
    assert doc["measures"]["candidate"]["errorRate"] == 0
    # The stack file: written by `config set-all --path` (numbers, not strings), comments kept.
    text = (project / f"Pulumi.{STACK}.yaml").read_text()
    assert weights(project) == {"baseline": 75, "candidate": 25}
    assert text.startswith("# Canary stack: DPD adopted") and "# The split's listener" in text
    # The calls the Automation API made, in order, as the CLI receives them.
    assert standin.commands() == [
        "version", "stack select", "stack output", "stack output", "stack history",
        "stack output", "stack output", "config set-all", "preview", "stack output",
        "stack output", "up", "stack output", "stack output", "stack history",
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
    assert json.loads(Path(pack_config).read_text()) == _policy_config(project, capsys)
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


def test_a_failing_candidate_is_rolled_back_and_the_rollback_committed(world, prometheus, capsys):
    project, standin = world("failing")
    code, out = rollout(project, prometheus.url, "--commit", capsys=capsys)
    assert code == EXIT_FAILED, out.err
    (line,) = out.out.splitlines()
    assert " canary rollback: candidate 5% -> 0% (update 2 of stack canary, commit " in line
    assert "Fisher's exact test" in line and "next: read the reasons in docs/alerts.md" in line
    assert weights(project) == {"baseline": 100, "candidate": 0}
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == weights(project)
    assert git(project, "log", "-1", "--format=%s") == "rollout canary: rollback candidate 5% -> 0%"


def test_a_quiet_candidate_holds_and_nothing_changes(world, prometheus, capsys):
    project, standin = world("quiet")
    before = (project / f"Pulumi.{STACK}.yaml").read_text()
    code, out = rollout(project, prometheus.url, "--once", capsys=capsys)
    assert code == EXIT_HOLD, out.err
    assert re.search(r" canary hold: candidate at 5%: candidate served \d+ requests in the "
                     r"window, \d+ short of slo.minRequests 1000", out.out)  # fmt: skip
    assert not {"config set-all", "preview", "up"} & set(standin.commands())
    assert (project / f"Pulumi.{STACK}.yaml").read_text() == before


@pytest.mark.long
def test_the_loop_takes_a_healthy_candidate_to_100_and_says_how_to_retire_the_baseline(
    world, prometheus, capsys
):
    project, standin = world("healthy")
    standin.edit(updateAgeSeconds=HOUR)  # each step then reads as having served its window
    code, out = rollout(project, prometheus.url, "--interval", "1s", "--commit", capsys=capsys)
    assert code == EXIT_OK, out.err
    lines = out.out.splitlines()
    assert [line.split(" (")[0].split(" ", 1)[1] for line in lines] == [
        "canary promote: candidate 5% -> 25%",
        "canary promote: candidate 25% -> 50%",
        "canary promote: candidate 50% -> 100%",
    ]
    assert lines[-1].endswith(
        "next: retire the baseline: delete hyperpod-dpd:endpoints.baseline and their keys of "
        "hyperpod-dpd:traffic (and the instance groups only they use) from Pulumi.canary.yaml, "
        "then pulumi up --stack canary (docs/canary.md, step 8)"
    )
    assert weights(project) == {"baseline": 0, "candidate": 100}
    assert standin.commands().count("up") == 3
    assert len(git(project, "log", "--format=%h").split()) == 4  # the three steps' commits


def test_a_promotion_waits_until_its_weights_have_served_a_whole_window(world, prometheus, capsys):
    project, standin = world("healthy")
    assert rollout(project, prometheus.url, "--once", capsys=capsys)[0] == EXIT_OK
    code, out = rollout(project, prometheus.url, "--once", capsys=capsys)
    assert code == EXIT_HOLD, out.err
    assert (
        " canary hold: candidate at 25%: the weights baseline=75,candidate=25 went live 0 min "
        "ago (update 2 of stack canary) and the window is 30m" in out.out
    )
    assert standin.commands().count("up") == 1


def test_deployed_weights_other_than_the_files_stop_it_naming_both(world, capsys):
    project, standin = world("healthy")
    standin.edit_stack(deployed={**standin.stack()["deployed"],
                                 "outputs": {"trafficWeights": {"baseline": 50, "candidate": 50}}})  # fmt: skip
    code, out = rollout(project, UNREACHABLE, "--once", capsys=capsys)
    assert code == EXIT_FAILED, out.err
    assert (
        "stopped: candidate at 5%: stack canary deployed baseline=50,candidate=50 (its "
        "trafficWeights output) but Pulumi.canary.yaml holds baseline=95,candidate=5" in out.out
    )
    assert "config set-all" not in standin.commands()


def test_a_change_pending_besides_the_routing_stops_the_step_and_puts_the_file_back(
    world, prometheus, capsys
):
    project, standin = world("healthy")
    iec = next(r["urn"] for r in standin.stack()["resources"]
               if r["urn"].endswith("InferenceEndpointConfig::endpoint-candidate-iec"))  # fmt: skip
    standin.edit_stack(pending=[{"urn": iec, "op": "replace"}])
    code, out = rollout(project, prometheus.url, "--once", capsys=capsys)
    assert code == EXIT_FAILED, out.err
    assert (
        "besides the routing, pulumi up --stack canary would: replace "
        "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig "
        "endpoint-candidate-iec" in out.out
    )
    _put_back_not_applied(project, standin)
    assert "# The split's listener" in (project / f"Pulumi.{STACK}.yaml").read_text()


def _put_back_not_applied(project, standin):
    """The step written, then undone: the stack file at its weights before, no update, no
    journal."""
    assert weights(project) == {"baseline": 95, "candidate": 5}
    assert "up" not in standin.commands()
    assert not (project / ".hyperpod-dpd" / "rollout" / f"{STACK}.json").exists()


def test_a_step_that_lands_elsewhere_while_this_one_previews_stops_it_before_its_update(
    world, prometheus, capsys
):
    """Another machine's rollout (which this checkout's lock does not see) rolls the candidate
    back while this one previews its promotion: this one must not update over it."""
    project, standin = world("healthy")
    standin.edit(landsDuringPreview={"baseline": 100, "candidate": 0})
    code, out = rollout(project, prometheus.url, "--once", capsys=capsys)
    assert code == EXIT_FAILED, out.err
    assert (
        "stopped: candidate at 5%: while the step previewed, stack canary deployed "
        "baseline=100,candidate=0 (its trafficWeights output; another rollout or a deploy): "
        "Pulumi.canary.yaml is back at baseline=95,candidate=5" in out.out
    )
    _put_back_not_applied(project, standin)
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == {"baseline": 100,
                                                                          "candidate": 0}  # fmt: skip


def test_an_update_held_by_another_stops_the_step_naming_pulumis_lock(world, prometheus, capsys):
    project, standin = world("healthy")
    standin.edit(locked=True)
    code, out = rollout(project, prometheus.url, "--once", capsys=capsys)
    assert code == EXIT_FAILED, out.err
    assert (
        "pulumi preview --stack canary failed: another update of stack canary is running (Pulumi's update "
        "lock): error: [409] Conflict: Another update is currently in progress." in out.out
    )
    assert weights(project) == {"baseline": 95, "candidate": 5}


def test_a_rolled_back_candidate_is_not_promoted_again(world, capsys):
    project, standin = world("healthy", weights=(100, 0))
    code, out = rollout(project, UNREACHABLE, capsys=capsys)
    assert code == EXIT_FAILED, out.err
    assert " canary rolledBack: candidate at 0%: candidate is at 0%" in out.out
    assert out.out.rstrip().endswith(
        "start again: pulumi config set --stack canary --path 'hyperpod-dpd:traffic.baseline' 95 "
        "&& pulumi config set --stack canary --path 'hyperpod-dpd:traffic.candidate' 5 && pulumi "
        "up --stack canary"
    )
    assert "up" not in standin.commands()


def test_two_rollouts_of_one_stack_never_run_at_once(world, capsys):
    from hyperpod_dpd.rollout.journal import exclusive

    project, standin = world("healthy")
    with exclusive(project, STACK):
        code, out = rollout(project, UNREACHABLE, capsys=capsys)
    assert code == EXIT_BAD_INPUT
    assert out.err.startswith(
        "error: --stack canary: another rollout of this stack is running (pid "
    )
    assert standin.calls() == []
    # Released with its holder: the next one runs (and stops on the unreachable Prometheus).
    assert rollout(project, UNREACHABLE, capsys=capsys)[0] == EXIT_BAD_INPUT
    assert "version" in standin.commands()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--steps", "5,3,100"], "argument --steps: "),
        (["--steps", "5,50"], "argument --steps: "),
        (["--window", "soon"], "argument --window: "),
        (["--interval", "0m"], "argument --interval: "),
        (["--endpoint", "nosuch"], "--endpoint"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(world, capsys, flags, named):
    project, standin = world("healthy")
    try:
        code, out = rollout(project, UNREACHABLE, *flags, capsys=capsys)
    except SystemExit as exited:  # argparse's own refusal
        code, out = exited.code, capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert named in out.err and "Traceback" not in out.err
    assert standin.calls() == []


def test_without_the_pulumi_cli_it_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    from tests.hyperpod_dpd.rollout.conftest import make_project

    project = make_project(tmp_path / "project", "healthy")
    monkeypatch.setenv("PATH", str(tmp_path))  # no pulumi (nor anything else)
    code, out = rollout(project, UNREACHABLE, "--once", capsys=capsys)
    assert code == EXIT_BAD_INPUT
    assert out.err.startswith("error: no `pulumi` on PATH: the rollout applies each step")


# --- Killed, and run again ------------------------------------------------------------------
def _killed(project, standin, url, command, when):
    """Run the rollout as its own process, which the stand-in SIGKILLs at `command` (its plans'
    program runs this session's: tests/support/cli_sharing_runs.py)."""
    standin.edit(kill={"command": command, "when": when})
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.cli_sharing_runs", "rollout", "--stack", STACK,
         "--endpoint", "candidate", "--prometheus-url", url, "--project-dir", str(project),
         "--once", "--commit"],
        env={**standin.env(), **shared_runs_env()}, capture_output=True, text=True, cwd=ROOT,
        check=False,
    )  # fmt: skip
    assert done.returncode == -9, done.stderr  # SIGKILL
    assert "kill" not in standin.state()


@pytest.mark.long
def test_killed_between_judging_and_applying_a_rerun_applies_the_step_judged(
    world, prometheus, capsys
):
    project, standin = world("healthy")
    _killed(project, standin, prometheus.url, "up", "before")
    # Killed with the stack file written and the update not run.
    assert weights(project) == {"baseline": 75, "candidate": 25}
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == {"baseline": 95,
                                                                          "candidate": 5}  # fmt: skip
    code, out = rollout(project, UNREACHABLE, "--once", "--commit", "--format", "json",
                        capsys=capsys)  # fmt: skip
    assert code == EXIT_OK, out.err
    (doc,) = docs(out)
    assert (doc["decision"], doc["verdict"], doc["applied"]) == ("resume", "promote", True)
    assert doc["reasons"][0].startswith("the promote candidate 5% -> 25% judged at ")
    assert doc["measures"] is None  # the judgement was the killed run's: not made again
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == weights(project)
    assert git(project, "log", "-1", "--format=%s") == "rollout canary: promote candidate 5% -> 25%"
    assert not (project / ".hyperpod-dpd" / "rollout" / f"{STACK}.json").exists()


@pytest.mark.long
def test_killed_before_the_stack_file_was_written_a_rerun_judges_afresh(world, prometheus, capsys):
    project, standin = world("healthy")
    _killed(project, standin, prometheus.url, "config set-all", "before")
    assert weights(project) == {"baseline": 95, "candidate": 5}
    code, out = rollout(project, prometheus.url, "--once", "--format", "json", capsys=capsys)
    assert code == EXIT_OK, out.err
    (doc,) = docs(out)
    assert (doc["decision"], doc["applied"]) == ("promote", True)
    assert doc["measures"]["candidate"]["requests"] > 0  # judged again
    assert weights(project) == {"baseline": 75, "candidate": 25}


@pytest.mark.long
def test_killed_after_applying_a_rerun_commits_the_step_from_this_or_a_fresh_checkout(
    world, prometheus, capsys, tmp_path
):
    project, standin = world("healthy")
    _killed(project, standin, prometheus.url, "up", "after")
    applied = {"baseline": 75, "candidate": 25}
    assert standin.stack()["deployed"]["outputs"]["trafficWeights"] == applied
    assert git(project, "log", "-1", "--format=%s") == "the canary stack"  # not committed
    # A fresh checkout of the same commit (a CI runner's next run): neither the written stack
    # file nor the journal; the stack's history names the step.
    fresh = tmp_path / "fresh"
    shutil.copytree(project, fresh, symlinks=True)
    git(fresh, "checkout", "--", f"Pulumi.{STACK}.yaml")
    shutil.rmtree(fresh / ".hyperpod-dpd")
    state = standin.state_file.read_text()
    for where, resumed in ((project, "was applied when the last run stopped"),
                           (fresh, "stopped before Pulumi.canary.yaml took its weights")):  # fmt: skip
        standin.state_file.write_text(state)
        code, out = rollout(where, UNREACHABLE, "--once", "--commit", "--format", "json",
                            capsys=capsys)  # fmt: skip
        assert code == EXIT_OK, out.err
        (doc,) = docs(out)
        assert (doc["decision"], doc["verdict"]) == ("resume", "promote"), doc
        assert resumed in doc["reasons"][0]
        assert weights(where) == applied
        assert (
            git(where, "log", "-1", "--format=%s") == "rollout canary: promote candidate 5% -> 25%"
        )
        assert (
            "up" not in standin.commands()[len(json.loads(state)["calls"]) :]
        )  # not applied again
