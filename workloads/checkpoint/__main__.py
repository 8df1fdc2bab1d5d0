"""`python -m workloads.checkpoint upload|verify ...`: what the in-cluster staging Job runs."""

import sys

from workloads.checkpoint.cli import main

sys.exit(main())
