"""The program's own plumbing, below infra/ and workloads/: the stack's configuration read once from the Pulumi runtime, and the Outputs that resolve desired specs into resource inputs."""
