"""The load balancer controller may create internal load balancers only.

Nothing of the stack needs an internet-facing one: the traffic split is internal (specs/
traffic.py) and Pulumi's, not the controller's; the controller creates the inference operator's
own load balancer of each endpoint (an Ingress `alb-<name>-<namespace>` the operator writes, whose
scheme the InferenceEndpointConfig's CRD gives no field for) and registers the split's targets.
That load balancer forwards to the router, which asks for no API key: internet-facing, it would
put the model on the internet. The controller's default scheme is `internal`
(kubernetes-sigs/aws-load-balancer-controller docs/guide/ingress/annotations.md, "scheme"),
but an annotation of the operator's can ask for the other, and leaving the public subnets
untagged does not stop it: with no subnet carrying the role tag of the scheme asked for, the
controller (v2.12.1 and later; the operator's chart installs v2.13) falls back to every subnet
whose route table reaches an internet gateway (docs/deploy/subnet_discovery.md; at v2.13.0
pkg/networking/subnet_resolver.go: "when there are no subnets with matching role tag, we
fallback to discovery by subnet reachability").

So the controller's role is denied elasticloadbalancing:CreateLoadBalancer for any scheme but
`internal`: IAM's condition key elasticloadbalancing:Scheme, which ELB added for exactly this,
"only allow users to create internal load balancers"
(https://aws.amazon.com/about-aws/whats-new/2023/11/aws-elastic-load-balancing-iam-condition-keys/).
The controller always sends the scheme (pkg/deploy/elbv2/load_balancer_manager.go at v2.13.0);
StringNotEquals also denies a request without it (a negated operator is true when the key is
absent: IAM User Guide, "Condition operators",
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
An explicit Deny wins over the controller's own Allow. Should the operator ever ask for an
internet-facing load balancer, its Ingress gets no address and the controller logs
AccessDenied; `hyperpod-dpd verify` reports the Ingress's scheme (docs/troubleshooting.md,
"Operator load balancer answers without a key").
"""

from __future__ import annotations

from specs.iam import Statement

INTERNAL = "internal"

INTERNAL_ONLY: Statement = {
    "Sid": "InternalLoadBalancersOnly",
    "Effect": "Deny",
    "Action": ["elasticloadbalancing:CreateLoadBalancer"],
    "Resource": "*",
    "Condition": {"StringNotEquals": {"elasticloadbalancing:Scheme": INTERNAL}},
}
