"""`python -m checkpoint upload|verify ...`: what the in-cluster staging Job runs.

The cyclic garbage collector is off while boto3/botocore are imported (hundreds of thousands of
long-lived objects: it would scan them over and over, about a third of a no-op rerun's time),
then those objects are frozen out of its sight and it is back on for the run itself, so a long
upload collects its garbage as usual. Frozen again at the end, so that tearing the interpreter
down does not scan everything once more.
"""

import gc
import sys

from core.collector import collector_paused

with collector_paused(frozen=True):
    from checkpoint.program import main
code = main()
gc.freeze()
sys.exit(code)
