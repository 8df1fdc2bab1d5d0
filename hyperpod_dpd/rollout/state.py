"""A rollout's state and the pieces its steps share (command.py runs the loop, apply.py applies
a step, resume.py finishes one an earlier run stopped in): the stack file, the policy pack's
config, the canary's assessment, the decision a step reports and the commit it makes."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.cli_inputs import duration_seconds
from core.vocabulary import PROJECT
from hyperpod_dpd.canary.command import Assessment, assess
from hyperpod_dpd.rollout.git_commit import commit_stack_file
from hyperpod_dpd.rollout.journal import clear_journal, state_dir
from hyperpod_dpd.rollout.pulumi_stack import WEIGHTS_OUTPUT, PulumiStack
from hyperpod_dpd.rollout.report import Decision, update_name
from hyperpod_dpd.rollout.steps import Step, weights_text
from settings.stack_file import Stack
from specs.traffic_steps import reweighted, set_commands


@dataclass
class RolloutState:
    """What a rollout knows (its stack, candidate and policy pack) and the pieces its steps
    share: the assessment, the decision it reports, the commit, the commands it shows."""

    args: argparse.Namespace
    project_dir: Path
    candidate: str
    pack: Path
    api: PulumiStack | None

    @property
    def stack(self) -> str:
        return self.args.stack

    @property
    def stack_file(self) -> Path:
        return self.project_dir / f"Pulumi.{self.stack}.yaml"

    @property
    def pack_config(self) -> Path:
        return state_dir(self.project_dir) / f"{self.stack}.policy.json"

    # --- Pieces ------------------------------------------------------------------------------
    @property
    def pulumi(self) -> PulumiStack:
        assert self.api is not None  # a dry run asks Pulumi nothing
        return self.api

    def _assess(self, read: Stack) -> Assessment:
        return assess(read, self.candidate, self.args.baseline, self.args.window,
                      self.args.prometheus_url)  # fmt: skip

    def _settled(self, held: dict) -> Decision | None:
        """Nothing to judge: the candidate takes everything, or nothing."""
        c, weight = self.candidate, held[self.candidate]
        if weight >= 100:
            others = [k for k in held if k != c]
            return self._decision("done", held, [f"{c} takes all the traffic"], None,
                                  next=self._retire(others))  # fmt: skip
        if weight == 0:
            first = reweighted(held, c, self.args.steps[0])
            return self._decision("rolledBack", held, [
                f"{c} is at 0% ({PROJECT}:traffic.{c}): rolled back, or never started; a "
                "rollout does not bring a candidate back by itself"
            ], None, next=f"once it is fixed, start again: {set_commands(held, first, self.stack)}"
            )  # fmt: skip
        return None

    def _too_young(self, held: dict) -> str | None:
        """Why a promotion waits: the weights it judged have not served a whole window."""
        since, version = None, None
        for update in self.pulumi.history():
            if not update.succeeded:
                continue
            if update.weights != held:
                break
            since, version = update.end_time, update.version
        if since is None:
            return None
        age = datetime.now(UTC).replace(tzinfo=None) - since
        window = duration_seconds(self.args.window)
        if age.total_seconds() >= window:
            return None
        left = int(window - age.total_seconds())
        return (
            f"the weights {weights_text(held)} went live {int(age.total_seconds()) // 60} min "
            f"ago ({update_name(self.stack, version)}) and the window is {self.args.window}: a promotion "
            f"judges a whole window at them; {left // 60 + 1} min to go"
        )

    def _drift(self, held: dict, deployed: dict | None) -> str:
        return (
            f"stack {self.stack} deployed {weights_text(deployed or {})} (its {WEIGHTS_OUTPUT} "
            f"output) but {self.stack_file.name} holds {weights_text(held)}: a weight changed "
            f"outside a rollout, or a deploy is pending. Deploy the file's (pulumi up --stack "
            f"{self.stack}) or set the file to the deployed ones, then roll out"
        )

    def _beyond_routing(self, step: Step, refused: list[str]) -> list[str]:
        return [
            f"the {step.verdict} {step.moves} would change more than the routing "
            f"(hyperpod-dpd diff of the two plans): " + "; ".join(refused)
        ]

    def _put_back(self, step: Step) -> None:
        """Undo a written step: the stack file back to its weights before, no journal."""
        self.pulumi.set_weights(step.restored)
        clear_journal(self.project_dir, self.stack)

    def _write_pack_config(self, read: Stack) -> None:
        import json

        from policies.pack import pack_config

        policy = read.settings.policy
        text = json.dumps(pack_config(policy.enforcement, policy.advisories_mandatory), indent=2)
        self.pack_config.write_text(text + "\n")

    def _commit(self, step: Step, reasons: list[str], version: int | None) -> str | None:
        if not self.args.commit:
            return None
        return commit_stack_file(self.project_dir, self.stack_file,
                                 self._commit_message(step, reasons, version))  # fmt: skip

    def _commit_message(self, step: Step, reasons: list[str], version: int | None) -> str:
        changed = ", ".join(
            f"{k} {step.before.get(k)} -> {w}" for k, w in sorted(step.after.items())
            if step.before.get(k) != w
        )  # fmt: skip
        lines = [
            f"rollout {self.stack}: {step.verdict} {step.moves}",
            "",
            f"hyperpod-dpd canary's verdict over {self.args.window}: {step.verdict}",
            *(f"- {r}" for r in reasons),
            "",
            f"{PROJECT}:traffic: {changed}",
        ]
        if version is not None:
            lines.append(update_name(self.stack, version))
        return "\n".join(lines) + "\n"

    def calls(self, step: Step) -> list[str]:
        """The Pulumi (and git) commands a step runs, as a person would type them."""
        pack, config = self._shown(self.pack), self._shown(self.pack_config)
        sets = " ".join(f"--plaintext {k}={v}" for k, v in step.changed.items())
        policy = f"--policy-pack {pack} --policy-pack-config {config}"
        out = [
            f"pulumi config set-all --path {sets} --stack {self.stack}",
            f"pulumi preview {policy} --stack {self.stack}",
            f"pulumi up --yes --skip-preview {policy} --message "
            f"{shlex.quote(step.message(self.stack))} --stack {self.stack}",
        ]
        if self.args.commit:
            title = f"rollout {self.stack}: {step.verdict} {step.moves}"
            out.append(f"git commit --only -m {shlex.quote(title)} -- {self.stack_file.name}")
        return out

    def _shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.project_dir))
        except ValueError:
            return str(path)

    def _after_step(self, step: Step) -> str | None:
        if step.after[self.candidate] >= 100:
            return self._retire([k for k in step.after if k != self.candidate])
        if step.verdict == "rollback":
            return f"read the reasons in docs/alerts.md; {self.candidate} stays at 0%"
        return None

    def _retire(self, others: list[str]) -> str:
        keys = " and ".join(f"{PROJECT}:endpoints.{k}" for k in others)
        return (
            f"retire the baseline: delete {keys} and their keys of {PROJECT}:traffic (and the "
            f"instance groups only they use) from {self.stack_file.name}, then pulumi up --stack "
            f"{self.stack} (docs/canary.md, step 8)"
        )

    def _decision(
        self, decision: str, held: dict, reasons: list[str], a: Assessment | None, **more
    ) -> Decision:
        more.setdefault("verdict", a.verdict.verdict if a else None)
        return Decision(decision, self.stack, self.candidate, held, reasons, assessment=a, **more)

    def _stopped(
        self, held: dict, reasons: list[str], a: Assessment | None = None, **more
    ) -> Decision:
        return self._decision("stopped", held, reasons, a, next="fix what it names, then run "
                              "the rollout again", **more)  # fmt: skip
