"""`iwh export`: tables or a canned query's result to Parquet or CSV files, for other tools."""

from __future__ import annotations

from pathlib import Path

import click
import duckdb

from inductor_warehouse.cli.options import db_option, format_option, labels, location, timeout_option
from inductor_warehouse.schema import queries as canned
from inductor_warehouse.schema.ddl import TABLES
from inductor_warehouse.store.bounds import QueryRefused, Stuck, let_go, run_bounded
from inductor_warehouse.store.connection import sql_literal
from inductor_warehouse.store.errors import WarehouseError
from inductor_warehouse.store.opening import connect


@click.command("export", epilog="\b\nExamples:\n  iwh export out/ --table kernels --table runs\n"
                                "  iwh export out/ --query kernel_category_mix --format csv\n"
                                "  iwh export out/ --timeout 0      # a big warehouse's every table, however long")
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--table", "tables", multiple=True, type=click.Choice(TABLES), help="only these tables (default: all)")
@click.option("--query", "query_name", help="export one canned query's result instead of tables")
@click.option("-p", "--param", "params", multiple=True, metavar="K=V", help="parameter of --query")
@timeout_option("the export")
@db_option
@format_option(("parquet", "csv"), default="parquet", help="file format")
@click.pass_context
def export_command(ctx, dest, tables, query_name, params, timeout, fmt):
    """Write warehouse tables (or a canned query's result) into DEST, one file each."""
    try:
        con = connect(location(ctx), read_only=True)
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    options = "(FORMAT parquet, COMPRESSION zstd)" if fmt == "parquet" else "(FORMAT csv, HEADER)"
    written: list[Path] = []

    def write() -> None:
        if query_name:
            q = canned.get(query_name)
            path = out / f"{q.name.replace('/', '__')}.{fmt}"
            # COPY takes no prepared parameters: the result becomes a relation first, through Arrow
            # types that keep DuckDB's own (JSON, HUGEINT) so the file's columns are the query's
            con.execute("SET arrow_lossless_conversion = true")
            rel = con.from_arrow(canned.run(con, q.name, labels(params, "-p")).to_arrow_table())
            if fmt == "parquet":
                rel.write_parquet(str(path))
            else:
                rel.write_csv(str(path), header=True)
            written.append(path)
        else:
            for table in tables or TABLES:
                path = out / f"{table}.{fmt}"
                con.execute(f"COPY {table} TO {sql_literal(str(path))} {options}")
                written.append(path)

    try:
        # within the time limit every reader has
        run_bounded(con, write, timeout)
    except Stuck as e:
        let_go(con.close)
        raise click.ClickException(str(e)) from e
    except (canned.QueryError, QueryRefused, duckdb.Error) as e:
        con.close()
        raise click.ClickException(str(e)) from e
    con.close()
    for path in written:
        click.echo(f"{path} ({path.stat().st_size:,} bytes)")
