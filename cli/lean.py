"""Keep pandas and numpy out of an `iwh` process.

No command needs them, yet DuckDB imports pandas on a query's first parameter (to ask whether the
value is a DataFrame), pyarrow imports pandas on its first array, and numpy comes as either is
imported: a start-up every command would pay for modules none uses. Refused, they take the path
they take where these are not installed. Only the command line does this: the Python API and
the dashboards (which use pandas) are not touched, and `iwh dashboard`, Ray's workers and
`iwh capture`'s torch run in processes of their own."""

from __future__ import annotations

import sys

REFUSED = ("pandas", "numpy")


class _Refuse:
    """A meta path finder that makes importing REFUSED fail as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in REFUSED:
            raise ModuleNotFoundError(f"No module named {name!r} (iwh keeps it out of its commands)", name=name)
        return None


def lean_imports() -> None:
    if not any(m in sys.modules for m in REFUSED) and not any(isinstance(f, _Refuse) for f in sys.meta_path):
        sys.meta_path.insert(0, _Refuse())
