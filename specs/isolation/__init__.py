"""Isolation of the pods the stack runs: Pod Security Admission levels on its namespaces,
NetworkPolicies on its endpoints' workers and on the instance metadata service, and the
admission policies that keep every pod but the operator's out of the endpoints' namespaces."""
