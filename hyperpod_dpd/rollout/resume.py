"""After a kill (command.py's loop step 1, reconcile): a step an earlier run was killed in is
finished from its journal (journal.py); a step applied but never committed (a CI runner gone with
its checkout) is written back from the stack's history."""

from __future__ import annotations

from hyperpod_dpd.rollout.apply import Applying
from hyperpod_dpd.rollout.git_commit import CommitFailed
from hyperpod_dpd.rollout.journal import Journal, clear_journal
from hyperpod_dpd.rollout.report import Decision, update_name
from settings.stack_file import Stack


class Resuming(Applying):
    """A rollout that finishes the step an earlier run stopped in."""

    def _resume(
        self, read: Stack, journal: Journal, held: dict, deployed: dict | None
    ) -> Decision | None:
        """Finish the step of `journal` where an earlier run stopped (None: nothing to finish:
        judge afresh)."""
        step = journal.step
        since = f"the {step.verdict} {step.moves} judged at {journal.started}"
        if held == step.after and deployed == step.before:
            # Stopped after writing the stack file, before the update ended: apply it.
            reasons = [f"{since} was written but not applied when the last run stopped: "
                       "applying it", *journal.reasons]  # fmt: skip
            return self._apply(read, step, reasons, None, written=True, decision="resume")
        clear_journal(self.project_dir, self.stack)
        if held == step.after and deployed == step.after:
            # Stopped after the update: only the commit (with --commit) is left.
            try:
                commit = self._commit(step, journal.reasons, None)
            except CommitFailed as exc:
                return self._stopped(held, [f"{since} is applied; git refused its commit: {exc}"])
            return self._decision(
                "resume", step.before, [f"{since} was applied when the last run stopped",
                                        *journal.reasons],
                None, after=step.after, verdict=step.verdict, applied=True, commit=commit,
                next=self._after_step(step),
            )  # fmt: skip
        return None  # stopped before the stack file was written, or a stale journal

    def _adopt(self, held: dict, deployed: dict) -> Decision | None:
        """The stack deployed a rollout step that the stack file lacks (the run that applied
        it stopped before committing, with its checkout): write it into the file."""
        last = next((u for u in self.pulumi.history() if u.succeeded), None)
        step = last.step if last else None
        if step is None or step.after != deployed or step.before != held:
            return None
        self.pulumi.set_weights(step.changed)
        try:
            commit = self._commit(step, [update_name(self.stack, last.version)], last.version)
        except CommitFailed as exc:
            return self._stopped(held, [f"the stack file took {update_name(self.stack, last.version)}'s "
                                        f"weights; git refused their commit: {exc}"])  # fmt: skip
        return self._decision(
            "resume", held, [
                f"{update_name(self.stack, last.version)} applied the {step.verdict} {step.moves}, and the "
                f"run that applied it stopped before {self.stack_file.name} took its weights: "
                "written now"
            ], None, after=step.after, verdict=step.verdict, applied=True,
            update=last.version, commit=commit, next=self._after_step(step),
        )  # fmt: skip
