"""One autoscaled pool's signal, judged before anything renders: a built-in metric's target the
signal can pass (below its top: a fraction's 1, the batch vLLM runs per worker), a pool whose pods
its selector can tell apart (core/vllm/pod_names.py); a query of the user's that parses, returns
one series and reads series the pinned vLLM exports (settings/endpoint/promql.py)."""

from __future__ import annotations

import math

from core.autoscaling import HPA_TOLERANCE, reachable_target
from core.problems import ConfigProblem
from core.vllm.pod_names import DEPLOYMENT_NAME_MAX, worker_deployment
from core.vllm.scaling_signals import SIGNALS
from settings.config.errors import set_fix
from settings.endpoint.model import EndpointConfig, ScalingConfig
from settings.endpoint.numbers import PoolNumbers
from settings.endpoint.promql import check_query

RUNNING = "running-requests"


def check_signal(
    e: EndpointConfig,
    pool: str,
    scaling: ScalingConfig,
    key: str,
    name_key: str,
    numbers: PoolNumbers | None = None,
) -> list[ConfigProblem]:
    """`key`: the pool's autoscaling key; `name_key`: the endpoint's name key; `numbers`: what
    the pool's workers run with (None: not known, its own checks refused them)."""
    if scaling.query is not None:
        return check_query(scaling.query, f"{key}.query")
    if scaling.metric is None:
        return []
    return _check_target(scaling, key, numbers) + _check_pod_names(e, pool, key, name_key)


def _top(scaling: ScalingConfig, numbers: PoolNumbers | None) -> tuple[float, str] | None:
    """The most the signal reaches per replica, and why; None: unbounded."""
    signal = SIGNALS[scaling.metric]  # type: ignore[index]
    if signal.top is not None:
        return signal.top, (
            f"metric {scaling.metric} is vLLM's {signal.metric.name}, {signal.unit} (\""
            f'{signal.metric.help}")'
        )
    if scaling.metric != RUNNING or numbers is None:
        return None
    seqs, dp = numbers.max_num_seqs, numbers.data_parallel_size
    engines = f" x {dp.value} data-parallel engines ({dp.where})" if dp.value > 1 else ""
    return seqs.value * dp.value, (
        f"metric {scaling.metric} counts the requests vLLM runs at once ({signal.metric.name}), "
        f"at most --max-num-seqs {seqs.value} ({seqs.where}){engines} per worker"
    )


def _check_target(
    scaling: ScalingConfig, key: str, numbers: PoolNumbers | None
) -> list[ConfigProblem]:
    top = _top(scaling, numbers)
    target = scaling.target
    if top is None or target is None or target < reachable_target(top[0]):
        return []
    most, why = top
    example = math.floor(most * 0.8) if most >= 10 else round(most * 0.8, 2)
    return [
        ConfigProblem(
            f"{key}.target",
            target,
            f"a value below {reachable_target(most):.3g}: {why}, so the signal tops at "
            f"{most:g} per replica, and the HPA that KEDA drives scales out only past "
            f"{1 + HPA_TOLERANCE:g} x target (its tolerance, kubernetes.io/docs/tasks/"
            "run-application/horizontal-pod-autoscale/#algorithm-details): a target of "
            f"{target:g} is never passed and the pool never scales out",
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
