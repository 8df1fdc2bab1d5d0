"""Rules on the cluster: EFA, instance types, one AZ, the operator's version."""
