"""The endpoint: an InferenceEndpointConfig created through the cluster's Kubernetes provider.

Registered from its spec (specs/endpoint.py): `mode: dpd` renders `pdSpec` (separate prefill
and decode Deployments plus a router); `mode: colocated` the same endpoint without it, the A/B
baseline and the documented rollback path. The policy gate has judged the spec already.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import ENDPOINT_NAMESPACES, INFERENCE_ENDPOINT
from program.outputs import Outputs
from specs.base import Desired
from specs.endpoint import EndpointSpec, router_service
from specs.iec import InferenceEndpointConfig


@dataclass(frozen=True)
class EndpointArgs:
    spec: EndpointSpec
    outputs: Outputs  # resolves the model bucket, the AZ name and the placement group
    provider: k8s.Provider
    # What must exist first: the operator install, the staged checkpoint (when they exist).
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    # The namespace it shares with other endpoints (EndpointNamespaces), when it owns none.
    shared_namespace: pulumi.Resource | None = None


class InferenceEndpoint(pulumi.ComponentResource):
    spec: InferenceEndpointConfig
    resource: k8s.apiextensions.CustomResource
    namespace: k8s.core.v1.Namespace | None  # None: the endpoint's namespace is not ours
    network_policy: k8s.networking.v1.NetworkPolicy | None  # None: networkPolicy.enabled false
    # Its namespace's pods kept from the instance metadata service; None: networkPolicy.enabled
    # false, or the namespace is shared (EndpointNamespaces has it).
    metadata_policy: k8s.networking.v1.NetworkPolicy | None

    def __init__(self, name: str, args: EndpointArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(INFERENCE_ENDPOINT, name, None, opts)
        self.spec = args.spec.config
        out = args.outputs
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        depends_on = list(args.depends_on)
        if args.shared_namespace is not None:
            depends_on.append(args.shared_namespace)
        self.namespace = None
        if args.spec.namespace is not None:
            ns = args.spec.namespace
            self.namespace = k8s.core.v1.Namespace(ns.name, **out.resolve(ns.kwargs()), opts=child)
            depends_on.append(self.namespace)
        namespace = self.namespace or args.shared_namespace
        self.network_policy = self._create_policy(args.spec.network_policy, args, child, namespace)
        self.metadata_policy = self._create_policy(
            args.spec.metadata_policy, args, child, namespace
        )
        depends_on += [p for p in (self.network_policy, self.metadata_policy) if p is not None]
        iec = args.spec.iec
        self.resource = k8s.apiextensions.CustomResource(
            iec.name,
            **out.resolve(iec.kwargs()),
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

    def _create_policy(
        self,
        policy: Desired | None,
        args: EndpointArgs,
        child: pulumi.ResourceOptions,
        namespace: pulumi.Resource | None,
    ) -> k8s.networking.v1.NetworkPolicy | None:
        """A NetworkPolicy of the workers, in their namespace before the IEC starts any pod: no
        worker runs unguarded. It needs only the namespace (the pods it names come later)."""
        if policy is None:
            return None
        return k8s.networking.v1.NetworkPolicy(
            policy.name,
            **args.outputs.resolve(policy.kwargs()),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[namespace] if namespace else [])
            ),
        )


@dataclass(frozen=True)
class NamespacesArgs:
    namespaces: list[Desired]  # specs/desired.py: one per namespace the endpoints share
    outputs: Outputs
    provider: k8s.Provider
    # Each shared namespace's metadata egress policy ("default"'s too), specs/desired.py.
    policies: list[Desired] = field(default_factory=list)


class EndpointNamespaces(pulumi.ComponentResource):
    """The namespaces of several endpoints, one resource each, owned by no endpoint: removing
    an endpoint never deletes the namespace another runs in. With each, the NetworkPolicy that
    keeps its pods from the instance metadata service."""

    def __init__(self, name: str, args: NamespacesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(ENDPOINT_NAMESPACES, name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.by_name = {
            ns.props["metadata"]["name"]: k8s.core.v1.Namespace(
                ns.name, **args.outputs.resolve(ns.kwargs()), opts=child
            )
            for ns in args.namespaces
        }
        # By namespace: the endpoints there start after theirs.
        self.policy_of: dict[str, pulumi.Resource] = {}
        for policy in args.policies:
            namespace = policy.props["metadata"]["namespace"]
            after = [self.by_name[namespace]] if namespace in self.by_name else []
            self.policy_of[namespace] = k8s.networking.v1.NetworkPolicy(
                policy.name,
                **args.outputs.resolve(policy.kwargs()),
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)),
            )
        self.register_outputs({"namespaces": sorted(self.by_name)})
