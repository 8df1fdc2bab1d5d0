"""`hyperpod-dpd diff`: plans of one stack before and after a change."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hyperpod_dpd.cli import main
from hyperpod_dpd.diff import sides as diff_module
from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.diff.render import render_markdown, render_text
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.support.program_runs import shared_runs_env


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    out = tmp_path_factory.mktemp("base")
    make_plan(ROOT, "dev", out)
    return out


def head_with(tmp_path, *replacements, stack="dev"):
    """Plan of the dev stack file with text replacements applied."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    (project / f"Pulumi.{stack}.yaml").write_text(text)
    out = tmp_path / "head"
    make_plan(project, stack, out)
    return out


def test_identical_plans_have_no_diff(base, tmp_path):
    again = tmp_path / "again"
    make_plan(ROOT, "dev", again)
    d = diff_plans(load_plan(base), load_plan(again))
    assert d.empty
    assert render_markdown(d).endswith("No changes.\n")


def test_routing_threshold_change(base, tmp_path):
    head = head_with(tmp_path, ("routingThreshold: 4096", "routingThreshold: 2048"))
    d = diff_plans(load_plan(base), load_plan(head))
    (change,) = d.changed
    assert change.name == "endpoint-iec"
    assert change.paths == ["spec.pdSpec.routingThreshold"] and change.replace == []
    manifest = d.manifests["inferenceendpointconfig.inference.llama-3-3-70b.yaml"]
    assert "-    routingThreshold: 4096\n+    routingThreshold: 2048\n" in manifest
    assert d.cost_delta == 0


def test_instance_count_change_and_its_cost(base, tmp_path):
    decode = "      instanceType: ml.p5.48xlarge\n      instanceCount: 1\n      role: decode"
    head = head_with(tmp_path, (decode, decode.replace("Count: 1", "Count: 2")))
    d = diff_plans(load_plan(base), load_plan(head))
    assert [(c.name, c.paths) for c in d.changed] == [
        (
            "hyperpod-cluster",
            ["instanceGroups[decode].instanceCount", "instanceGroups[decode].minInstanceCount"],
        )
    ]
    assert d.cost_delta == 55.04
    assert "+$55.04/h" in render_markdown(d)


def test_operator_version_change(base, tmp_path):
    head = head_with(
        tmp_path,
        (
            'version: "3.3"\n    addonVersion: v1.4.0-eksbuild.1',
            'version: "3.4"\n    addonVersion: v1.5.0-eksbuild.1',
        ),
    )
    text = render_text(diff_plans(load_plan(base), load_plan(head)))
    assert "~ aws:eks/addon:Addon inference-operator-addon\n" in text
    assert "      addonVersion: v1.4.0-eksbuild.1 -> v1.5.0-eksbuild.1\n" in text
    assert "metadata.annotations.hyperpod-dpd/operator-version" in text


def test_replacement_is_flagged(base, tmp_path):
    head = head_with(tmp_path, ("vpcCidr: 10.0.0.0/16", "vpcCidr: 10.1.0.0/16"))
    d = diff_plans(load_plan(base), load_plan(head))
    replaced = {c.name: c.replace for c in d.changed if c.replace}
    assert replaced["network-vpc"] == ["cidrBlock"]
    assert replaced["network-gpu-use2-az2"] == ["cidrBlock"]
    markdown = render_markdown(d)
    assert "> These changes **replace** resources" in markdown
    assert "> - `network-vpc` (aws:ec2/vpc:Vpc): cidrBlock" in markdown


def test_new_and_fixed_violations(base, tmp_path):
    prefill = "      instanceType: ml.p5.48xlarge\n      instanceCount: 1\n      role: prefill"
    head = head_with(
        tmp_path,
        (prefill, prefill.replace("Count: 1", "Count: 2")),
        ("      replicas: 1\n      maxNumSeqs: 16", "      replicas: 2\n      maxNumSeqs: 16"),
    )
    d = diff_plans(load_plan(base), load_plan(head))
    assert [v["policy"] for v in d.new_violations] == ["hyperpod-dpd-routing-strategy"]
    back = diff_plans(load_plan(head), load_plan(base))
    assert [v["policy"] for v in back.fixed_violations] == ["hyperpod-dpd-routing-strategy"]


