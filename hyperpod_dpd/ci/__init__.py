"""`hyperpod-dpd ci-runner`: where a stack's deploy jobs run, and the first deploy that brings
their runner."""
