"""The configuration-key machinery under every setting: problems in config keys (full keys in `pulumi config set --path` syntax) and their fixes, and field helpers."""
