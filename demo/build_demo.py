"""`make demo`: unpack the bundled corpus, ingest it, and say what changed between releases.

    python -m demo.build_demo [--db warehouse.duckdb] [--dest demo_corpus] [--jobs 2]

Archives already unpacked under --dest are left as they are, and runs already in the warehouse
are skipped by the loader, so a second `make demo` starts the dashboard at once.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
from pathlib import Path

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.schema.output import table
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.opening import default_db_path

HERE = Path(__file__).parent
# captures the tests keep, which the README's and docs' examples read too: the benchmark harness on
# timm models (three releases, repeats of one), and transformers models whose graph breaks Dynamo
# counts (tests/fixtures/SOURCES.md says how each was made)
FIXTURE_CAPTURES = [HERE.parent / "tests" / "fixtures" / "captures" / name for name in
                    ("harness-timm.tar.xz", "harness-timm-repeats.tar.xz", "harness-reformer.tar.xz",
                     "dynamo-counts.tar.xz")]


def unpack(dest: Path) -> list[Path]:
    """Each archive into dest/<archive name>, once."""
    folders = []
    for archive in sorted(HERE.glob("*.tar.xz")) + [a for a in FIXTURE_CAPTURES if a.exists()]:
        folder = dest / archive.name.removesuffix(".tar.xz")
        if not folder.exists():
            partial = folder.with_name(folder.name + ".partial")
            with tarfile.open(archive) as tf:
                tf.extractall(partial, filter="data")
            partial.rename(folder)
        folders.append(folder)
    return folders


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", default=default_db_path())
    p.add_argument("--dest", type=Path, default=Path("demo_corpus"))
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    folders = unpack(args.dest)
    print(f"unpacked {len(folders)} archives under {args.dest}/: {', '.join(f.name for f in folders)}")
    summary = ingest_paths(folders, args.db, jobs=args.jobs, progress=True)
    print(summary.line())
    with Warehouse(args.db) as wh:
        print("\nIngested, by release:")
        print(table(wh.query("overview/by_release")))
        print("\nLargest kernel-count changes between releases of one workload (model, mode, dtype, variant, batch, device):")
        print(table(wh.query("kernels/largest_kernel_count_change", limit=5)))
        errors = wh.sql("SELECT count(*) AS n FROM ingest_errors").item()
    if errors:
        print(f"\n{errors} ingest errors: see `iwh query ingest/runs_with_errors`", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
