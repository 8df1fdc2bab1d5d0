"""`hyperpod-dpd rollout`, run: the loop of steps (the parser is hyperpod_dpd/cli/rollout.py).

A step, under the rollout's lock (journal.py):
1. Reconcile. The weights the stack file holds against those the stack deployed (its
   `trafficWeights` output): a step an earlier run was killed in is finished (its journal), a
   step applied but never committed (a CI runner gone with its checkout) is written back from
   the stack's history; any other difference stops the rollout, named.
2. Judge: the canary's verdict (hyperpod_dpd/canary) on the window. A promotion also waits
   until the weights it judges have served a whole window (the stack's history says since when).
3. Apply: the next weights (steps.py), shown to change the routing only (routing.py), written
   with `pulumi config set-all --path`; a preview that must show nothing else pending, and the
   deployed weights read again after it (else the file is put back); `pulumi up` with the policy
   pack; the deployed weights checked; with `--commit`, the stack file committed with the
   verdict.
"""

from __future__ import annotations

import argparse
import shlex
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.cli_inputs import duration_seconds
from core.exits import UsageProblem
from core.vocabulary import PROJECT
from hyperpod_dpd.canary.command import Assessment, assess
from hyperpod_dpd.rollout.git_commit import CommitFailed, check_can_commit, commit_stack_file
from hyperpod_dpd.rollout.journal import (
    Journal,
    clear_journal,
    exclusive,
    read_journal,
    state_dir,
    write_journal,
)
from hyperpod_dpd.rollout.pulumi_stack import WEIGHTS_OUTPUT, PulumiStack, StepFailed
from hyperpod_dpd.rollout.report import Decision
from hyperpod_dpd.rollout.routing import routing_of
from hyperpod_dpd.rollout.steps import Step, step_for, weights_text
from settings.stack_file import Stack, read_stack
from specs.traffic_steps import reweighted, set_commands

PACK_MANIFEST = "PulumiPolicy.yaml"


def run(args: argparse.Namespace, project_dir: Path) -> int:
    read = read_stack(project_dir, args.stack)
    candidate = _candidate(read, args.endpoint)
    pack = args.policy_pack or project_dir / "build" / "policy-pack"
    if args.dry_run:
        decision = Rollout(args, project_dir, candidate, pack, api=None).dry_run(read)
        print(decision.render(args.format), flush=True)
        return decision.exit_code
    if not (pack / PACK_MANIFEST).is_file():
        raise UsageProblem(
            f"--policy-pack {pack}: no CrossGuard pack there ({PACK_MANIFEST}); every step's "
            "preview and update run the policy pack: build it with `make policy-pack`"
        )
    if args.commit:
        check_can_commit(project_dir, read.file.path)
    with exclusive(project_dir, args.stack):
        rollout = Rollout(args, project_dir, candidate, pack, PulumiStack(project_dir, args.stack))
        while True:
            decision = rollout.step()
            print(decision.render(args.format), flush=True)
            if decision.final or args.once:
                return decision.exit_code
            time.sleep(duration_seconds(args.interval))


def _candidate(read: Stack, endpoint: str) -> str:
    """The key of `endpoint` in the stack's split (UsageProblem naming --endpoint if none)."""
    from hyperpod_dpd.shared.endpoints import choose_endpoint

    entry = choose_endpoint(read.settings, read.name, endpoint)
    traffic = dict(read.settings.traffic)
    if entry.key not in traffic or len(traffic) < 2:
        listed = ", ".join(f"{k} {w}%" for k, w in traffic.items()) or "none"
        raise UsageProblem(
            f"--endpoint {endpoint}: not a candidate of stack {read.name}'s split "
            f"({PROJECT}:traffic: {listed}); a rollout moves an endpoint that shares "
            f"{PROJECT}:traffic with a baseline: docs/canary.md"
        )
    return entry.key


