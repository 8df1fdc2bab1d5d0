"""Who may run pods in the endpoints' namespaces: the ValidatingAdmissionPolicies and their
bindings, registered from their spec (specs/isolation/admission.py says what they refuse and
why). Cluster-scoped, one set per cluster; the endpoints are created after them, so the
operator's first pod already meets them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import ENDPOINT_ADMISSION
from program.outputs import Outputs
from specs.isolation.admission import AdmissionSpec


@dataclass(frozen=True)
class AdmissionArgs:
    spec: AdmissionSpec
    outputs: Outputs
    provider: k8s.Provider


class EndpointAdmission(pulumi.ComponentResource):
    def __init__(self, name: str, args: AdmissionArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(ENDPOINT_ADMISSION, name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        registered = k8s.admissionregistration.v1
        policies = [
            registered.ValidatingAdmissionPolicy(
                p.name, **args.outputs.resolve(p.kwargs()), opts=child
            )
            for p in args.spec.policies
        ]
        # A binding enforces nothing while the policy it names is missing: policies first.
        for b in args.spec.bindings:
            registered.ValidatingAdmissionPolicyBinding(
                b.name,
                **args.outputs.resolve(b.kwargs()),
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=policies)
                ),
            )
        self.register_outputs(
            {"policies": [p.props["metadata"]["name"] for p in args.spec.policies]}
        )
