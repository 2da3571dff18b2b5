"""What every command shares: where the warehouse is (`--db`), how results print (`--format`), and
opening the warehouse with errors that say what to do next.

`--db` and `--format` are accepted before the command (`iwh --db F runs`) and after it (`iwh runs
--db F`); the one after the command wins. Both land in the click context's shared `obj`.
"""

from __future__ import annotations

import click

from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.errors import WarehouseError

# schema.output.FORMATS, spelled out here: importing schema.output (and with it polars) on every
# start would slow `iwh ingest` and `--help`, which print no frames
FORMATS = ("table", "csv", "json")
DB_HELP = ("warehouse: a DuckDB file, or ducklake:postgres:<libpq conninfo> for a team's lake "
           "(default: $IWH_DB or ./warehouse.duckdb)")
DATA_PATH_HELP = "where a new lake keeps its Parquet files: a folder or s3://bucket/prefix (default: $IWH_DATA_PATH)"
WAIT_HELP = "seconds to wait for a warehouse another process is writing (default: 60 to read, 600 to write)"


def _keep(key: str):
    def callback(ctx: click.Context, param: click.Parameter, value):
        if value is not None:
            ctx.ensure_object(dict)[key] = value
        return value

    return callback


def db_option(f):
    """`--db LOCATION` and `--wait SECONDS` on a command (the group has its own, read first)."""
    f = click.option("--wait", metavar="SECONDS", type=float, default=None, expose_value=False,
                     callback=_keep("wait"), help=WAIT_HELP)(f)
    return click.option("--db", metavar="LOCATION", default=None, expose_value=False, callback=_keep("db"),
                        help=DB_HELP)(f)


def data_path_option(f):
    """`--data-path` on the commands that may create a lake."""
    return click.option("--data-path", metavar="DIR|s3://...", default=None, expose_value=False,
                        callback=_keep("data_path"), help=DATA_PATH_HELP)(f)


def format_option(choices: tuple[str, ...] = FORMATS, default: str = "table", help: str | None = None):
    """`--format` on a command; unset, it falls back to the group's `--format`, then `default`."""

    def resolve(ctx: click.Context, param: click.Parameter, value):
        value = value or (ctx.obj or {}).get("format") or default
        if value not in choices:
            raise click.BadParameter(f"{value!r} is not one of {', '.join(choices)}", ctx, param)
        return value

    def decorate(f):
        return click.option("--format", "fmt", metavar="|".join(choices), default=None, callback=resolve,
                            help=(help or "how to print") + f" [default: {default}]")(f)

    return decorate


def timeout_option(what: str = "the query"):
    """`--timeout SECONDS` on a command that reads: the limit every reader has (store/bounds.py)."""
    return click.option("--timeout", type=float, default=None, metavar="SECONDS",
                        help=f"stop {what} after this long (default: $IWH_QUERY_TIMEOUT or 60; 0: no limit)")


def location(ctx: click.Context) -> Location:
    """The warehouse the command works on: `--db` (after or before the command), $IWH_DB, the default."""
    obj = ctx.obj or {}
    return locate(obj.get("db"), obj.get("data_path"))


def wait(ctx: click.Context) -> float | None:
    return (ctx.obj or {}).get("wait")


def labels(pairs: tuple[str, ...], option: str = "--label") -> dict[str, str]:
    """`k=v` pairs (labels, query parameters) as a dict; a pair without `=` is a usage error."""
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise click.BadParameter(f"{pair!r} is not k=v (e.g. {option} variant=default)", param_hint=option)
        k, _, v = pair.partition("=")
        out[k.strip()] = v.strip()
    return out


def open_warehouse(ctx: click.Context):
    """The warehouse of `ctx`, read-only, as a `store.api.Warehouse`."""
    import duckdb

    from inductor_warehouse.store.api import Warehouse

    where = location(ctx)
    try:
        return Warehouse(where, wait=wait(ctx))
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    except duckdb.Error as e:
        raise click.ClickException(f"cannot open {where.printable}: {e}") from e
