"""The README's promise about the suite: its folders mirror lib/sparqlab, one per package under the same name, plus
the few folders the README's layout line names beside them."""

import re
from pathlib import Path

import sparqlab


def test_test_folders_mirror_the_library_packages():
    lib = Path(sparqlab.__file__).parent
    readme = (lib.parents[1] / "README.md").read_text(encoding="utf-8")
    promise = re.search(r"^tests/ .*(?:\n {10,}.*)*", readme, re.MULTILINE).group()  # with its continued lines
    besides = set(re.findall(r"(\w+)/", promise.split(" plus ", 1)[1]))
    packages = {init.parent.name for init in lib.glob("*/__init__.py")}
    folders = {path.name for path in Path(__file__).parent.iterdir()
               if path.is_dir() and not path.name.startswith((".", "__"))}
    assert besides and besides.isdisjoint(packages), promise
    assert sorted(packages - folders) == [], "library packages without a tests folder of the same name"
    assert sorted(folders - packages - besides) == [], "tests folders that mirror no library package (README)"
