"""Keep pandas out of an `iwh` process.

No command needs pandas, yet DuckDB imports it on a query's first parameter (to ask whether the
value is a DataFrame) and pyarrow on its first array: 0.3-0.45 s of every command, a tenth of a
trace-only ingest. With pandas refused, both take the path they take where it is not installed.
Only the command line does this: the Python API and the dashboards (which use pandas) are not
touched, and `iwh dashboard` serves from a process of its own."""

from __future__ import annotations

import sys


class _RefusePandas:
    """A meta path finder that makes `import pandas` fail as if pandas were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (iwh keeps pandas out of its commands)", name=name)
        return None


def refuse_pandas() -> None:
    if "pandas" not in sys.modules and not any(isinstance(f, _RefusePandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _RefusePandas())
