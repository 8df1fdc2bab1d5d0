"""`hyperpod-dpd rollout`: the canary's verdict acted on, step by step, through Pulumi
(hyperpod_dpd/cli/rollout.py parses the flags).

Each step: read the weights the stack file holds (`hyperpod-dpd:traffic`, what `pulumi config`
sees) and check the stack has deployed them (its `trafficWeights` output); judge the candidate
with the canary (hyperpod_dpd/canary); on `promote` move it to the next weight step, on
`rollback` to 0, on `hold` wait and judge again. A step is applied only once it is shown to
change the routing alone (routing.py), through the Automation API (pulumi_stack.py): the stack
file's weights set with `config set-all --path`, a `preview` that must show nothing else
pending, `up` with the policy pack; then, with `--commit`, a git commit of the stack file with
the verdict (git_commit.py). journal.py keeps one rollout of a stack at a time and lets a
rollout killed at any point be run again: it continues from the weights the stack holds.
"""
