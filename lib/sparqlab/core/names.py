"""Short names of the KGs and datasets a researcher gives as a name, a file, a folder or an endpoint URL: what
tables, figure titles, tick labels and file names show, so that no absolute path of one machine ends up in a
figure or a folder name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit


def short_name(source: str | Path | None) -> str | None:
    """A registered name as it is, an endpoint URL by its host (``http://gpu:7001/sparql`` → ``gpu``), a file by
    its stem (``/data/music/test.jsonl`` → ``test``, ``music.ttl`` → ``music``) and a folder by its name."""
    if source is None:
        return None
    text = str(source)
    if "://" in text:
        return urlsplit(text).hostname or text
    if "/" not in text and "\\" not in text and not Path(text).suffix:
        return text
    path = Path(text.rstrip("/\\"))
    return path.stem if path.suffix and not path.is_dir() else path.name
