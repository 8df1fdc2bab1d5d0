"""The endpoint: an InferenceEndpointConfig created through the cluster's Kubernetes provider.

`mode: dpd` renders `pdSpec` (separate prefill and decode Deployments plus a router);
`mode: colocated` renders the same endpoint without it: the A/B baseline and the documented
rollback path. Rules that config validation cannot see (policies/rules) run on the rendered
manifest before anything is registered, so a bad endpoint fails fast with the rule's message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import IEC_TYPE
from policies.enforce import child_urn, enforce, plain
from policies.rules import ResourceView
from settings.model import StackSettings
from specs.endpoint import ClusterFacts, build_endpoint
from specs.iec import API_VERSION, KIND, InferenceEndpointConfig


@dataclass(frozen=True)
class EndpointArgs:
    settings: StackSettings
    cluster: ClusterFacts
    provider: k8s.Provider
    # What must exist first: the operator install, the staged checkpoint (when they exist).
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)


class InferenceEndpoint(pulumi.ComponentResource):
    spec: InferenceEndpointConfig
    resource: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: EndpointArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("hyperpod-dpd:workloads:InferenceEndpoint", name, None, opts)
        self.spec = build_endpoint(args.settings, args.cluster, args.tags)
        manifest = self.spec.to_manifest()
        # Judge the endpoint before anything is created: the same rules as the pack and plan.
        policy = args.settings.policy
        enforce(
            [
                ResourceView(
                    IEC_TYPE,
                    f"{name}-iec",
                    child_urn("hyperpod-dpd:workloads:InferenceEndpoint", IEC_TYPE, f"{name}-iec"),
                    plain(manifest),
                )
            ],
            policy.enforcement,
            policy.advisories_mandatory,
        )
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        depends_on = list(args.depends_on)
        if self.spec.namespace != "default":
            depends_on.append(
                k8s.core.v1.Namespace(
                    f"{name}-namespace",
                    metadata={"name": self.spec.namespace},
                    opts=child,
                )
            )
        self.resource = k8s.apiextensions.CustomResource(
            f"{name}-iec",
            api_version=API_VERSION,
            kind=KIND,
            metadata=manifest["metadata"],
            spec=manifest["spec"],
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=depends_on,
                    # The operator loads a 70B model before it reports ready.
                    custom_timeouts=pulumi.CustomTimeouts(create="60m", update="60m"),
                ),
            ),
        )
        self.register_outputs(
            {
                "name": self.spec.name,
                "namespace": self.spec.namespace,
                "mode": "dpd" if self.spec.is_dpd else "colocated",
                "routerService": router_service(self.spec) if self.spec.is_dpd else None,
            }
        )


def router_service(spec: InferenceEndpointConfig) -> str:
    """The router's in-cluster URL, as the operator names it (dpd-facts.md)."""
    return (
        f"http://{spec.name}-{spec.namespace}-routing-service.hyperpod-inference-system"
        ".svc.cluster.local:443/v1/chat/completions"
    )
