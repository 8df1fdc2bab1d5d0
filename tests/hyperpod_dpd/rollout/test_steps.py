"""A rollout's step maths: the weights a verdict moves to, the keys it sets, and the update
message a later run reads the step back from."""

from __future__ import annotations

import argparse
import re

import pytest

from core.cli_inputs import duration, duration_seconds, weight_steps
from hyperpod_dpd.rollout.steps import Step, step_for, step_of_message

SPLIT = {"baseline": 95, "candidate": 5}


@pytest.mark.parametrize(
    ("verdict", "traffic", "steps", "after"),
    [
        ("promote", SPLIT, (5, 25, 50, 100), {"baseline": 75, "candidate": 25}),
        ("promote", {"baseline": 50, "candidate": 50}, (5, 25, 50, 100),
         {"baseline": 0, "candidate": 100}),
        ("promote", SPLIT, (10, 100), {"baseline": 90, "candidate": 10}),
        ("promote", {"baseline": 93, "candidate": 7}, (5, 25, 50, 100),
         {"baseline": 75, "candidate": 25}),  # between steps: the next one up
        ("rollback", {"baseline": 50, "candidate": 50}, (5, 25, 50, 100),
         {"baseline": 100, "candidate": 0}),
        ("hold", SPLIT, (5, 25, 50, 100), None),
        ("promote", {"baseline": 0, "candidate": 100}, (5, 25, 50, 100), None),
        ("rollback", {"baseline": 100, "candidate": 0}, (5, 25, 50, 100), None),
    ],
)  # fmt: skip
def test_a_verdict_moves_the_candidate_to_its_step(verdict, traffic, steps, after):
    step = step_for(verdict, traffic, "candidate", steps)
    assert (step and step.after) == after


def test_a_step_of_three_endpoints_takes_from_the_heaviest_first():
    step = step_for("promote", {"a": 60, "b": 35, "candidate": 5}, "candidate", (5, 50, 100))
    assert step.after == {"a": 15, "b": 35, "candidate": 50}
    assert step.changed == {"hyperpod-dpd:traffic.a": 15, "hyperpod-dpd:traffic.candidate": 50}
    assert step.restored == {"hyperpod-dpd:traffic.a": 60, "hyperpod-dpd:traffic.candidate": 5}


def test_the_update_message_names_the_step_and_reads_back():
    step = Step("rollback", "candidate", {"baseline": 75, "candidate": 25},
                {"baseline": 100, "candidate": 0})  # fmt: skip
    message = step.message("canary")
    assert message == (
        "hyperpod-dpd rollout canary: rollback candidate 25% -> 0%; weights "
        "baseline=100,candidate=0 (was baseline=75,candidate=25)"
    )
    assert step_of_message(message) == step
    assert step_of_message("pulumi up by a person") is None
    assert step_of_message(message.replace("baseline=100", "baseline=x")) is None


@pytest.mark.parametrize("value", ["", "5,3,100", "5,50", "0,100", "5,5,100", "5,101", "a,100"])
def test_weight_steps_must_increase_to_100(value):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape("e.g. 5,25,50,100")):
        weight_steps(value)


def test_weight_steps_and_durations_read_as_numbers():
    assert weight_steps("5,25,50,100") == (5, 25, 50, 100)
    assert weight_steps("100") == (100,)
    assert duration_seconds(duration("30m")) == 1800
    assert duration_seconds(duration("1d")) == 86400
    for bad in ("0m", "30", "m", "1.5h", "30 m", "9999999s"):
        with pytest.raises(argparse.ArgumentTypeError):
            duration(bad)
