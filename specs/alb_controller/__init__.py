"""The IAM policy of the AWS Load Balancer Controller the inference operator's add-on installs.

Two things, kept apart:
- the original, as data: `iam_policy.json` is upstream's `docs/install/iam_policy.json` at the
  pinned release, byte for byte (`upstream.py` refuses other bytes than core/versions.py's
  sha256);
- the narrowing, as code (`narrowing.py`): the original's unconditioned writes (security group
  rules anywhere in the Region, listener and rule writes on any load balancer) get the tag and
  VPC conditions the controller's own calls satisfy, each change with why and its source.

The stack registers the narrowed document (specs/operator.py), so the gate, the plan's
resources.json and the scanners (tests/security) judge the statements that are deployed.
"""
