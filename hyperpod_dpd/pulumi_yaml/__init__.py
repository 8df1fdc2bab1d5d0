"""The `pulumi-yaml` command: the project files made again from the settings model."""
