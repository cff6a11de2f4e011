"""The conda environment file and the pip requirements must pin the same packages at the same versions."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pip_pins(*names: str) -> dict[str, str]:
    pins = {}
    for name in names:
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                package, version = line.split("==")
                pins[package.lower()] = version
    return pins


def conda_pins() -> dict[str, str]:
    pins = {}
    for match in re.finditer(r"^\s+- ([A-Za-z0-9_.\-]+)==([^\s]+)\s*$", (ROOT / "environment.yml").read_text(), re.M):
        pins[match.group(1).lower()] = match.group(2)
    return pins


def test_environment_yml_matches_requirements():
    assert conda_pins() == pip_pins("requirements.txt", "requirements-dev.txt")


def test_torch_is_pinned_everywhere():
    assert pip_pins("requirements.txt")["torch"] == "2.13.0"
    assert conda_pins()["torch"] == "2.13.0"


def test_environment_yml_uses_python_311_and_installs_project():
    text = (ROOT / "environment.yml").read_text()
    assert "python=3.11" in text
    assert "- -e ." in text


def test_constraints_agree_with_requirements():
    """constraints.txt (the full freeze) must not contradict a direct pin (local labels such as +cpu aside)."""
    frozen = {name: version.split("+")[0] for name, version in pip_pins("constraints.txt").items()}
    for package, version in pip_pins("requirements.txt", "requirements-dev.txt").items():
        assert frozen.get(package.replace("_", "-")) == version, package
