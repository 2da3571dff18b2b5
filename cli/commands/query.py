"""`iwh runs`, `iwh sql`, `iwh queries`, `iwh query`: reading the warehouse."""

from __future__ import annotations

import click

from inductor_warehouse.cli.options import FORMATS, db_option, format_option, labels, open_warehouse, timeout_option
from inductor_warehouse.schema import queries as canned

TABLE_ROWS = 1000  # the rows `iwh sql` lays out as a table


@click.command(epilog="\b\nExample:\n  iwh runs --model hf_bert --format csv")
@click.option("--model", help="only this model")
@click.option("--limit", type=int, default=None, help="at most N runs (newest first)")
@db_option
@format_option()
@click.pass_context
def runs(ctx, model, limit, fmt):
    """List runs: model, compiler version, device, graphs, kernels, errors."""
    from inductor_warehouse.schema.output import emit

    with open_warehouse(ctx) as wh:
        emit(wh.query("overview/runs", model=model, limit=limit), fmt)


@click.command(epilog="\b\nExample:\n  iwh sql \"SELECT model, count(*) FROM kernels JOIN runs USING (run_id) GROUP BY ALL\"")
@click.argument("text")
@timeout_option()
@db_option
@format_option()
@click.pass_context
def sql(ctx, text, timeout, fmt):
    """Run read-only SQL on the warehouse: one SELECT (or SHOW, DESCRIBE, EXPLAIN), time- and memory-bounded."""
    import duckdb

    from inductor_warehouse.store.bounds import QueryRefused
    from inductor_warehouse.schema.output import emit

    with open_warehouse(ctx) as wh:
        try:
            df = wh.sql(text, timeout=timeout)
        except QueryRefused as e:
            raise click.ClickException(str(e)) from e
        except duckdb.Error as e:
            raise click.ClickException(f"{type(e).__name__}: {e}".strip()) from e
    # a table is laid out after the time limit, in Python: its rows are capped; CSV and JSON give them all
    if fmt == "table" and df.height > TABLE_ROWS:
        emit(df.head(TABLE_ROWS), fmt)
        click.echo(f"({df.height - TABLE_ROWS:,} more rows not shown: --format csv or json prints all "
                   f"{df.height:,}, or LIMIT and OFFSET choose them)", err=True)
    else:
        emit(df, fmt)


@click.command("queries", epilog="\b\nExamples:\n  iwh queries --format json\n  iwh queries --all")
@click.option("--all", "show_all", is_flag=True,
              help="also the queries the dashboards and commands run for themselves (dashboard/, explore/, ...)")
@db_option
@format_option()
def list_queries(show_all, fmt):
    """List the canned queries (docs/queries.md describes each)."""
    import polars as pl

    from inductor_warehouse.schema.output import emit

    columns = {"name": pl.String, "title": pl.String, "params": pl.String}
    rows = [{"name": q.name, "title": q.title, "params": " ".join(f"{p.name}:{p.type}" for p in q.params),
             **({"used_by": q.internal} if show_all else {})}
            for q in canned.all_queries() if show_all or not q.internal]
    emit(pl.DataFrame(rows, schema={**columns, **({"used_by": pl.String} if show_all else {})}), fmt)


@click.command(epilog="\b\nExamples:\n  iwh query kernel_count_trend -p model=hf_bert --format csv\n"
                      "  iwh query top_reasons --show-sql")
@click.argument("name")
@click.option("-p", "--param", "params", multiple=True, metavar="K=V", help="query parameter")
@click.option("--show-sql", is_flag=True, help="print the SQL instead of running it")
@db_option
@format_option(FORMATS + ("markdown",))
@click.pass_context
def query(ctx, name, params, show_sql, fmt):
    """Run the canned query NAME (see `iwh queries`)."""
    from inductor_warehouse.schema.output import emit
    from inductor_warehouse.store.bounds import QueryRefused

    try:
        q = canned.get(name)
        if show_sql:
            click.echo(q.sql)
            return
        with open_warehouse(ctx) as wh:
            emit(wh.query(q.name, **labels(params, "-p")), fmt)
    except (canned.QueryError, QueryRefused) as e:  # QueryRefused: stopped at the time or memory limit
        raise click.ClickException(str(e)) from e
