"""Provenance of a run: ``environment.json`` (where and with what it ran) and ``manifest.json`` (what it is).

``environment.json`` records the first start of a run folder; every later resume appends a short entry to its
``resumes`` list, so a result can always be traced to the code revisions and hosts that produced it.
``manifest.json`` is the small summary that browsing and merging read without opening the predictions: ids,
shard, model and whether that model is a stand-in.
"""

from __future__ import annotations

import functools
import getpass
import json
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from sparqlab.core.hashing import id_set_record
from sparqlab.core.paths import CHECKOUT, PACKAGE_DIR
from sparqlab.runs.config import RUN_FORMAT

KEY_PACKAGES = ("sparqlab", "pyoxigraph", "SPARQLWrapper", "rdflib", "openai", "httpx", "numpy", "pandas",
                "tqdm", "torch", "sentence-transformers", "fastapi", "uvicorn")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions(names: tuple[str, ...] = KEY_PACKAGES) -> dict[str, str | None]:
    """Installed versions (``None`` for a package that is not installed), read once per process: a package
    upgraded under a running process is not the code that process imported, and a run's provenance need not parse
    13 metadata files each time."""
    return dict(_versions_at_first_read(names))


@functools.cache
def _versions_at_first_read(names: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    versions: list[tuple[str, str | None]] = []
    for name in names:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, None))
    return tuple(versions)


def git_state(root: Path | None = CHECKOUT) -> dict[str, Any]:
    """Revision and dirty flag of the code: of the checkout it runs from, else (a pip install) of the tree the
    installed wheel was built from, as its build recorded them. ``revision`` is ``None``
    outside git, before a first commit, or for a wheel built without git."""
    if root is None:
        return _build_state()

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    revision = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"revision": revision, "dirty": bool(status) if status is not None else None}


def _build_state() -> dict[str, Any]:
    """``sparqlab/bundled/build.json``, written when the wheel was built (setup.py)."""
    try:
        recorded = json.loads((PACKAGE_DIR / "bundled" / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"revision": None, "dirty": None}
    return {"revision": recorded.get("revision"), "dirty": recorded.get("dirty")}


def is_standin(model: Any) -> bool:
    """Stand-ins are flagged by the model object or recognisable by their ``standin-*`` name (e.g. a stand-in
    served over HTTP and reached through the OpenAI-compatible client)."""
    return bool(getattr(model, "is_standin", False)) or str(getattr(model, "name", "")).startswith("standin-")


def describe_model(model: Any) -> dict[str, Any] | None:
    """The model's own description plus the runner's ``is_standin`` verdict; ``None`` without a model. The question
    ids a stand-in's ``memory`` drew (GGC's ``standin-knn``: a seeded share of a split, whose dataset, split, share
    and seed are recorded beside them) are kept as their count and digest
    (:func:`~sparqlab.core.hashing.id_set_record`), not listed: the parameters determine them."""
    if model is None:
        return None
    description = {**model.describe(), "is_standin": is_standin(model)}
    memory = description.get("memory")
    if isinstance(memory, dict) and isinstance(memory.get("ids"), list):
        description["memory"] = {**memory, "ids": id_set_record(memory["ids"])}
    return description


def environment(model: Any, kg: Any) -> dict[str, Any]:
    """Everything about the machine and code that a result depends on (no secrets)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = None
    return {
        "started": now_iso(),
        "hostname": socket.gethostname(),
        "user": user,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "argv": sys.argv,
        "packages": package_versions(),
        "git": git_state(),
        "model": describe_model(model),
        "kg": kg.describe(),
    }


def resume_entry(env: dict[str, Any]) -> dict[str, Any]:
    """The short record of one resume of an existing run folder."""
    return {key: env[key] for key in ("started", "hostname", "git", "packages")}


def manifest_document(header: dict[str, Any], status: str, n_done: int, fingerprint: str, n_total: int,
                      question_ids: list[str]) -> dict[str, Any]:
    """``manifest.json``: the run's header, progress (``status`` running / complete / incomplete) and the ids
    this folder is responsible for, in question order (a merge checks shards against them)."""
    return {"format": RUN_FORMAT, **header, "status": status, "n_questions": len(question_ids), "n_done": n_done,
            "n_total": n_total, "questions_fingerprint": fingerprint, "updated": now_iso(),
            "question_ids": question_ids}
