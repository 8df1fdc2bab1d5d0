"""The policy gate: every rule, once, on the desired state, before the first resource exists.

`__main__.py` calls `judgement` (the desired state and the rules' verdict on it) and `enforce`
after reading the config and before creating any component: a mandatory violation stops
`pulumi up` (and the offline plan) with the rules' messages and nothing registered, so a typo in
an endpoint field never leaves a half-created stack. The stack's `hyperpod-dpd:policy`
(per-rule levels, advisoriesMandatory) decides what is mandatory. The offline plan judges once,
before it runs the program, and hands its judgement over (HANDED_JUDGEMENT).
"""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from dataclasses import dataclass

import pulumi

from core.pulumi_commands import naming_stack
from core.refs import fill, refs_in
from policies.rules import Limits, ResourceView, Violation, evaluate
from settings import StackSettings
from specs.desired import DesiredState, desired_state


class PolicyStop(pulumi.RunError):
    """A RunError: `pulumi up` prints the violations without a traceback."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        lines = [
            f"{len(violations)} mandatory policy violation(s); nothing was created:",
            *(f"  {v.policy}: {v.urn.rsplit('::', 1)[-1]}: {v.message}" for v in violations),
        ]
        super().__init__("\n".join(lines))


def views(desired: DesiredState) -> list[ResourceView]:
    """The desired resources as a policy sees them: type, name, URN and the engine's props,
    with `${name.attr}` placeholders for outputs that do not exist yet. A placeholder for an
    output that echoes a given input (a named bucket's `bucket`) is that input's value."""
    resources = desired.resources()
    given = {
        f"{d.name}.{key}": value
        for d in resources
        for key, value in d.props.items()
        if isinstance(value, str) and not any(refs_in(value))
    }
    return [
        ResourceView(
            d.type,
            d.name,
            d.urn(desired.stack, desired.project),
            fill(d.view_props(), given),
            d.facts,
        )
        for d in resources
    ]


def judge(desired: DesiredState, limits: Limits | None = None) -> list[Violation]:
    """Every rule on the desired state, at the levels the stack's policy settings give."""
    policy = desired.settings.policy
    return evaluate(
        views(desired),
        enforcement=policy.enforcement,
        advisories_mandatory=policy.advisories_mandatory,
        limits=limits,
    )


@dataclass(frozen=True)
class Judgement:
    """A stack's desired state and every rule's verdict on it."""

    desired: DesiredState
    violations: list[Violation]


# The judgement of the command running the program (the offline plan), made before the run from
# the very settings it hands the program (program/stack_config.py HANDED_SETTINGS).
HANDED_JUDGEMENT: ContextVar[Judgement | None] = ContextVar("handed_judgement", default=None)


def judgement(
    settings: StackSettings, project: str, stack: str, *, has_hf_token: bool = False
) -> Judgement:
    """The desired state of `settings` and the rules' verdict: made here, once, or taken from
    the command that made it for these same settings before running the program."""
    handed = HANDED_JUDGEMENT.get()
    if handed is not None and handed.desired.settings is settings:
        return handed
    desired = desired_state(settings, project, stack, has_hf_token=has_hf_token)
    # The fixes name the stack in each Pulumi command they print (core/pulumi_commands.py).
    found = [dataclasses.replace(v, message=naming_stack(v.message, stack)) for v in judge(desired)]
    return Judgement(desired, found)


# How an advisory finding starts in the program's log (the offline plan lists them itself and
# leaves these lines out: hyperpod_dpd/plan/engine.py).
ADVISORY_LOG_PREFIX = "advisory "


def enforce(verdict: Judgement) -> list[Violation]:
    """Raise PolicyStop on any mandatory violation, else warn of the advisory ones (they show in
    `pulumi up`'s diagnostics) and return them."""
    violations = verdict.violations
    mandatory = [v for v in violations if v.enforcement == "mandatory"]
    if mandatory:
        raise PolicyStop(mandatory)
    for v in violations:
        pulumi.log.warn(
            f"{ADVISORY_LOG_PREFIX}{v.policy}: {v.urn.rsplit('::', 1)[-1]}: {v.message}"
        )
    return violations
