"""`hyperpod-dpd rollout`, run: the loop of steps (the parser is hyperpod_dpd/cli/rollout.py).

A step, under the rollout's lock (journal.py):
1. Reconcile. The weights the stack file holds against those the stack deployed (its
   `trafficWeights` output): a step an earlier run was killed in is finished (its journal), a
   step applied but never committed (a CI runner gone with its checkout) is written back from
   the stack's history (resume.py); any other difference stops the rollout, named.
2. Judge: the canary's verdict (hyperpod_dpd/canary) on the window. A promotion also waits
   until the weights it judges have served a whole window (the stack's history says since when).
3. Apply: the next weights (steps.py), shown to change the routing only (routing.py), written
   with `pulumi config set-all --path`; a preview that must show nothing else pending, and the
   deployed weights read again after it (else the file is put back); `pulumi up` with the policy
   pack; the deployed weights checked; with `--commit`, the stack file committed with the
   verdict (apply.py).

What a rollout holds and the pieces its steps share (its decisions, commits, commands) are
state.py.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from core.cli_inputs import duration_seconds
from core.exits import UsageProblem
from core.vocabulary import PROJECT
from hyperpod_dpd.rollout.git_commit import check_can_commit
from hyperpod_dpd.rollout.journal import exclusive, read_journal
from hyperpod_dpd.rollout.pulumi_stack import WEIGHTS_OUTPUT, PulumiStack, StepFailed
from hyperpod_dpd.rollout.report import Decision
from hyperpod_dpd.rollout.resume import Resuming
from hyperpod_dpd.rollout.routing import routing_of
from hyperpod_dpd.rollout.steps import step_for
from settings.stack_file import Stack, read_stack

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


class Rollout(Resuming):
    """The loop's step: reconcile (resume.py), judge, apply (apply.py)."""

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
