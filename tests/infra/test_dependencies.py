"""The HyperPod dependencies release: addressed the same on every machine, fetching nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.versions import HYPERPOD_DEPENDENCIES_CHART
from infra.charts import chart_path
from tests.conftest import ROOT, run_stack, stack_raw


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_input_holds_an_absolute_path_and_the_chart_is_project_relative(stack):
    run = run_stack(stack_raw(stack), stack=stack)
    (release,) = run.of_type("kubernetes:helm.sh/v3:Release")
    assert release.inputs["chart"] == chart_path(HYPERPOD_DEPENDENCIES_CHART)
    assert release.inputs["dependencyUpdate"] is False  # sub-charts vendored: no fetch on preview
    # Nothing of this machine: neither the checkout's directory nor the user's home (container
    # paths such as /opt/ml/model are the pods' own).
    text = json.dumps([r.inputs for r in run.resources])
    assert str(ROOT) not in text and str(Path.home()) not in text