def test_secrets_never_appear(base, tmp_path):
    head = head_with(
        tmp_path,
        (
            "  hyperpod-dpd:endpoint:\n",
            "  hyperpod-dpd:hfToken:\n    secure: v1:c2VjcmV0LXRva2Vu\n  hyperpod-dpd:endpoint:\n",
        ),
    )
    d = diff_plans(load_plan(base), load_plan(head))
    text = render_markdown(d) + render_text(d)
    assert "c2VjcmV0LXRva2Vu" not in text and "secret-token" not in text
    assert "[secret]" in json.dumps([c.paths for c in d.changed]) or any(
        r["type"] == "kubernetes:core/v1:Secret" for r in d.added
    )


def test_cost_of_the_repo_stacks_matches_the_price_table(base, tmp_path):
    prod = tmp_path / "prod"
    make_plan(ROOT, "prod", prod)
    dev_cost = load_plan(base).facts["costPerHour"]["total"]
    prod_cost = load_plan(prod).facts["costPerHour"]["total"]
    assert dev_cost == pytest.approx(2 * 55.04 + 0.922 + 0.10 + 0.045)
    assert prod_cost == pytest.approx(4 * 63.30 + 2 * 0.922 + 0.10 + 3 * 0.045)


@pytest.fixture
def plans_started(monkeypatch):
    """The plans `diff` starts for git refs, counted. Each is still a process of its own in its
    worktree, started as `diff` starts it, with that tree's code first on its path; its program
    runs are this session's (tests/support/cli_sharing_runs.py): a run of a config is the same run there,
    and making it again cost each plan seconds."""
    started = []
    real = subprocess.Popen

    def popen(argv, *args, **kwargs):
        if "plan" in argv:  # not the git commands `subprocess.run` starts through Popen
            started.append(argv)
            assert argv[1:3] == ["-m", "hyperpod_dpd.cli"], argv
            argv = [argv[0], "-m", "tests.support.cli_sharing_runs", *argv[3:]]
            kwargs["env"] = {**kwargs["env"], **shared_runs_env()}
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(diff_module.subprocess, "Popen", popen)
    return started


def test_a_weight_change_reads_old_to_new_by_target_group(tmp_path):
    base, head = tmp_path / "base", tmp_path / "head"
    make_plan(ROOT, "canary", base)
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "Pulumi.canary.yaml"):
        shutil.copy(ROOT / name, project / name)
    stack = project / "Pulumi.canary.yaml"
    text = stack.read_text()
    assert "    baseline: 95\n    candidate: 5\n" in text
    stack.write_text(text.replace("    baseline: 95\n    candidate: 5\n",
                                  "    baseline: 50\n    candidate: 50\n")
                     .replace("pdBufferSize: 8GiB", "pdBufferSize: 16GiB", 1))  # fmt: skip
    make_plan(project, "canary", head)
    out = render_text(diff_plans(load_plan(base), load_plan(head)))
    assert "actions[0].forward.targetGroups[traffic-baseline].weight: 95 -> 50" in out
    assert "actions[0].forward.targetGroups[traffic-candidate].weight: 5 -> 50" in out
    assert "environmentVariables[PD_BUFFER_SIZE].value: 8 GiB -> 16 GiB" in out
    assert "8589934592" not in out


