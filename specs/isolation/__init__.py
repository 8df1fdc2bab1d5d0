"""Isolation of the pods the stack runs: Pod Security Admission levels on its namespaces, and
NetworkPolicies on its endpoints' workers."""
