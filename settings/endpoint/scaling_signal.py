"""One autoscaled pool's signal, judged before anything renders: a built-in metric's target the
signal can pass (below its top: a fraction's 1, the batch vLLM runs per worker), a pool whose pods
its selector can tell apart (core/vllm/pod_names.py); a query of the user's that parses, returns
one series and reads series the pinned vLLM exports (settings/endpoint/promql.py); a capacity
`advise` recorded in the unit the pool scales on."""

from __future__ import annotations

import math

from core.kubernetes.autoscaling import HPA_TOLERANCE, reachable_target
from core.problems import ConfigProblem
from core.vllm.pod_names import DEPLOYMENT_NAME_MAX, worker_deployment
from core.vllm.scaling_signals import SIGNALS
from settings.config.errors import set_fix
from settings.endpoint.autoscaling import ScalingConfig
from settings.endpoint.model import EndpointConfig
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
    problems = _check_capacity(scaling, key)
    if scaling.query is not None:
        return problems + check_query(scaling.query, f"{key}.query")
    if scaling.metric is None:
        return problems
    why = f"for a {pool} pool scaled on a built-in metric"
    fix = f"give {key}.query (a query of your own) instead of {key}.metric"
    return (
        problems
        + _check_target(scaling, key, numbers)
        + check_pod_names(e, pool, name_key, why, fix)
    )


def _check_capacity(scaling: ScalingConfig, key: str) -> list[ConfigProblem]:
    """A recorded capacity in another unit than the pool's signal cannot judge its target."""
    capacity = scaling.capacity
    if capacity is None or capacity.metric == scaling.metric:
        return []
    signal = f"metric {scaling.metric}" if scaling.metric else "a query of your own"
    return [
        ConfigProblem(
            f"{key}.capacity.metric",
            capacity.metric,
            f"the pool's own signal ({signal}): the capacity `hyperpod-dpd advise` recorded is "
            f"in {capacity.metric}, another unit than the target",
            f"rerun `hyperpod-dpd advise --stack <stack> --write` for the signal you scale on, "
            f"or remove {key}.capacity",
        )
    ]


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


def check_pod_names(
    e: EndpointConfig, pool: str, name_key: str, why: str, other_fix: str
) -> list[ConfigProblem]:
    """A pool whose pods a query selects by name (`why` says which query; `other_fix`, the way
    out besides a shorter name): its Deployment's name must leave room for the pods' suffixes."""
    deployment = worker_deployment(e.name, pool)
    if len(deployment) <= DEPLOYMENT_NAME_MAX:
        return []
    room = DEPLOYMENT_NAME_MAX - (len(deployment) - len(e.name))
    shorter = e.name[:room].rstrip("-")  # still a DNS label: it ends with a letter or digit
    return [
        ConfigProblem(
            name_key,
            e.name,
            f"at most {room} characters {why}: its Deployment '{deployment}' is longer than "
            f"{DEPLOYMENT_NAME_MAX}, Kubernetes cuts its pods' names, and the pool's selector "
            "could not tell its pods from another endpoint's",
            f"shorten {name_key} to {room} characters ({set_fix(name_key, shorter)}), or "
            f"{other_fix}",
        )
    ]
