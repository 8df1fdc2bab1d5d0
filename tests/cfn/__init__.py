"""Every AWS input the program registers, judged by AWS's own rules: the CloudFormation registry
schemas cfn-lint ships (mapping.py says which CloudFormation type each Pulumi type is and how its
inputs translate; check.py runs cfn-lint on the translation), and the rules no schema holds
(core/aws/aws_rules.py, with their sources)."""
