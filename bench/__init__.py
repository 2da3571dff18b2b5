"""`make bench`: ingest, re-ingest, trace-only against tlparse, canned queries, compare and dashboards
on warehouses of 100 to 10,000 runs. `python -m bench.run --help`."""
