"""The one thing pyproject.toml cannot say: which packages ship, read off the tree.

The design card's top-level folders install as one namespace: `schema/` is `inductor_warehouse.schema`,
`schema/queries/kernels/` is `inductor_warehouse.schema.queries.kernels`, and so on for every folder
under them (the folders of SQL files and static files too, as packages of data, so setuptools
ships them without a warning each). Nothing else of ours goes into site-packages. Editable installs
(`pip install -e .`) map the same names onto the same folders.
"""

from pathlib import Path

from setuptools import setup

NAMESPACE = "inductor_warehouse"
FOLDERS = ("schema", "store", "ingest", "analysis", "dashboards", "cli")  # inductor_warehouse.PACKAGES


def package_dirs() -> dict[str, str]:
    here = Path(__file__).parent
    dirs = {NAMESPACE: NAMESPACE}
    for top in FOLDERS:
        for folder in [here / top, *sorted(p for p in (here / top).rglob("*") if p.is_dir())]:
            rel = folder.relative_to(here)
            if "__pycache__" not in rel.parts:
                dirs[".".join((NAMESPACE, *rel.parts))] = rel.as_posix()
    return dirs


setup(package_dir=package_dirs(), packages=list(package_dirs()))