@dataclass
class Rollout:
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

    # --- A dry run: judge once, say what it would do -------------------------------------------
    def dry_run(self, read: Stack) -> Decision:
        held = dict(read.settings.traffic)
        settled = self._settled(held)
        if settled is not None:
            return settled
        a = self._assess(read)
        step = step_for(a.verdict.verdict, held, self.candidate, self.args.steps)
        if step is None:
            return self._decision(a.verdict.verdict, held, a.verdict.reasons, a,
                                  next=f"judge again after {self.args.interval}")  # fmt: skip
        routing = routing_of(self.project_dir, read, step.before, step.after)
        if routing.refused:
            return self._stopped(held, self._beyond_routing(step, routing.refused), a,
                                 dry_run=True)  # fmt: skip
        return self._decision(
            step.verdict, held, a.verdict.reasons, a, after=step.after, dry_run=True,
            calls=self.calls(step), next="run it without --dry-run to apply the step",
        )  # fmt: skip

    # --- A step -----------------------------------------------------------------------------
    def step(self) -> Decision:
        read = read_stack(self.project_dir, self.stack)
        held = dict(read.settings.traffic)
        try:
            return self._step(read, held)
        except StepFailed as exc:  # a Pulumi command the step could not do without
            return self._stopped(held, [f"pulumi: {exc}"])

    def _step(self, read: Stack, held: dict) -> Decision:
        deployed = self.pulumi.deployed_weights()
        journal = read_journal(self.project_dir, self.stack)
        if journal is not None:
            resumed = self._resume(read, journal, held, deployed)
            if resumed is not None:
                return resumed
        if deployed is None:
            return self._stopped(held, [
                f"stack {self.stack} has no {WEIGHTS_OUTPUT} output: it has not deployed "
                f"{PROJECT}:traffic yet; deploy it first: pulumi up --stack {self.stack}"
            ])  # fmt: skip
        if deployed != held:
            return self._adopt(held, deployed) or self._stopped(held, [self._drift(held, deployed)])
        settled = self._settled(held)
        if settled is not None:
            return settled
        a = self._assess(read)
        verdict = a.verdict.verdict
        if verdict == "promote":
            young = self._too_young(held)
            if young:
                return self._decision("hold", held, [young], a, verdict=verdict)
        step = step_for(verdict, held, self.candidate, self.args.steps)
        if step is None:
            return self._decision(verdict, held, a.verdict.reasons, a,
                                  next=f"judging again in {self.args.interval}")  # fmt: skip
        return self._apply(read, step, a.verdict.reasons, a)

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
                f"after pulumi update {applied.version} the stack's {WEIGHTS_OUTPUT} output is "
                f"{applied.weights}, not the step's {weights_text(step.after)}"
            ], a)  # fmt: skip
        try:
            commit = self._commit(step, reasons, applied.version)
        except CommitFailed as exc:
            return self._stopped(before, [
                f"pulumi update {applied.version} applied the step, but git refused its commit "
                f"({exc}); run the rollout again to commit it"
            ], a)  # fmt: skip
        clear_journal(self.project_dir, self.stack)
        return self._decision(
            decision or step.verdict, before, reasons, a, after=step.after, verdict=step.verdict,
            applied=True, update=applied.version, commit=commit, calls=self.calls(step),
            next=self._after_step(step),
        )  # fmt: skip

    # --- After a kill -------------------------------------------------------------------------
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
            commit = self._commit(step, [f"pulumi update {last.version}"], last.version)
        except CommitFailed as exc:
            return self._stopped(held, [f"the stack file took pulumi update {last.version}'s "
                                        f"weights; git refused their commit: {exc}"])  # fmt: skip
        return self._decision(
            "resume", held, [
                f"pulumi update {last.version} applied the {step.verdict} {step.moves}, and the "
                f"run that applied it stopped before {self.stack_file.name} took its weights: "
                "written now"
            ], None, after=step.after, verdict=step.verdict, applied=True,
            update=last.version, commit=commit, next=self._after_step(step),
        )  # fmt: skip

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
            f"ago (pulumi update {version}) and the window is {self.args.window}: a promotion "
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
            lines.append(f"pulumi update {version} of stack {self.stack}")
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
