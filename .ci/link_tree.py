"""build/typecheck/inductor_warehouse: the installed package's names as a tree of links onto the
checkout's folders, read off setup.py's own mapping.

The design card's top-level folders install under one namespace (setup.py: `schema/` is
`inductor_warehouse.schema`), which an editable install maps with an import hook that type checkers
and IDEs do not run. Pointed at this tree (mypy's `mypy_path`, pyright's `extraPaths`), they resolve
`inductor_warehouse.*` to the files in the checkout: an edit is seen at once, and a new folder is
linked the next time this runs (`make typecheck` does).
"""

from __future__ import annotations

import os
import runpy
import shutil
import sys
from pathlib import Path

import setuptools

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"


def mapping() -> dict[str, str]:
    """setup.py's package -> folder mapping, as it hands it to setuptools."""
    said: dict = {}
    real, setuptools.setup = setuptools.setup, lambda **kw: said.update(kw)  # type: ignore[assignment]
    try:
        runpy.run_path(str(ROOT / "setup.py"), run_name="setup_mapping")
    finally:
        setuptools.setup = real  # type: ignore[assignment]
    return said["package_dir"]


def link_tree() -> Path:
    """The tree made afresh: a link for each package whose folder is not its parent's subfolder of
    the same name, and links to the modules of a package whose folder holds other packages' too."""
    shutil.rmtree(TREE, ignore_errors=True)
    dirs = mapping()
    for package, folder in sorted(dirs.items()):
        parent, _, last = package.rpartition(".")
        if parent and dirs.get(parent) and Path(dirs[parent]) / last == Path(folder):
            continue  # reached through its parent's link
        target = TREE.joinpath(*package.split("."))
        if not parent:  # the namespace's own folder: its modules only
            target.mkdir(parents=True)
            for module in sorted((ROOT / folder).glob("*.py")):
                (target / module.name).symlink_to(os.path.relpath(module, target))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.path.relpath(ROOT / folder, target.parent), target_is_directory=True)
    return TREE


if __name__ == "__main__":
    sys.stdout.write(f"{link_tree()}\n")
