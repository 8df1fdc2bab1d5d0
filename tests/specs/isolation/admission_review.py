"""What the API server decides for a request under rendered ValidatingAdmissionPolicies and their
bindings, with a real CEL interpreter (cel-python) evaluating their expressions
(https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/):
- a policy applies to a request its matchConstraints' resourceRules match (API group, version,
  resource with its subresource, operation) and a binding of it matches (here: the binding's
  namespaceSelector against the namespace's `kubernetes.io/metadata.name`);
- its expressions see `object`, `oldObject` (null on CREATE), `request` (the AdmissionReview's
  request: operation, userInfo, namespace, subResource...) and `variables`, each variable
  evaluated in order, a later one seeing the earlier ones; a variable that fails is an error
  only where an expression reads it (CEL's `||` and `&&` absorb errors they do not need);
- the request is refused when a validation is false, or fails with failurePolicy Fail; with
  `Deny` among the binding's validationActions the message is the API server's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import celpy
from celpy import celtypes

from core.label_selectors import selects
from core.vocabulary import NAMESPACE_NAME_LABEL

_ENV = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def _program(expression: str) -> Any:
    if expression not in _PROGRAMS:
        _PROGRAMS[expression] = _ENV.program(_ENV.compile(expression))
    return _PROGRAMS[expression]


def _evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """The value, or a CELEvalError (as CEL carries errors: a value an operator may absorb)."""
    try:
        return _program(expression).evaluate(activation)
    except celpy.CELEvalError as error:
        return error


@dataclass(frozen=True)
class Request:
    """An AdmissionReview's request (admission.k8s.io/v1 AdmissionRequest), what a policy sees."""

    operation: str  # CREATE | UPDATE | CONNECT
    namespace: str
    username: str
    object: dict[str, Any]
    old_object: dict[str, Any] | None = None
    groups: tuple[str, ...] = ("system:authenticated",)
    group: str = ""  # the resource's API group ("" core, "apps", "batch")
    version: str = "v1"
    resource: str = "pods"
    sub_resource: str = ""
    # The object's name: a CONNECT's object (PodExecOptions...) has no metadata, the pod's
    # name is the request's.
    name: str = ""

    def review(self) -> dict[str, Any]:
        request = {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": self.group, "version": self.version, "kind": self.object["kind"]},
            "resource": {"group": self.group, "version": self.version, "resource": self.resource},
            "name": self.name or self.object.get("metadata", {}).get("name", ""),
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {"username": self.username, "groups": list(self.groups)},
            "dryRun": False,
        }
        if self.sub_resource:
            request["subResource"] = self.sub_resource
        return request


@dataclass
class Decision:
    allowed: bool
    messages: list[str] = field(default_factory=list)


def _listed(values: list[str], value: str) -> bool:
    return "*" in values or value in values


def _resource_listed(resources: list[str], r: Request) -> bool:
    """As RuleWithOperations reads `resources`: "*" every resource but no subresource,
    "pods/*" every subresource of pods, "*/scale" the scale of every resource, "*/*" all
    (admissionregistration.k8s.io/v1 Rule)."""
    if not r.sub_resource:
        return "*" in resources or r.resource in resources
    wanted = {f"{r.resource}/{r.sub_resource}", f"{r.resource}/*", f"*/{r.sub_resource}", "*/*"}
    return bool(wanted & set(resources))


def _matches_rule(rule: dict[str, Any], r: Request) -> bool:
    return (
        _listed(rule["apiGroups"], r.group)
        and _listed(rule["apiVersions"], r.version)
        and _listed(rule["operations"], r.operation)
        and _resource_listed(rule["resources"], r)
    )


def _bound(binding: dict[str, Any], namespace: str) -> bool:
    selector = binding["spec"].get("matchResources", {}).get("namespaceSelector", {})
    return selects(selector, {NAMESPACE_NAME_LABEL: namespace})


def _message(validation: dict[str, Any], activation: dict[str, Any]) -> str:
    if "messageExpression" in validation:
        text = _evaluate(validation["messageExpression"], activation)
        if isinstance(text, str):
            return text
    return validation.get("message") or f"failed expression: {validation['expression']}"


def judge_policy(policy: dict[str, Any], r: Request) -> Decision:
    """The decision of one policy (already known to apply to `r`)."""
    base = {
        "object": r.object,
        "oldObject": r.old_object,
        "request": r.review(),
    }
    activation = celpy.json_to_cel(base)
    variables: dict[Any, Any] = {}
    for variable in policy["spec"].get("variables") or []:
        scope = {**activation, "variables": celtypes.MapType(variables)}
        variables[celtypes.StringType(variable["name"])] = _evaluate(variable["expression"], scope)
    activation = {**activation, "variables": celtypes.MapType(variables)}
    decision = Decision(True)
    for validation in policy["spec"]["validations"]:
        result = _evaluate(validation["expression"], activation)
        if isinstance(result, celpy.CELEvalError):
            # failurePolicy Fail (the policies' own, and the default): an error refuses.
            assert policy["spec"].get("failurePolicy", "Fail") == "Fail"
            decision.allowed = False
            decision.messages.append(f"expression error: {result.args[0]}")
        elif result is not True and result != celtypes.BoolType(True):
            decision.allowed = False
            decision.messages.append(_message(validation, activation))
    return decision


def admit(manifests: list[dict[str, Any]], r: Request) -> Decision:
    """What the API server decides for `r` under `manifests` (policies and bindings among
    other objects): refused if any bound, matching policy refuses it."""
    policies = {
        m["metadata"]["name"]: m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"
    }
    decision = Decision(True)
    for binding in (m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"):
        policy = policies.get(binding["spec"]["policyName"])
        if policy is None or not _bound(binding, r.namespace):
            continue
        if not any(
            _matches_rule(rule, r) for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        ):
            continue
        verdict = judge_policy(policy, r)
        if not verdict.allowed and "Deny" in binding["spec"]["validationActions"]:
            decision.allowed = False
            decision.messages += verdict.messages
    return decision
