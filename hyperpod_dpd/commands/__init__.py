"""The `hyperpod-dpd` commands: one module each, all of one shape.

    register(subparsers)      adds the command's parser; its defaults set handler=run
    run(args, project_dir)    does the work and returns the exit code

A command module imports only the standard library at the top: what it needs to run (Pulumi
SDKs, boto3, kubernetes, pydantic models) is imported inside `run`, so `hyperpod-dpd --help`
and every `<command> --help` start without loading them.
"""
