"""One autoscaled pool's signal, judged before anything renders: a built-in metric's target within
the metric's range and a pool whose pods its selector can tell apart (core/vllm/pod_names.py); a
query of the user's that parses and returns one series (settings/endpoint/promql.py)."""

from __future__ import annotations

from core.problems import ConfigProblem
from core.vllm.pod_names import DEPLOYMENT_NAME_MAX, worker_deployment
from core.vllm.scaling_signals import SIGNALS
from settings.config.errors import set_fix
from settings.endpoint.model import EndpointConfig, ScalingConfig
from settings.endpoint.promql import check_query


def check_signal(
    e: EndpointConfig, pool: str, scaling: ScalingConfig, key: str, name_key: str
) -> list[ConfigProblem]:
    """`key`: the pool's autoscaling key; `name_key`: the endpoint's name key."""
    if scaling.query is not None:
        return check_query(scaling.query, f"{key}.query")
    if scaling.metric is None:
        return []
    return _check_target(scaling, key) + _check_pod_names(e, pool, key, name_key)


def _check_target(scaling: ScalingConfig, key: str) -> list[ConfigProblem]:
    signal = SIGNALS[scaling.metric]  # type: ignore[index]
    target = scaling.target
    if signal.top is None or target is None or target < signal.top:
        return []
    example = round(min(0.8, signal.top * 0.8), 2)
    return [
        ConfigProblem(
            f"{key}.target",
            target,
            f"a value below {signal.top:g}: metric {scaling.metric} is vLLM's "
            f'{signal.metric.name}, {signal.unit} ("{signal.metric.help}"), so a target of '
            f"{target:g} is never reached and the pool never scales out",
            set_fix(f"{key}.target", example),
        )
    ]


def _check_pod_names(e: EndpointConfig, pool: str, key: str, name_key: str) -> list[ConfigProblem]:
    deployment = worker_deployment(e.name, pool)
    if len(deployment) <= DEPLOYMENT_NAME_MAX:
        return []
    room = DEPLOYMENT_NAME_MAX - (len(deployment) - len(e.name))
    return [
        ConfigProblem(
            name_key,
            e.name,
            f"at most {room} characters for a {pool} pool scaled on a built-in metric: its "
            f"Deployment '{deployment}' is longer than {DEPLOYMENT_NAME_MAX}, Kubernetes cuts "
            "its pods' names, and the pool's selector could not tell its pods from another "
            "endpoint's",
            f"shorten {name_key} to {room} characters, or give {key}.query (a query of your "
            f"own) instead of {key}.metric",
        )
    ]
