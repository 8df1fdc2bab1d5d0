"""The CrossGuard side of the command line: `policy-pack` assembles the pack directory that
`pulumi preview --policy-pack` runs (assemble, command), `policy-config` writes a stack's pack
config (config). The pack itself is policies/pack.py."""
