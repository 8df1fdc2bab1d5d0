"""What a workflow job's `runs-on` takes to run on a stack's runner (settings/ci.py): a label the
runner answers to, decided by the stack file, so `deploy.yml` never hard-codes where a stack's
API answers."""

from __future__ import annotations

from typing import Any

from core.problems import ConfigError, ConfigProblem
from core.vocabulary import ci_runner_project
from settings import StackSettings
from settings.config.errors import full_key, set_fix

GITHUB_HOSTED = "ubuntu-latest"


def runs_on(settings: StackSettings, stack: str, run_id: str, run_attempt: str) -> Any:
    """The `runs-on` value (a label, or a list of labels) for `stack`'s deploy jobs in the
    workflow run `run_id`, attempt `run_attempt`. ConfigError when a GitHub-hosted runner could
    not reach the stack's API (it is private)."""
    ci = settings.ci
    if ci.runner == "codebuild":
        # CodeBuild user guide, "Tutorial: Configure a CodeBuild-hosted GitHub Actions runner":
        # runs-on: codebuild-<project-name>-${{ github.run_id }}-${{ github.run_attempt }}.
        return f"codebuild-{ci_runner_project(stack)}-{run_id}-{run_attempt}"
    if ci.runner == "self-hosted":
        return ["self-hosted", *ci.labels]
    if not settings.eks.public_access_cidrs:
        key = full_key(("ci", "runner"))
        raise ConfigError(
            [
                ConfigProblem(
                    key,
                    ci.runner,
                    "codebuild or self-hosted while hyperpod-dpd:eks.publicAccessCidrs is [] "
                    "(the EKS API is private: a GitHub-hosted runner cannot reach it, and "
                    "opening the API to the internet is refused on every stack)",
                    f"{set_fix(key, 'codebuild')} with hyperpod-dpd:ci.repository and "
                    "hyperpod-dpd:ci.connectionArn (docs/deploy.md, 'A runner that reaches the "
                    "private API')",
                )
            ],
            f"stack {stack}'s CI runner",
        )
    return GITHUB_HOSTED
