"""Installing a throw-away third-party package the way a user would (pip, its own pyproject.toml with entry
points), into a folder of its own, for the plug-in tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def install_package(root: Path, distribution: str, package: str, code: str, entry_points: dict[str, str],
                    data: dict[str, Path] | None = None) -> dict[str, str]:
    """Build ``package`` (``__init__.py`` = ``code``, plus the ``data`` files copied in as package data) as the
    distribution ``distribution`` declaring ``entry_points`` (group -> entry name, all pointing at the package),
    install it into ``root/site`` and return an environment whose ``PYTHONPATH`` finds it."""
    source = root / "src"
    (source / package).mkdir(parents=True)
    (source / package / "__init__.py").write_text(textwrap.dedent(code))
    for name, path in (data or {}).items():
        (source / package / name).write_bytes(path.read_bytes())
    groups = "".join(f'\n[project.entry-points."{group}"]\n{name} = "{package}"\n'
                     for group, name in entry_points.items())
    (source / "pyproject.toml").write_text(textwrap.dedent(f'''\
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{distribution}"
        version = "0.1"

        [tool.setuptools.package-data]
        {package} = ["*"]
    ''') + groups)
    target = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True, capture_output=True)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
