"""Applying a rollout step (command.py's loop step 3): the next weights shown to change the
routing only (routing.py), written with `pulumi config set-all --path` under the rollout's journal
(journal.py); a preview that must show nothing else pending, and the deployed weights read again
after it (else the file is put back); `pulumi up` with the policy pack; the deployed weights
checked; with `--commit`, the stack file committed with the verdict."""

from __future__ import annotations

from hyperpod_dpd.canary.command import Assessment
from hyperpod_dpd.rollout.git_commit import CommitFailed
from hyperpod_dpd.rollout.journal import clear_journal, write_journal
from hyperpod_dpd.rollout.pulumi_stack import WEIGHTS_OUTPUT, StepFailed
from hyperpod_dpd.rollout.report import Decision, update_name
from hyperpod_dpd.rollout.routing import routing_of
from hyperpod_dpd.rollout.state import RolloutState
from hyperpod_dpd.rollout.steps import Step, weights_text
from settings.stack_file import Stack


class Applying(RolloutState):
    """A rollout that applies a step, or stops it and says why."""

    def _apply(
        self,
        read: Stack,
        step: Step,
        reasons: list[str],
        a: Assessment | None,
        written: bool = False,
        decision: str | None = None,
    ) -> Decision:
        """Apply `step` (`written`: its weights are in the stack file already)."""
        before = step.before
        routing = routing_of(self.project_dir, read, step.before, step.after)
        if routing.refused:
            if written:
                self._put_back(step)
            return self._stopped(before, self._beyond_routing(step, routing.refused), a)
        if not written:
            now = self.pulumi.deployed_weights()
            if now != before:  # applied elsewhere while this one judged
                return self._stopped(before, [self._drift(before, now)], a)
            write_journal(self.project_dir, self.stack, step, reasons, self.args.window)
            self.pulumi.set_weights(step.changed)
        self._write_pack_config(read)
        try:
            pending = self.pulumi.preview(self.pack, self.pack_config)
        except StepFailed as exc:
            self._put_back(step)
            return self._stopped(before, [f"pulumi preview --stack {self.stack} failed: {exc}"], a)
        besides = [c for c in pending if not (c.op == "update" and c.urn in routing.urns)]
        if besides:
            self._put_back(step)
            return self._stopped(before, [
                f"besides the routing, pulumi up --stack {self.stack} would: "
                + "; ".join(str(c) for c in besides)
                + f". Deploy or undo that first (pulumi preview --diff --stack {self.stack})"
            ], a)  # fmt: skip
        # A preview takes minutes on a whole stack: another rollout's step (from another
        # machine: the lock is this checkout's) or a deploy may land meanwhile. Read the deployed
        # weights again, so that such a step stops this one instead of being overwritten by it
        # (what stays open: the moment between this read and the update taking Pulumi's lock).
        now = self.pulumi.deployed_weights()
        if now != before:
            self._put_back(step)
            return self._stopped(before, [
                f"while the step previewed, stack {self.stack} deployed {weights_text(now or {})} "
                f"(its {WEIGHTS_OUTPUT} output; another rollout or a deploy): "
                f"{self.stack_file.name} is back at {weights_text(before)}. Set it to the "
                f"deployed weights (git pull, if a rollout committed them), then roll out"
            ], a)  # fmt: skip
        try:
            applied = self.pulumi.up(self.pack, self.pack_config, step.message(self.stack))
        except StepFailed as exc:
            return self._stopped(before, [
                f"pulumi up --stack {self.stack} failed: {exc}. {self.stack_file.name} holds the step's weights and "
                f"the rollout's journal the step: run the rollout again to finish it"
            ], a)  # fmt: skip
        if applied.weights != step.after:
            return self._stopped(before, [
                f"after {update_name(self.stack, applied.version)} the stack's {WEIGHTS_OUTPUT} output is "
                f"{applied.weights}, not the step's {weights_text(step.after)}"
            ], a)  # fmt: skip
        try:
            commit = self._commit(step, reasons, applied.version)
        except CommitFailed as exc:
            return self._stopped(before, [
                f"{update_name(self.stack, applied.version)} applied the step, but git refused its commit "
                f"({exc}); run the rollout again to commit it"
            ], a)  # fmt: skip
        clear_journal(self.project_dir, self.stack)
        return self._decision(
            decision or step.verdict, before, reasons, a, after=step.after, verdict=step.verdict,
            applied=True, update=applied.version, commit=commit, calls=self.calls(step),
            next=self._after_step(step),
        )  # fmt: skip
