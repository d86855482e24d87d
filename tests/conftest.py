"""Settings every test process shares, set before any numeric library loads.

One OpenMP thread: CTranslate2 and torch round differently with different thread counts, and Ray
gives each worker one thread per CPU it holds, so the equivalence tests (local run against the
cluster's) compare like with like on a machine of any size.
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"