def test_bad_inputs_exit_2(base, tmp_path, capsys, plans_started):
    prod = tmp_path / "prod"
    make_plan(ROOT, "prod", prod)
    assert main(["diff", str(base), str(prod)]) == 2
    err = capsys.readouterr().err
    assert f"{prod}: got 'a plan of stack prod'" in err and f"the same stack as {base} (dev)" in err
    assert main(["diff", str(base), str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"HEAD: got '{tmp_path / 'nope'}'" in err and "(no such directory or git ref)" in err
    assert f"Fix: hyperpod-dpd plan --stack <stack> --out {tmp_path / 'nope'}" in err
    assert "add --stack" not in err
    # No ref holds a NUL byte: refused as neither, git never asked (it would raise, exit 3).
    assert main(["diff", "nul\x00byte", str(prod)]) == 2
    assert "BASE: got 'nul\\x00byte'" in capsys.readouterr().err
    broken = tmp_path / "broken"
    shutil.copytree(base, broken)
    (broken / "resources.json").write_text("{not json")
    assert main(["diff", str(base), str(broken)]) == 2
    assert "corrupt JSON" in capsys.readouterr().err
    argv = ["diff", "no-such-base", "HEAD", "--stack", "dev", "--project-dir", str(ROOT)]
    assert main(argv) == 2
    assert "no-such-base" in capsys.readouterr().err
    argv = ["diff", "no-such-base", "no-such-head", "--stack", "dev", "--project-dir", str(ROOT)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "no-such-base" in err and "no-such-head" in err  # both reported at once
    assert plans_started == []  # a bad ref is found before any plan is started


def _project_repo(repo: Path, leave_out: str = "") -> list[str]:
    """`repo` initialised with this project's tracked files (as they are on disk) but
    `leave_out`, committed as "base"; the git command prefix for more commits."""
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True, text=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file() and name != leave_out:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "--quiet", "--initial-branch=main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "base"], check=True)
    return git


@pytest.fixture(scope="module")
def two_commits(tmp_path_factory, base):
    """A repository holding this project in two commits: the second halves the dev stack's
    routing threshold. Both are planned here too, in this process (the base is `base`'s plan):
    the plans `diff` starts then find their program runs made (plans_started), and the other
    tests of this module planning either config find them as well."""
    repo = tmp_path_factory.mktemp("repo")
    git = _project_repo(repo)
    stack = repo / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("routingThreshold: 4096", "routingThreshold: 2048"))
    subprocess.run([*git, "commit", "--quiet", "-am", "head"], check=True)
    make_plan(repo, "dev", tmp_path_factory.mktemp("head-plan"))
    return repo


@pytest.mark.long
def test_a_pull_request_that_adds_a_stack_shows_all_of_it_added(
    tmp_path, tmp_path_factory, capsys, plans_started
):
    # The base has no Pulumi.canary.yaml: nothing to plan there, everything the head plans is new.
    git = _project_repo(tmp_path, leave_out="Pulumi.canary.yaml")
    shutil.copy2(ROOT / "Pulumi.canary.yaml", tmp_path / "Pulumi.canary.yaml")
    subprocess.run([*git, "add", "Pulumi.canary.yaml"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "canary"], check=True)
    canary = tmp_path_factory.mktemp("canary-plan")
    make_plan(ROOT, "canary", canary)  # before the diff: the head's plan finds its program run
    argv = ["diff", "HEAD~1", "HEAD", "--stack", "canary", "--project-dir", str(tmp_path)]
    assert main([*argv, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["removed"] == [] and d["changed"] == []
    assert len(d["added"]) == len(load_plan(canary).resources)
    assert any(urn.endswith("::endpoint-candidate-iec") for urn in d["added"])
    assert len(plans_started) == 1  # only the head is planned
    # A stack neither side has is still refused, naming the stacks there are.
    argv = ["diff", "HEAD~1", "HEAD", "--stack", "staging", "--project-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "a stack with a Pulumi.<stack>.yaml file here" in capsys.readouterr().err


@pytest.mark.long
def test_a_pull_request_is_planned_at_both_refs_at_once(two_commits, capsys, plans_started):
    argv = ["diff", "HEAD~1", "main", "--stack", "dev", "--project-dir", str(two_commits)]
    assert main([*argv, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [c["urn"].rsplit("::", 1)[1] for c in d["changed"]] == ["endpoint-iec"]
    assert d["changed"][0]["paths"] == ["spec.pdSpec.routingThreshold"]
    assert len(plans_started) == 2
    # Refs naming the same commit are planned once.
    argv = ["diff", "HEAD", "main", "--stack", "dev", "--project-dir", str(two_commits)]
    assert main([*argv, "--format", "text"]) == 0
    assert capsys.readouterr().out.strip() == "dev: no changes"
    assert len(plans_started) == 3
    # The worktrees are gone afterwards.
    listed = subprocess.run(
        ["git", "-C", str(two_commits), "worktree", "list"], capture_output=True, text=True
    )
    assert len(listed.stdout.splitlines()) == 1
