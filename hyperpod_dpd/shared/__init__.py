"""What the command rooms share, below all of them: the AWS clients (aws), the Kubernetes client
(kube), the venvs of the tools that run beside ours (venvs), the hourly cost of a stack (cost,
prices.yaml), the endpoint of a stack that `--endpoint` names and its nodes (endpoints). The
stack reader is settings/stack_file.py `read_stack`; exit codes and their error type,
core/exits.py."""
