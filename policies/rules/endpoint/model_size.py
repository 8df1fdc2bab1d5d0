"""hyperpod-dpd-model-size (advisory): DPD pays off for dense models of 70B+ parameters; smaller
and MoE models rarely gain, and colocated serving is simpler."""

from __future__ import annotations

from core.sizing.catalog import SizingError, load_model
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec in views.endpoints(resources):
        if views.pd_spec(iec) is None:
            continue
        try:
            model = load_model(views.annotation(iec, "sizing-model") or "")
        except SizingError:
            continue
        billions = model.num_params / 1e9
        if model.moe or billions < limits.min_dense_params_billion:
            kind = "an MoE model" if model.moe else f"a {billions:.0f}B dense model"
            yield Finding(
                iec.urn,
                f"{model.name} is {kind}: DPD rarely beats colocated serving below dense "
                f"{limits.min_dense_params_billion:g}B; benchmark both "
                f"({views.endpoint_key(iec, 'mode')})",
            )


RULE = Rule("hyperpod-dpd-model-size", "DPD for dense 70B+ models", "advisory", check)
