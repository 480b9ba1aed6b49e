"""Benchmarks: each figure next to a baseline measured in the same run (never timed tests).

Every process a benchmark starts runs as an installed tool does, from bytecode: a set
PYTHONDONTWRITEBYTECODE (this machine's shells have it) would make each one compile every module
it imports, at every start, which `pip install` spares a user.
"""

import os

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
