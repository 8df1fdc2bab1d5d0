"""The hyperpod-dpd CrossGuard pack: `pulumi preview --policy-pack policies`.

Only builds the PolicyPack; the policies come from policies/pack.py, the rules from
policies/rules/ (shared with the policy gate of __main__.py and the offline plan).
"""

import sys
from pathlib import Path

# The pack runs with policies/ as its working directory; the rules import the project's
# packages (policies, core) from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pulumi_policy import PolicyPack

from policies.pack import build_policies

PolicyPack(name="hyperpod-dpd", policies=build_policies())
