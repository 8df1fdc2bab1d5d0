"""Who may open connections to the routers: the NetworkPolicy of the operator's namespace,
registered from its spec (specs/isolation/routers.py says what it admits and why). The
namespace is the operator add-on's: the policy comes after the add-on, and the endpoints after
the policy, so a router starts behind it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import ROUTER_ISOLATION
from program.outputs import Outputs
from specs.base import Desired


@dataclass(frozen=True)
class RouterIsolationArgs:
    policy: Desired
    outputs: Outputs
    provider: k8s.Provider
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the operator add-on


class RouterIsolation(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: RouterIsolationArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(ROUTER_ISOLATION, name, None, opts)
        self.policy = k8s.networking.v1.NetworkPolicy(
            args.policy.name,
            **args.outputs.resolve(args.policy.kwargs()),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=args.depends_on
            ),
        )
        self.register_outputs({"policy": args.policy.props["metadata"]["name"]})
