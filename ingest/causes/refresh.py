"""Write graph_break_registry.json from the `torch/_dynamo/graph_break_registry.json` of torch releases.

    python -m inductor_warehouse.ingest.causes.refresh NEWEST.json [OLDER.json ...]

Every id any of them holds, with its gb_type titles, the newest release's first: an id a newer
release dropped keeps the title an older one gave it, so older runs' messages still find it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inductor_warehouse.ingest.rows import Json

HERE = Path(__file__).resolve().parent


def merged(registries: list[dict[str, list[dict[str, Json]]]]) -> dict[str, list[str]]:
    """gb id -> its gb_type titles, from registries of {gb id: [{"Gb_type": ..., ...}, ...]}."""
    ids: dict[str, list[str]] = {}
    for registry in registries:
        for gid, entries in registry.items():
            titles = ids.setdefault(gid.lower(), [])
            for entry in entries:
                if entry["Gb_type"] not in titles:
                    titles.append(entry["Gb_type"])
    return dict(sorted(ids.items()))


def main(paths: list[str]) -> None:
    registries = [json.loads(Path(p).read_text()) for p in paths]
    about = json.loads((HERE / "graph_break_registry.json").read_text())["about"]
    doc = {"about": about, "ids": merged(registries)}
    (HERE / "graph_break_registry.json").write_text(json.dumps(doc, indent=0, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
