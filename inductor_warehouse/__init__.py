"""inductor-warehouse: the debug artifacts of many torch.compile runs in one DuckDB warehouse.

    from inductor_warehouse import Warehouse

    with Warehouse("warehouse.duckdb") as wh:       # read-only; a file or a team lake's location
        wh.query("kernels/kernel_category_mix", model="hf_bert")    # a canned query: a Polars frame
        wh.sql("SELECT model, avg(kernel_count) FROM run_metrics GROUP BY ALL")

The packages under this one are the repository's top-level folders (pyproject's package-dir): `schema`
(the warehouse's SQL and what reads it), `store` (where a warehouse lives and how it is opened, locked,
migrated and written; the API), `ingest`, `analysis`, `dashboards` and `cli`.
"""

from __future__ import annotations

__all__ = ["Warehouse", "__version__"]

# the layers, lowest first: each imports only those before it (tests/test_layout.py)
PACKAGES = ("schema", "store", "ingest", "analysis", "dashboards", "cli")


def __getattr__(name: str):
    # lazily: `iwh` imports this package first, and most commands never need Polars
    if name == "Warehouse":
        from inductor_warehouse.store.api import Warehouse

        return Warehouse
    if name == "__version__":
        from importlib.metadata import version

        return version("inductor-warehouse")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
