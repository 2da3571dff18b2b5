"""The DuckDB extensions a lake loads and the S3 credentials its data is read with.

Each extension comes from the PyPI package an extra of ours installs (pyproject.toml): DuckDB cannot
download them here, and loaded by path under their package names they lack their entry point, so
they are linked into an extension directory of ours under the names DuckDB loads them by.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

import duckdb

from inductor_warehouse.store.connection import one_row, sql_literal
from inductor_warehouse.store.errors import WarehouseError

# extension -> (the package that ships it, the extra that installs the package)
EXTENSIONS = {"ducklake": ("duckdb_extension_ducklake", "lake"), "postgres_scanner": ("duckdb_extension_postgres", "lake"),
              "httpfs": ("duckdb_extension_httpfs", "s3")}


def need_extra(extra: str, what: str, modules: tuple[str, ...]) -> None:
    """Raise a WarehouseError saying which extra to install when a module `what` needs is missing."""
    missing = [m for m in modules if not _importable(m)]
    if missing:
        raise WarehouseError(f"{what} needs the [{extra}] extra, which is not installed ({', '.join(missing)}): "
                             f"pip install 'inductor-warehouse[{extra}]'")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # refused by an import hook, or a module set to None
        return False


def has_extension(name: str) -> bool:
    return _importable(EXTENSIONS[name][0])


@functools.lru_cache(maxsize=1)
def duckdb_platform() -> str:
    """The platform DuckDB names its extension folders by (`linux_amd64`, `osx_arm64`, ...)."""
    with duckdb.connect(":memory:") as con:
        return str(one_row(con, "PRAGMA platform")[0])


def extension_directory() -> str:
    """A DuckDB extension directory holding the extensions of the installed `duckdb-extension-*`
    packages under the names DuckDB loads them by; those not installed are left out (need_extra
    says which extra a location needs before it loads them)."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "inductor-warehouse" / "duckdb-extensions"
    target = root / f"v{duckdb.__version__}" / duckdb_platform()
    for name, (package, _) in EXTENSIONS.items():
        link = target / f"{name}.duckdb_extension"
        if link.exists() or not _importable(package):
            continue
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations, f"{package} is importable"
        (source,) = (Path(spec.submodule_search_locations[0]) / "extensions" / f"v{duckdb.__version__}").glob(
            "*.duckdb_extension")
        target.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target)) / link.name
        tmp.symlink_to(source)
        os.replace(tmp, link)  # atomic: concurrent processes may make the same link
        tmp.parent.rmdir()
    return str(root)


def load_s3(con: duckdb.DuckDBPyConnection) -> None:
    """httpfs, with an S3 secret from the usual AWS variables (none stored in the catalog: each
    process makes its own). httpfs also copies those variables into its settings when it loads,
    where duckdb_settings() and current_setting() would show them: they are emptied, as the secret
    is what DuckDB uses."""
    con.execute("LOAD httpfs")
    secret = s3_secret_sql()
    if secret:
        con.execute(secret)
    for setting in ("s3_access_key_id", "s3_secret_access_key", "s3_session_token"):
        con.execute(f"SET {setting} = ''")


def s3_secret_sql() -> str | None:
    """A DuckDB S3 secret from the usual AWS variables. AWS_ENDPOINT_URL names an S3-compatible
    server (MinIO, moto, Ceph)."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return None
    parts = [f"KEY_ID {sql_literal(key)}", f"SECRET {sql_literal(secret)}", f"REGION {sql_literal(s3_region())}"]
    if os.environ.get("AWS_SESSION_TOKEN"):
        parts.append(f"SESSION_TOKEN {sql_literal(os.environ['AWS_SESSION_TOKEN'])}")
    endpoint = s3_endpoint()
    if endpoint:
        host = re.sub(r"^\w+://", "", endpoint).rstrip("/")
        parts += [f"ENDPOINT {sql_literal(host)}", "URL_STYLE 'path'",
                  f"USE_SSL {'true' if endpoint.startswith('https') else 'false'}"]
    return f"CREATE OR REPLACE SECRET iwh_s3 (TYPE s3, {', '.join(parts)})"


def s3_region(env: Mapping[str, str] = os.environ) -> str:
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"


def s3_endpoint(env: Mapping[str, str] = os.environ) -> str | None:
    """The URL of an S3-compatible server, when the data is not on AWS (in `env`: this process's
    environment, or the settings a Ray task was given)."""
    return env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
