"""``sparqlab init [DIR]``: make a workspace (runs, figures and caches are written there, notebooks run from it)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "init", help="make a workspace: a folder for runs/, figures/, .cache/ with the notebooks and example grids",
        description="Write a .sparqlab-workspace marker in DIR (default: the current folder) and copy the bundled "
                    "notebooks (notebooks/) and example grids (experiments/) into it; readable files already there "
                    "are kept, unreadable ones moved to NAME.damaged and copied anew. Commands run in DIR or below then write runs/, figures/ and .cache/ to DIR.")
    parser.add_argument("directory", nargs="?", type=Path, default=Path("."), metavar="DIR")
    parser.set_defaults(handler=_init)


def _init(args: argparse.Namespace) -> int:
    from sparqlab.core.paths import CHECKOUT, init_workspace

    folder = args.directory.resolve()
    files = init_workspace(folder)
    print(f"workspace {folder}: {len(files.copied)} files copied"
          + (f", {len(files.kept)} kept as they were" if files.kept else ""))
    for path in files.replaced:
        print(f"  {path} could not be read (an init cut short?): moved to {path.name}.damaged and copied anew")
    if CHECKOUT is not None:
        print(f"note: this sparqlab runs from the checkout {CHECKOUT}, which stays its workspace (outputs go "
              f"there unless SPARQLAB_WORKSPACE={folder} is set)")
    return 0
