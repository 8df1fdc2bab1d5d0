"""The GitHub workflows run third-party actions with our cloud credentials: each is pinned to a
commit SHA (a tag can be moved to other code), the tag named in a comment for humans."""

from __future__ import annotations

import re

from scripts.lock import versions
from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[^@\s]+)@(?P<ref>\S+)(?P<rest>.*)$")
# Pinned by tag, not commit: nothing (every action's SHA was read off its own repository's tag).
TAG_PINNED: set[str] = set()


def uses() -> list[tuple[str, int, re.Match]]:
    found = []
    for path in WORKFLOWS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := USES.match(line):
                found.append((path.name, number, match))
    return found


def test_every_action_is_pinned_to_a_commit_with_its_tag_in_a_comment():
    assert WORKFLOWS and uses()
    loose = []
    for name, number, m in uses():
        if f"{m['action']}@{m['ref']}" in TAG_PINNED:
            continue
        if not (
            re.fullmatch(r"[0-9a-f]{40}", m["ref"]) and re.fullmatch(r"\s+# v\d\S*", m["rest"])
        ):
            loose.append(f"{name}:{number}: {m.group(0).strip()}")
    assert loose == [], "pin these to a commit SHA with '# vX.Y.Z':\n" + "\n".join(loose)


def test_one_action_version_is_pinned_to_one_commit_everywhere():
    commits: dict[str, set[str]] = {}
    for _, _, m in uses():
        commits.setdefault(f"{m['action']} {m['rest'].strip()}", set()).add(m["ref"])
    assert {k: v for k, v in commits.items() if len(v) > 1} == {}


def _pulumi_steps():
    import yaml

    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            steps = job["steps"]
            for i, step in enumerate(steps):
                if str(step.get("uses", "")).startswith("pulumi/actions@"):
                    yield path.name, steps[:i], step["with"]


def test_every_pulumi_run_pins_the_cli_creates_the_stack_and_builds_the_pack_first():
    sdk = versions((ROOT / "requirements.txt").read_text())["pulumi"]
    found = list(_pulumi_steps())
    # The preview of pull requests; the deploy's CLI (for preflight) and its up; the rollout's CLI.
    assert len(found) == 4
    for name, before, inputs in found:
        assert inputs["pulumi-version"] == sdk, name  # the CLI the README names
        if "command" not in inputs:  # the CLI alone (the rollout's Automation API, preflight)
            continue
        # A new stack's first deploy creates it; a preview's read-only token could not (and the
        # stack it previews exists once deployed).
        assert bool(inputs.get("upsert")) is (inputs["command"] == "up"), name
        assert inputs["policyPacks"] == "build/policy-pack", name
        runs = " ".join(str(s.get("run", "")) for s in before)
        assert "policy-pack" in runs or "make test" in runs, name  # the pack's venv exists


def test_every_stack_file_gets_its_plan_diff_on_a_pull_request():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github/workflows/pull-request.yml").read_text())
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                    for p in ROOT.glob("Pulumi.*.yaml"))  # fmt: skip
    assert sorted(workflow["jobs"]["plan-diff"]["strategy"]["matrix"]["stack"]) == stacks


def test_the_rollout_runs_mains_code_in_its_own_environment_and_pushes_its_commit():
    """Dispatch (a stack with a traffic split, its candidate) and schedule (the canary); the job
    that holds the stack's credentials runs on main only, in <stack>-rollout, and pushes the
    step's commit with the rollout app's token (no workflow's GITHUB_TOKEN writes the
    repository: a bypass for it would let a branch's workflow push to main); one run per stack
    at a time."""
    import yaml

    from specs.ci.runner import WORKFLOWS as RUNNER_WORKFLOWS

    workflow = yaml.safe_load((ROOT / ".github/workflows/rollout.yml").read_text())
    assert workflow["name"] == "rollout" and "rollout" in RUNNER_WORKFLOWS  # the runner's filter
    on = workflow.get("on", workflow.get(True))
    from settings.stack_file import read_stack

    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                    for p in ROOT.glob("Pulumi.*.yaml"))  # fmt: skip
    split = [s for s in stacks if read_stack(ROOT, s).settings.traffic]
    assert sorted(on["workflow_dispatch"]["inputs"]["stack"]["options"]) == split == ["canary"]
    assert on["schedule"] == [{"cron": "*/30 * * * *"}]  # the verdict's default window
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    writers = [
        n for n, j in jobs.items() if (j.get("permissions") or {}).get("contents") == "write"
    ]
    assert writers == []
    job = jobs["step"]
    assert job["if"] == "github.ref == 'refs/heads/main'"
    assert job["environment"] == "${{ inputs.stack || 'canary' }}-rollout"
    assert job["concurrency"] == {"group": "rollout-${{ inputs.stack || 'canary' }}",
                                  "cancel-in-progress": False}  # fmt: skip
    steps = job["steps"]
    uses = [str(s.get("uses", "")).split("@")[0] for s in steps]
    # The app's token, minted first, is the checkout's: the push below uses it.
    assert uses[:2] == ["actions/create-github-app-token", "actions/checkout"]
    assert steps[0]["with"]["permission-contents"] == "write"
    assert steps[1]["with"]["token"] == "${{ steps.app.outputs.token }}"
    run = next(i for i, s in enumerate(steps) if "hyperpod-dpd rollout" in s.get("run", ""))
    for needed in ("aws-actions/configure-aws-credentials", "pulumi/auth-actions",
                   "pulumi/actions"):  # fmt: skip
        assert uses.index(needed) < run, needed
    command = steps[run]["run"]
    assert '--stack "${STACK}"' in command and "--once" in command and "--commit" in command
    push = steps[run + 1]
    assert push["if"] == "${{ !cancelled() }}" and "git push origin HEAD:main" in push["run"]
