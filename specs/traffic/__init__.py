"""One stable URL in front of several endpoints, split by weight (`hyperpod-dpd:traffic`).

An internal Application Load Balancer (private subnets) whose one listener forwards, by its one
rule, to one target group per endpoint, by weight. It is reached by the clients `hyperpod-dpd:trafficListener` names
(CIDRs, security groups) and the HyperPod nodes (in-cluster clients), nothing else; over HTTPS
(443, a TLS 1.2+ policy) when a certificate is given, else plain HTTP on 80 and the plan says so
(hyperpod-dpd-traffic-tls). With a certificate, clients call it by a name of the user's
(`trafficListener.domainName`, an alias record in their private hosted zone), the name the
certificate covers. Its access logs go to a bucket of its own (SSE-S3, the only
encryption ALB log delivery takes). Each target group is bound to the
endpoint's router Service by a TargetGroupBinding of the AWS Load Balancer Controller the
operator add-on installs (its CRD `elbv2.k8s.aws/v1beta1`), which registers the router pods as
targets. An Ingress could not do this: its weighted forward names Services of its own namespace
only (controller docs, ingress annotations), and endpoints live in their own.

Only requests that carry one of the stack's API keys (`Authorization: Bearer <key>`,
core/api_key.py) are forwarded: a listener rule matches the header, and the listener's default
answers everything else with 401, the pattern AWS documents for letting only CloudFront through
to an ALB (CloudFront Developer Guide, "Restrict access to Application Load Balancers",
https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/restrict-access-to-load-balancer.html).
The load balancer checks the key, not vLLM (`--api-key`, which vLLM 0.19.0 checks on /v1 paths
only: vllm/entrypoints/openai/server_utils.py AuthenticationMiddleware): the router in between
does not pass the client's header on. Its upstream, the vLLM production-stack router, sends its
own `Authorization: Bearer $OPENAI_API_KEY` to the prefiller and the decoder on the
disaggregated path (src/vllm_router/services/request_service/request.py,
send_request_to_prefiller and send_request_to_decode, on main and in the conditional-routing
change whose log lines the HyperPod router prints, vllm-project/production-stack#890), and lists
each pod's models with its own `VLLM_API_KEY` (service_discovery.py, _get_model_names; an
engine that wants a key the router lacks is "Model not found": vllm-project/production-stack#150).
The operator sets neither on its router, so workers that checked a key would refuse it. Each key
is generated (random.RandomPassword, a Pulumi secret) and held by the rule; up to three at once,
so a rotation adds the new key, moves the clients, then drops the old one, with no pod restarted.
The newest is stored as a Kubernetes Secret for the clients the stack runs in the cluster
(`verify`'s prompt pods, the benchmark Job), in the namespace they run in, the stack's benchmark
namespace (core/vocabulary.py BENCHMARK_NAMESPACE): not in the endpoints', whose pods never
present it and where only the operator's pods run (specs/isolation/admission.py).

The Service is the router the operator creates for every endpoint with intelligent routing
(core/vocabulary.py RouterService, where its sources are cited; `hyperpod-dpd verify` checks it
exists before any weight moves). Moving weights changes the listener rule only: shifting and
rolling back never touch an InferenceEndpointConfig, so no pod restarts.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import api_key
from core.refs import ref
from core.vocabulary import (
    BENCHMARK_NAMESPACE,
    CHAT_COMPLETIONS_PATH,
    SECURITY_GROUP_TYPE,
    SG_EGRESS_TYPE,
    SG_INGRESS_TYPE,
    TRAFFIC_SPLIT,
)
from settings.endpoint.listener import TrafficListenerConfig
from settings.stack import StackSettings
from specs.base import Desired
from specs.buckets import BucketSpec
from specs.traffic.keys import UNAUTHORIZED, api_keys, key_secret
from specs.traffic.logs import ACCESS_LOG_PREFIX, log_bucket
from specs.traffic.targets import target_groups

LOAD_BALANCER_TYPE = "aws:lb/loadBalancer:LoadBalancer"
LISTENER_TYPE = "aws:lb/listener:Listener"
LISTENER_RULE_TYPE = "aws:lb/listenerRule:ListenerRule"
RECORD_TYPE = "aws:route53/record:Record"
ZONE_ASSOCIATION_TYPE = "aws:route53/zoneAssociation:ZoneAssociation"
HTTP_PORT, HTTPS_PORT = 80, 443
LISTENER_PORT = HTTP_PORT  # without a certificate
CHAT_PATH = CHAT_COMPLETIONS_PATH


@dataclass(frozen=True)
class TrafficSpec:
    name: str
    security_group: Desired
    rules: tuple[Desired, ...]
    load_balancer: Desired
    target_groups: dict[str, Desired]  # endpoint key -> its target group
    bindings: dict[str, Desired]  # endpoint key -> TargetGroupBinding of its router Service
    listener: Desired  # answers 401 to what no rule forwards
    forward: Desired  # the listener rule: the weighted forward, for requests with a key
    api_keys: tuple[Desired, ...]  # one generated key per name, the newest last
    key_secrets: tuple[Desired, ...]  # the newest key, per namespace of the split's endpoints
    logs: BucketSpec | None = None  # the access logs' bucket (trafficListener.accessLogs)
    dns: DnsSpec | None = None  # trafficListener.domainName: its record and zone association

    @property
    def https(self) -> bool:
        return self.listener.props["protocol"] == "HTTPS"

    @property
    def newest_key(self) -> Desired:
        return self.api_keys[-1]

    def resources(self) -> list[Desired]:
        logs = [self.logs.bucket, *self.logs.guards] if self.logs else []
        dns = [self.dns.association, self.dns.record] if self.dns else []
        return [
            self.security_group,
            *self.rules,
            *logs,
            self.load_balancer,
            *dns,
            *self.target_groups.values(),
            *self.bindings.values(),
            *self.api_keys,
            *self.key_secrets,
            self.listener,
            self.forward,
        ]


@dataclass(frozen=True)
class DnsSpec:
    """The name clients call (trafficListener.domainName) in the user's private hosted zone."""

    domain_name: str
    association: Desired  # the zone and the stack's VPC: in-cluster clients resolve it too
    record: Desired  # an alias A record to the load balancer


