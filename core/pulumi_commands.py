"""The Pulumi CLI commands our messages tell a user to run, made to name the stack they act on.

Without `--stack`, `pulumi config set` and `pulumi up` act on whichever stack is selected
(`pulumi stack select`): a fix written for the canary stack would change, and deploy, the
production one if that is the selected stack. Every such command a command prints for a stack
therefore names it, as `pulumi config set --stack canary --path ...` (the Pulumi CLI takes
`--stack`/`-s` on each of these commands: pulumi/pkg/cmd/pulumi/config, up, preview, destroy,
refresh, stack output). The checks that write the fixes know no stack: the command that reads the
stack passes their text through `naming_stack`.
"""

from __future__ import annotations

import re
import shlex

# A Pulumi command that acts on a stack, not already naming one.
_ACTS_ON_A_STACK = re.compile(
    r"\bpulumi (config set-all|config set|config rm|config get|up|preview|refresh|destroy"
    r"|stack output)\b(?!(?: --?[a-z-]+(?:[ =][^\s-]\S*)?)*? (?:--stack|-s)\b)"
)


def naming_stack(text: str, stack: str) -> str:
    """`text` with `--stack <stack>` after each Pulumi command in it that acts on a stack."""
    return _ACTS_ON_A_STACK.sub(lambda m: f"{m.group(0)} --stack {shlex.quote(stack)}", text)
