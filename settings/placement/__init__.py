"""Where each endpoint's pools run and whether they fit: GPU groups' types and sizes, pinning, and every pool judged on exactly the groups it can be scheduled on."""
