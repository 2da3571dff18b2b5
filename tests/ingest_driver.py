"""`iwh` in a child process with a fault or a delay put into its writer, for the concurrency tests.

    python -m tests.ingest_driver slow FLAG -- ingest PATH --db W      each batch one run, a pause after each commit
    python -m tests.ingest_driver stall FLAG -- ingest PATH --db W     stops inside its first commit, after the
                                                                       kernels were inserted; FLAG says when

With IWH_DRIVER_PARSE_S set, each run's parse takes that much longer, and with
IWH_DRIVER_BATCH_RUNS a batch holds that many runs (parse workers are still busy when the writer
reaches its moment).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main() -> None:
    mode, flag = sys.argv[1], Path(sys.argv[2])
    args = sys.argv[sys.argv.index("--") + 1:]
    from inductor_warehouse.ingest import load, write

    if os.environ.get("IWH_DRIVER_PARSE_S"):
        parse, delay = load._parse_one, float(os.environ["IWH_DRIVER_PARSE_S"])

        def slow_parse(*a, **kw):
            time.sleep(delay)
            return parse(*a, **kw)

        load._parse_one = slow_parse
    if os.environ.get("IWH_DRIVER_BATCH_RUNS"):
        load.BATCH_RUNS = int(os.environ["IWH_DRIVER_BATCH_RUNS"])
    if mode == "slow":
        load.BATCH_RUNS = 1
        commit = write.commit

        def commit_then_pause(*a, **kw):
            refused = commit(*a, **kw)
            flag.touch()
            time.sleep(0.3)  # the lock is free here: readers and other writers get in
            return refused

        write.commit = commit_then_pause
    elif mode == "stall":
        insert = write.insert

        def insert_then_stall(con, table, tbl, *rest):
            insert(con, table, tbl, *rest)
            if table == "kernels":
                flag.touch()
                time.sleep(600)  # killed here, inside the transaction, with the write lock held

        write.insert = insert_then_stall
    else:
        raise SystemExit(f"unknown mode {mode}")
    from inductor_warehouse.cli.main import cli

    cli(args=args, standalone_mode=True)


if __name__ == "__main__":
    main()
