"""What the stack creates for its GitHub workflows: the deploy jobs' runner in its VPC."""
