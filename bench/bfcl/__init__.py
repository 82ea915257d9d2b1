"""MemoRepair evaluated on BFCL multi-turn tool-use tasks (the ``bfcl-eval`` package).

Nothing of BFCL is copied into this repository: tasks, function docs and the executable
back-ends are read from the installed package (``pip install --no-deps bfcl-eval mpmath``).
Modules, in the order data flows: ``data`` (tasks and docs) -> ``backends`` (tool back-ends
and migrations) -> ``executors`` (replay of call records and caches) -> ``builder`` (the
memory) -> ``events`` -> ``metrics`` and ``workload`` -> ``eval`` (the harness).
"""