def _rule_suffix(source: str) -> str:
    """A CIDR or group id as part of a rule's name: 10.1.0.0/16 -> 10-1-0-0-16."""
    return source.replace(".", "-").replace("/", "-")


def traffic_split(
    name: str,
    s: StackSettings,
    vpc_id: str,
    subnet_ids: str,
    tags: dict[str, str],
    nodes_security_group_id: str = "",
    account_id: str = "",
    partition: str = "aws",
) -> TrafficSpec | None:
    """The split of `s.traffic` (None without one); `vpc_id`, `subnet_ids`, the nodes' group
    and the account are placeholders."""
    if not s.traffic:
        return None
    parents = (TRAFFIC_SPLIT,)
    listener_cfg = s.traffic_listener
    https = listener_cfg.certificate_arn is not None
    port = HTTPS_PORT if https else HTTP_PORT
    group = Desired(
        SECURITY_GROUP_TYPE,
        f"{name}-sg",
        parents,
        {
            "vpcId": vpc_id,
            # EC2 takes no apostrophe here (core/aws/aws_rules.py), and never changes a group's
            # description: a new one replaces the group (as this one, which said "HTTP from
            # the VPC only", did when the listener was narrowed to named clients).
            "description": "Internal load balancer of the endpoints: named clients only",
            "tags": {**tags, "Name": f"{name}-sg"},
        },
    )
    own = ref(group.name, "id")
    listen = {"securityGroupId": own, "ipProtocol": "tcp", "fromPort": port, "toPort": port}
    # Who may connect: the HyperPod nodes (in-cluster clients, the benchmark runner) and what
    # trafficListener names; no CIDR by default (the VPC's whole range was the old default).
    rules = [
        Desired(SG_INGRESS_TYPE, f"{name}-ingress-nodes", parents, {
            **listen, "referencedSecurityGroupId": nodes_security_group_id,
            "description": "in-cluster clients on the HyperPod nodes",
        }),
        *(Desired(SG_INGRESS_TYPE, f"{name}-ingress-{_rule_suffix(cidr)}", parents, {
            **listen, "cidrIpv4": cidr, "description": "trafficListener.allowedCidrs",
        }) for cidr in listener_cfg.allowed_cidrs),
        *(Desired(SG_INGRESS_TYPE, f"{name}-ingress-{sg}", parents, {
            **listen, "referencedSecurityGroupId": sg,
            "description": "trafficListener.allowedSecurityGroupIds",
        }) for sg in listener_cfg.allowed_security_group_ids),
        # Out only to the router pods (targets by IP, on the HyperPod nodes' ENIs), and the
        # nodes' group lets the balancer in (specs/nodes.py admits nothing else from the VPC).
        Desired(SG_EGRESS_TYPE, f"{name}-egress-routers", parents, {
            "securityGroupId": own, "ipProtocol": "tcp", "fromPort": 0, "toPort": 65535,
            "referencedSecurityGroupId": nodes_security_group_id,
            "description": "to the router pods (targets by IP)",
        }),
        # In-cluster clients (the benchmark runner aimed at the split) out of the nodes' group
        # to the listener: the nodes' egress is HTTPS to the internet and DNS otherwise.
        Desired(SG_EGRESS_TYPE, f"{name}-from-nodes", parents, {
            "securityGroupId": nodes_security_group_id, "ipProtocol": "tcp", "fromPort": port,
            "toPort": port, "referencedSecurityGroupId": own,
            "description": "in-cluster clients to the traffic split load balancer",
        }),
        Desired(SG_INGRESS_TYPE, f"{name}-to-routers", parents, {
            "securityGroupId": nodes_security_group_id, "ipProtocol": "tcp", "fromPort": 0,
            "toPort": 65535, "referencedSecurityGroupId": own,
            "description": "the traffic split load balancer to the router pods",
        }),
    ]  # fmt: skip
    by_key = {x.key: x.config for x in s.entries()}
    logs = None
    alb_props: dict = {
        "internal": True,  # no internet-facing entry point: reached from the VPC
        "loadBalancerType": "application",
        "subnets": subnet_ids,
        "securityGroups": [own],
        "dropInvalidHeaderFields": True,
        # A non-streaming answer arrives whole at the end of its generation: the longest of the
        # endpoints' (settings/endpoint/model.py idleTimeoutSeconds), not ALB's 60 s.
        "idleTimeout": max(by_key[k].idle_timeout_seconds for k in s.traffic),
        "tags": tags,
    }
    if listener_cfg.access_logs:
        logs = log_bucket(name, tags, account_id, partition, s.region, listener_cfg.access_log_days)
        alb_props["accessLogs"] = {
            "bucket": logs.bucket_name,
            "prefix": ACCESS_LOG_PREFIX,
            "enabled": True,
        }
    alb = Desired(LOAD_BALANCER_TYPE, f"{name}-alb", parents, alb_props, autoname="name")
    groups, bindings = target_groups(name, s, vpc_id, tags)
    tls = (
        {"certificateArn": listener_cfg.certificate_arn, "sslPolicy": listener_cfg.ssl_policy}
        if https
        else {}
    )
    listener = Desired(
        LISTENER_TYPE,
        f"{name}-listener",
        parents,
        {
            "loadBalancerArn": ref(alb.name, "arn"),
            "port": port,
            "protocol": "HTTPS" if https else "HTTP",
            **tls,
            "defaultActions": [UNAUTHORIZED],
            "tags": tags,
        },
    )
    keys = api_keys(name, listener_cfg)
    forward = Desired(
        LISTENER_RULE_TYPE,
        f"{name}-forward",
        parents,
        {
            "listenerArn": ref(listener.name, "arn"),
            "priority": 1,
            "conditions": [
                {
                    "httpHeader": {
                        "httpHeaderName": api_key.HEADER,
                        "values": [api_key.bearer(ref(k.name, "result")) for k in keys],
                    }
                }
            ],
            "actions": [
                {
                    "type": "forward",
                    "forward": {
                        "targetGroups": [
                            {"arn": ref(groups[key].name, "arn"), "weight": weight}
                            for key, weight in sorted(s.traffic.items())
                        ]
                    },
                }
            ],
            "tags": tags,
        },
    )
    secrets = (key_secret(name, BENCHMARK_NAMESPACE, keys[-1]),)
    dns = _dns(name, listener_cfg, vpc_id, alb) if listener_cfg.domain_name else None
    return TrafficSpec(
        name, group, tuple(rules), alb, groups, bindings, listener, forward, keys, secrets,
        logs, dns,
    )  # fmt: skip


def _dns(name: str, listener_cfg: TrafficListenerConfig, vpc_id: str, alb: Desired) -> DnsSpec:
    """An alias A record of the name to the load balancer in the user's private zone, and the
    zone associated with the stack's VPC: a private zone answers only in the VPCs associated
    with it (Route 53 Developer Guide, "Working with private hosted zones"), and the stack's
    VPC is new."""
    zone, domain = listener_cfg.hosted_zone_id, listener_cfg.domain_name
    parents = (TRAFFIC_SPLIT,)
    association = Desired(
        ZONE_ASSOCIATION_TYPE, f"{name}-zone-vpc", parents, {"zoneId": zone, "vpcId": vpc_id}
    )
    record = Desired(
        RECORD_TYPE,
        f"{name}-dns",
        parents,
        {
            "zoneId": zone,
            "name": domain,
            "type": "A",
            "aliases": [
                {
                    "name": ref(alb.name, "dnsName"),
                    "zoneId": ref(alb.name, "zoneId"),
                    "evaluateTargetHealth": False,
                }
            ],
        },
    )
    return DnsSpec(domain, association, record)
