"""The Kubernetes names several endpoints render, each taken once.

Every endpoint of the `endpoints` map renders an InferenceEndpointConfig named `name` in
`namespace`, and the operator creates its router Service, `{name}-{namespace}-routing-service`
(core/vocabulary.py ROUTER_SERVICE), in its own namespace, shared by every endpoint. Two
endpoints with the same (name, namespace) render the same object: pulumi-kubernetes (4.29.0 and
later: no adoption of what exists) gets AlreadyExists from the API server on the second create.
Two that differ can still give the same router Service name ('llama-prod' in 'team' and 'llama'
in 'prod-team'): the operator would route both through one Service. Refused before anything is
created, on the later key of each clash, with a name that clashes with nothing.

The worker Deployments are named after the endpoint too (core/vllm/pod_names.py: `prefill-<name>`,
`decode-<name>`, colocated `<name>`): a colocated `prefill-llama` beside a DPD `llama` in one
namespace would ask for the same Deployment, and no selector could tell their pods apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from core.problems import ConfigProblem
from core.vllm.pod_names import worker_deployment
from core.vocabulary import DPD_ROLES, OPERATOR_NAMESPACE, ROUTER_SERVICE, RouterService
from settings.config.errors import full_key, set_fix
from settings.config.fields import DNS_LABEL_PATTERN
from settings.endpoint.model import EndpointConfig

# A Service name is a DNS-1035 label: at most 63 characters (check_derived_names holds every
# endpoint to it); what the pattern leaves for name and namespace together.
_SERVICE_MAX = 63
_ROOM = _SERVICE_MAX - len(ROUTER_SERVICE.format(name="", namespace=""))


def router_service(name: str, namespace: str) -> str:
    """The name of the router Service the operator names after endpoint `namespace`/`name`."""
    return RouterService(name, namespace).name


def check_derived_names(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """Names the operator derives from the endpoint's must be valid Kubernetes names too."""
    derived = ROUTER_SERVICE.format(name=e.name, namespace=e.namespace)
    if len(derived) <= _SERVICE_MAX:
        return []
    key = full_key((*path, "name"))
    return [
        ConfigProblem(
            key,
            e.name,
            f"a name that, with namespace '{e.namespace}', gives the router Service the operator "
            f"creates a name of at most {_SERVICE_MAX} characters ('{derived}' has {len(derived)}): name and "
            f"namespace together at most {_ROOM} characters",
            f"shorten {key} or {full_key((*path, 'namespace'))}",
        )
    ]


def check_unique_names(endpoints: Mapping[str, EndpointConfig]) -> list[ConfigProblem]:
    """No two endpoints render the same InferenceEndpointConfig or the same router Service. Of
    each clash one endpoint keeps its name: one named after its key (renaming it would part the
    two), else the first key; each other is refused, with a name nothing has."""
    by_service: dict[str, list[str]] = {}
    for key in sorted(endpoints):
        e = endpoints[key]
        by_service.setdefault(router_service(e.name, e.namespace), []).append(key)
    taken = set(by_service)
    problems = []
    for service, keys in by_service.items():
        kept = next((k for k in keys if endpoints[k].name == k), keys[0])
        for key in (k for k in keys if k != kept):
            problems.append(_clash(key, endpoints[key], kept, endpoints[kept], service, taken))
    return sorted(problems, key=lambda p: p.key)


def check_unique_deployments(endpoints: Mapping[str, EndpointConfig]) -> list[ConfigProblem]:
    """No two endpoints of one namespace whose worker Deployments share a name; the later key of
    each clash is refused (two with the same name are check_unique_names's)."""
    owner: dict[tuple[str, str], str] = {}
    problems = []
    for key in sorted(endpoints):
        e = endpoints[key]
        pools = DPD_ROLES if e.mode == "dpd" else ("colocated",)
        mine = [worker_deployment(e.name, pool) for pool in pools]
        clash = next((d for d in mine if (e.namespace, d) in owner), None)
        if clash is not None and endpoints[owner[(e.namespace, clash)]].name == e.name:
            continue  # one name twice: check_unique_names says so
        if clash is not None:
            name_key = full_key(("endpoints", key, "name"))
            other = owner[(e.namespace, clash)]
            renamed = _free_name(e, key, pools, owner, endpoints)
            problems.append(
                ConfigProblem(
                    name_key,
                    e.name,
                    f"a name whose worker Deployments are no other endpoint's: endpoints.{other} "
                    f"runs Deployment '{clash}' in namespace '{e.namespace}' too (the operator "
                    "names them prefill-<name>, decode-<name>, or <name> when colocated)",
                    set_fix(name_key, renamed)
                    if renamed
                    else f"set {name_key} to a name of its own, or move it to another namespace",
                )
            )
            continue
        owner.update({(e.namespace, d): key for d in mine})
    return problems


def _free_name(
    e: EndpointConfig,
    key: str,
    pools: tuple[str, ...],
    owner: dict[tuple[str, str], str],
    endpoints: Mapping[str, EndpointConfig],
) -> str | None:
    """A name for `e` (distinct_name's candidates) whose Deployments and router Service are
    nobody's."""
    taken = {router_service(x.name, x.namespace) for x in endpoints.values()}
    while (name := distinct_name(e.name, key, e.namespace, taken)) is not None:
        if not any((e.namespace, worker_deployment(name, p)) in owner for p in pools):
            return name
        taken.add(router_service(name, e.namespace))
    return None


def _clash(
    key: str, e: EndpointConfig, other: str, o: EndpointConfig, service: str, taken: set[str]
) -> ConfigProblem:
    name_key = full_key(("endpoints", key, "name"))
    if (o.name, o.namespace) == (e.name, e.namespace):
        allowed = (
            f"a name no other endpoint in namespace '{e.namespace}' has: endpoints.{other} is "
            f"'{e.name}' there too, and the API server refuses the second "
            f"InferenceEndpointConfig {e.namespace}/{e.name} (AlreadyExists)"
        )
    else:
        allowed = (
            f"a name whose router Service is no other endpoint's: the operator names it "
            f"{ROUTER_SERVICE} in {OPERATOR_NAMESPACE}, and endpoints.{other} ('{o.name}' in "
            f"'{o.namespace}') gives '{service}' too"
        )
    renamed = distinct_name(e.name, key, e.namespace, taken)
    if renamed is None:
        return ConfigProblem(name_key, e.name, allowed, f"set {name_key} to a name of its own")
    taken.add(router_service(renamed, e.namespace))  # the next clash's fix must not take it
    return ConfigProblem(name_key, e.name, allowed, set_fix(name_key, renamed))


def distinct_name(name: str, key: str, namespace: str, taken: set[str]) -> str | None:
    """The first of `<name>-<key>`, `<key>`, `<name>-2` ... `<name>-9` (the name cut to leave
    room for the suffix) that is a DNS-1123 label starting with a letter (the router Service's
    name is a DNS-1035 label), whose router Service fits 63 characters and is no name in
    `taken`. None: none is."""
    room = _ROOM - len(namespace)

    def joined(suffix: str) -> str:
        return f"{name[: max(0, room - len(suffix) - 1)].rstrip('-')}-{suffix}".lstrip("-")

    own = key != name and not name.endswith(f"-{key}")
    candidates = [joined(key), key] if own else []
    candidates += [joined(str(n)) for n in range(2, 10)]
    for candidate in candidates:
        if (
            len(candidate) <= room
            and re.fullmatch(DNS_LABEL_PATTERN, candidate)
            and candidate[:1].isalpha()
            and router_service(candidate, namespace) not in taken
        ):
            return candidate
    return None
