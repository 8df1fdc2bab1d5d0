"""The hyperpod-dpd CrossGuard pack's entry point.

`hyperpod-dpd policy-pack` (`make policy-pack`) assembles the pack directory that `pulumi
preview --policy-pack build/policy-pack` runs: this file as its `__main__.py`, the `policies`
and `core` packages, PulumiPolicy.yaml and requirements.txt, and a venv built from them. The
CLI starts it as `venv/bin/python -u -m pulumi.policy <engine> <pack dir>` from the pack
directory, so everything it imports lives there. Constructing `PolicyPack` starts the gRPC
server and blocks: nothing else ever imports this module.
"""

from pulumi_policy import PolicyPack

from policies.pack import build_policies

PolicyPack(name="hyperpod-dpd", policies=build_policies())
