"""DeSQ's non-parametric KB memory (section 3.3): a dense index over KG elements (id, label, description).

Each entry is embedded as its label and its whole description, concatenated (``"label: description"``, section
3.5: retrieval "using the concatenation of the generated label and description"); a query (a generated label and
description) is embedded the same way and compared by cosine similarity (unit vectors, so a dot product). The default embedder is the offline
all-MiniLM-L6-v2 (:mod:`sparqlab.llm.embeddings`); any sentence-transformers model can be named instead (the paper
uses BGE-Large; its weights must already be on disk). Search is exact: numpy over the rows of the slot's kind
(entries are stored grouped by kind, so a kind is a contiguous block), or faiss's exact inner-product index when
``backend="faiss"`` is asked for and faiss is installed (``"auto"`` picks it above :data:`FAISS_ABOVE` entries).
A memory is built once and saved (``entries.jsonl``, ``vectors.npy``, ``memory.json`` with the other two files'
sizes and digests), then reloaded after a check against that record: a damaged memory is refused (``load``) or
rebuilt (``load_or_build``), naming the file, never searched.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from sparqlab.core.files import atomic_write
from sparqlab.core.integrity import (
    REBUILT_ON_USE,
    DamagedOutput,
    RebuiltOutputWarning,
    files_problem,
    record_files,
)
from sparqlab.core.paths import data_dir

DEFAULT_EMBEDDER = "minilm"
"""The bundled offline all-MiniLM-L6-v2; any other value is a sentence-transformers model name or path."""
ONNX_EMBEDDERS = {"minilm-onnx": "float", "minilm-int8": "int8"}
"""The same bundled MiniLM run by ONNX Runtime (:func:`sparqlab.llm.embeddings.embed_onnx`): exported float
weights, or weights quantised to int8 (benchmarks/kb_memory_bench.py --compare measures speed and agreement)."""
MEMORY_FILES = ("entries.jsonl", "vectors.npy")
"""The files of a saved memory that ``memory.json`` records (sizes and digests)."""
FAISS_ABOVE = 1_000_000
KINDS = ("entity", "property", "class")


@dataclass(frozen=True)
class Entry:
    """One KG element in the memory; ``kind`` is ``entity``, ``property`` or ``class``."""

    id: str
    label: str
    description: str
    kind: str

    @property
    def text(self) -> str:
        return entry_text(self.label, self.description)


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float


def entry_text(label: str, description: str) -> str:
    """What is embedded, for entries and for queries alike: the label and the whole description, concatenated
    (section 3.5)."""
    description = " ".join(str(description).split())
    return f"{label}: {description}" if description else str(label)


HASHING_EMBEDDER = "hashing"
"""A model-free baseline encoder: hashed bag of lower-case words (texts sharing words are similar). For smoke
tests and for machines without the MiniLM package; not a semantic embedding."""


def hashed_bag_of_words(texts: Sequence[str], dimension: int = 512) -> np.ndarray:
    """Unit float32 rows: each lower-case word adds 1 at a position given by its (stable) hash."""
    rows = np.zeros((len(texts), dimension), dtype=np.float32)
    for number, text in enumerate(texts):
        for word in re.findall(r"\w+", str(text).lower()):
            rows[number, int(hashlib.md5(word.encode("utf-8")).hexdigest(), 16) % dimension] += 1.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


def embedder(name: str = DEFAULT_EMBEDDER, batch_size: int = 64) -> Callable[[list[str]], np.ndarray]:
    """``texts -> unit float32 rows``: the offline MiniLM for ``"minilm"`` (torch) and the names of
    :data:`ONNX_EMBEDDERS` (ONNX Runtime), :func:`hashed_bag_of_words` for ``"hashing"``, else the named
    sentence-transformers model (loaded once per call of this function; it must be
    available offline)."""
    if name == HASHING_EMBEDDER:
        return hashed_bag_of_words
    if name == DEFAULT_EMBEDDER:
        from sparqlab.llm.embeddings import embed

        return lambda texts: embed(texts, batch_size=batch_size)
    if name in ONNX_EMBEDDERS:
        from sparqlab.llm.embeddings import embed_onnx

        return lambda texts: embed_onnx(texts, ONNX_EMBEDDERS[name], batch_size=batch_size)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(name, device="cpu")
    return lambda texts: np.asarray(model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                                 convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)


def _kind_rank(kind: str) -> int:
    """Position of ``kind`` in :data:`KINDS` (unknown kinds last): the block order of a memory."""
    return KINDS.index(kind) if kind in KINDS else len(KINDS)


def memory_order(entries: Sequence[Entry]) -> list[int]:
    """Positions of ``entries`` grouped by kind (stable within a kind): a memory's row order."""
    return sorted(range(len(entries)), key=lambda i: _kind_rank(entries[i].kind))


def canonical_order(entries: Sequence[Entry]) -> list[int]:
    """Positions of ``entries`` by kind, then id: the row order of shipped vectors, whatever order made them."""
    return sorted(range(len(entries)), key=lambda i: (_kind_rank(entries[i].kind), entries[i].kind, entries[i].id))


def content_digest(model: str, entries: Sequence[Entry]) -> str:
    """Digest of an embedder name and entries in the order given, with the text each is embedded as
    (:func:`entry_text`): equal digests, equal vectors."""
    content = hashlib.sha256(model.encode("utf-8"))
    for e in entries:
        content.update(f"\n{e.id}\t{e.label}\t{e.description}\t{e.kind}\t{e.text}".encode())
    return content.hexdigest()[:16]


PREBUILT_DIR = "desq_memory"
"""Folder under ``data/`` of shipped memory vectors (:func:`ship_prebuilt`): embedding the movie KG's 43k entries
takes minutes on a CPU (docs/performance.md: at least ~2 min at this CPU's peak float rate), loading them a second."""


def ship_prebuilt(memory: KBMemory, name: str, folder: str | Path | None = None) -> Path:
    """Write ``memory``'s vectors (in :func:`canonical_order`) as int8 per row (``round(v / s)``,
    ``s = max|v| / 127``) with its content digest to ``data/desq_memory/<name>.npz``, for :meth:`KBMemory.build`
    to use instead of embedding the same entries.
    Per-row int8 keeps every cosine within ~1e-3 of the float value at a quarter of the bytes."""
    folder = Path(folder or data_dir() / PREBUILT_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    order = canonical_order(memory.entries)
    vectors = memory.vectors[order]
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127.0
    codes = np.round(vectors / scales[:, None]).astype(np.int8)
    target = folder / f"{name}.npz"
    np.savez_compressed(target, codes=codes, scales=scales.astype(np.float32), model=np.array(memory.model),
                        digest=np.array(content_digest(memory.model, [memory.entries[i] for i in order])))
    return target


def prebuilt_vectors(model: str, entries: Sequence[Entry], folder: str | Path | None = None) -> np.ndarray | None:
    """Unit vectors of ``entries`` (in the given order) from a shipped file with the same content digest, or
    ``None`` when no shipped file holds exactly these entries embedded by ``model``."""
    folder = Path(folder or data_dir() / PREBUILT_DIR)
    if not folder.is_dir():
        return None
    order = canonical_order(entries)
    digest = content_digest(model, [entries[i] for i in order])
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as shipped:
            if str(shipped["digest"]) != digest:
                continue
            rows = shipped["codes"].astype(np.float32) * shipped["scales"][:, None]
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        vectors = np.empty_like(rows)
        vectors[order] = rows  # shipped in canonical order; back to the order of ``entries``
        return vectors
    return None


class KBMemory:
    """Entries plus their unit embeddings; :meth:`search` returns the best entries of a kind for a text."""

    def __init__(self, entries: Sequence[Entry], vectors: np.ndarray, model: str = DEFAULT_EMBEDDER,
                 backend: str = "auto", info: dict | None = None,
                 embed: Callable[[list[str]], np.ndarray] | None = None):
        """``vectors``: one unit row per entry; ``embed`` encodes query texts (default: the ``model`` embedder,
        loaded on first search)."""
        if len(entries) != len(vectors):
            raise ValueError(f"{len(entries)} entries but {len(vectors)} vectors")
        order = memory_order(entries)
        self.entries = [entries[i] for i in order]
        self.vectors = np.ascontiguousarray(vectors[order], dtype=np.float32) if len(order) else \
            np.zeros((0, 0), np.float32)
        self.model = model
        self.info = dict(info or {})
        self.by_id = {entry.id: entry for entry in self.entries}
        self.blocks: dict[str, tuple[int, int]] = {}
        for position, entry in enumerate(self.entries):
            start, _ = self.blocks.get(entry.kind, (position, position))
            self.blocks[entry.kind] = (start, position + 1)
        self._embed = embed
        self._digest: str | None = None
        self._lock = threading.Lock()
        self._faiss = self._faiss_indexes(backend)

    # -- building, saving, loading
    @classmethod
    def build(cls, entries: Iterable[Entry], model: str = DEFAULT_EMBEDDER, batch_size: int = 256,
              progress: bool = True, backend: str = "auto", prebuilt: bool = True) -> KBMemory:
        """Embed every entry (with a progress bar); ``info`` records the build time. With ``prebuilt``, vectors
        shipped in ``data/desq_memory/`` for exactly these entries and this embedder (same content digest) are
        loaded instead of computed (``info["prebuilt"]`` says so); ``prebuilt=False`` always embeds."""
        from tqdm.auto import tqdm

        entries = list(entries)
        if not entries:
            raise ValueError("a KB memory needs at least one entry")
        start = time.perf_counter()
        shipped = prebuilt_vectors(model, entries) if prebuilt else None
        if shipped is not None:
            return cls(entries, shipped, model, backend, {"build_s": round(time.perf_counter() - start, 2),
                                                          "entries": len(entries), "prebuilt": True})
        embed = embedder(model, batch_size)
        order = sorted(range(len(entries)), key=lambda i: len(entries[i].text))  # little padding per batch
        vectors = None
        for first in tqdm(range(0, len(entries), batch_size), desc="KB memory", unit="batch", disable=not progress):
            rows = order[first:first + batch_size]
            chunk = embed([entries[i].text for i in rows])
            if vectors is None:
                vectors = np.zeros((len(entries), chunk.shape[1]), dtype=np.float32)
            vectors[rows] = chunk
        return cls(entries, vectors, model, backend,
                   {"build_s": round(time.perf_counter() - start, 2), "entries": len(entries)}, embed)

    def save(self, folder: str | Path) -> Path:
        """Write the entries and vectors, then ``memory.json`` with their integrity record (written last, so a
        memory whose save was cut short has no valid record)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "entries.jsonl", "w", encoding="utf-8") as handle:
            for entry in self.entries:
                handle.write(json.dumps(asdict(entry), ensure_ascii=False) + "\n")
        np.save(folder / "vectors.npy", self.vectors)
        document = {**self.info, "model": self.model, "digest": self.digest, "dimension": self.dimension,
                    "integrity": record_files(folder, MEMORY_FILES)}
        atomic_write(folder / "memory.json", json.dumps(document, indent=2) + "\n")
        return folder

    @classmethod
    def load(cls, folder: str | Path, backend: str = "auto") -> KBMemory:
        """The memory saved in ``folder``, checked against the integrity record of its save first: a damaged
        memory raises :class:`~sparqlab.core.integrity.DamagedOutput` naming the file."""
        folder = Path(folder)
        for name in ("memory.json", *MEMORY_FILES):
            if not (folder / name).exists():
                raise FileNotFoundError(f"{folder} is not a saved KB memory (missing {name})")
        try:
            info = json.loads((folder / "memory.json").read_text(encoding="utf-8"))
            problem = files_problem(folder, info.pop("integrity", None))
        except (UnicodeDecodeError, ValueError, AttributeError) as error:
            problem = f"memory.json cannot be read ({type(error).__name__}: {error})"
        try:
            if problem is None:
                lines = (folder / "entries.jsonl").read_text(encoding="utf-8").splitlines()
                entries = [Entry(**json.loads(line)) for line in lines if line]
                return cls(entries, np.load(folder / "vectors.npy"), info.get("model", DEFAULT_EMBEDDER), backend,
                           info)
        except (UnicodeDecodeError, ValueError, TypeError) as error:
            problem = f"it cannot be read ({type(error).__name__}: {error})"
        raise DamagedOutput("KB memory", folder, problem, f"rm -rf '{folder}'", REBUILT_ON_USE)

    @classmethod
    def load_or_build(cls, folder: str | Path, entries: Callable[[], Iterable[Entry]],
                      model: str = DEFAULT_EMBEDDER, progress: bool = True) -> KBMemory:
        """The memory saved in ``folder``, or a new one built from ``entries()`` and saved there (also in place
        of a damaged one, with a warning naming it)."""
        folder = Path(folder)
        if (folder / "memory.json").exists():
            try:
                return cls.load(folder)
            except DamagedOutput as damaged:
                warnings.warn(f"the KB memory {folder} was damaged ({damaged.problem}); it is rebuilt",
                              RebuiltOutputWarning, stacklevel=2)
        memory = cls.build(entries(), model, progress=progress)
        memory.save(folder)
        return memory

    # -- properties
    def __len__(self) -> int:
        return len(self.entries)

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.size else 0

    @property
    def kinds(self) -> set[str]:
        return set(self.blocks)

    @property
    def digest(self) -> str:
        """Content digest (embedder and entries), for run manifests; computed once."""
        if self._digest is None:
            self._digest = content_digest(self.model, self.entries)
        return self._digest

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes)

    def get(self, ident: str) -> Entry | None:
        return self.by_id.get(ident)

    # -- search
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit embeddings of query texts (one encoder call at a time: questions are answered in threads)."""
        with self._lock:
            if self._embed is None:
                self._embed = embedder(self.model)
            return self._embed(list(texts))

    def search(self, label: str, description: str = "", kind: str | None = None, k: int = 1) -> list[Hit]:
        """The ``k`` entries most similar to ``label: description`` (of ``kind`` when it is in the memory)."""
        return self.search_vectors(self.encode([entry_text(label, description)]), kind, k)[0]

    def search_vectors(self, queries: np.ndarray, kind: str | None = None, k: int = 1) -> list[list[Hit]]:
        """Exact top-``k`` for each query row; the whole memory when ``kind`` is ``None`` or not in it."""
        start, stop = self.blocks.get(kind, (0, len(self.entries))) if kind else (0, len(self.entries))
        if stop <= start:
            return [[] for _ in range(len(queries))]
        k = min(k, stop - start)
        index = self._faiss.get(kind if kind in self.blocks else None) if self._faiss else None
        if index is not None:
            scores, rows = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        else:
            similarity = (self.vectors[start:stop] @ queries.T).T  # row-major block times query: one pass
            rows = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
            scores = np.take_along_axis(similarity, rows, axis=1)
            order = np.argsort(-scores, axis=1, kind="stable")
            rows, scores = np.take_along_axis(rows, order, axis=1), np.take_along_axis(scores, order, axis=1)
        return [[Hit(self.entries[start + int(r)], float(s)) for r, s in zip(row, score, strict=True)]
                for row, score in zip(rows, scores, strict=True)]

    def _faiss_indexes(self, backend: str) -> dict | None:
        if backend not in ("auto", "numpy", "faiss"):
            raise ValueError(f"backend must be auto, numpy or faiss, got {backend!r}")
        if backend == "numpy" or (backend == "auto" and len(self.entries) <= FAISS_ABOVE) or not self.entries:
            return None
        try:
            import faiss
        except ImportError:
            if backend == "faiss":
                raise ImportError("backend='faiss' needs the faiss-cpu package; backend='numpy' needs nothing") \
                    from None
            return None
        indexes = {}
        for kind, (start, stop) in [(None, (0, len(self.entries))), *self.blocks.items()]:
            index = faiss.IndexFlatIP(self.dimension)
            index.add(self.vectors[start:stop])
            indexes[kind] = index
        return indexes


# ------------------------------------------------------------------------------------------------ sources


def kg_entries(kg) -> list[Entry]:
    """Every labelled element of a KG whose ids the DeSQ id scheme knows (movie KG: entities, relations, classes),
    with its label and description (the profile's predicates)."""
    from sparqlab.methods.desq.fragments import scheme_for

    scheme = scheme_for(kg.profile)
    profile = kg.profile
    rows = kg.bulk_values(
        f"SELECT ?x ?l ?d WHERE {{ ?x <{profile.label_predicate}> ?l . "
        f"OPTIONAL {{ ?x <{profile.description_predicate}> ?d }} FILTER(isIRI(?x)) }}")
    entries: dict[str, Entry] = {}
    for row in rows:
        split = scheme.split(row["x"])
        if split is not None and split[1] not in entries:
            entries[split[1]] = Entry(split[1], row["l"], row.get("d", ""), split[2])
    return sorted(entries.values(), key=lambda e: e.id)


def catalogue_entries(profile) -> list[Entry]:
    """The KG profile's element catalogue (:attr:`~sparqlab.kg.profiles.KGProfile.catalogue`: Wikidata's
    properties, Freebase's schema and dataset entities) as memory entries, in its order, ids from the DeSQ id
    scheme; a memory for a KG too large to read (section 3.3)."""
    from sparqlab.methods.desq.fragments import scheme_for

    if profile.catalogue is None:
        raise ValueError(f"the {profile.name} KG's profile has no element catalogue; use memory=kg (read the KG)")
    scheme = scheme_for(profile)
    entries = []
    for element in profile.catalogue.load():
        split = scheme.split(element.iri)
        if split is not None:
            entries.append(Entry(split[1], element.label, element.description, element.kind))
    return entries


def main_kind(entries: Sequence[Entry]) -> str:
    """The kind most entries have (``memory_limit`` cuts it): entities of a KG, properties of Wikidata's list."""
    counts = {kind: sum(1 for e in entries if e.kind == kind) for kind in KINDS}
    return max(KINDS, key=lambda kind: counts[kind])


def limit_entries(entries: Sequence[Entry], kind: str, limit: int) -> list[Entry]:
    """The first ``limit`` entries of ``kind`` in id order plus every entry of another kind (``limit`` 0: all)."""
    if not limit:
        return list(entries)
    chosen = sorted((e for e in entries if e.kind == kind), key=lambda e: e.id)[:limit]
    return [e for e in entries if e.kind != kind] + chosen


def describer(memory: KBMemory | Mapping[str, Entry] | None,
              kg=None) -> Callable[[str, str, str], tuple[str, str] | None]:
    """``(kind, prefix, id) -> (label, description)`` for grounding gold slots: the memory's entry (a memory or any
    id → :class:`Entry` mapping), else (for a
    KG in a local store, e.g. the movie KG with a partial memory) the KG's label and description of the IRI;
    ``None`` when neither knows the id (the slot's label and description are then unknown, not empty)."""
    from sparqlab.kg.errors import KGError
    from sparqlab.methods.desq.fragments import scheme_for

    local = kg is not None and kg.profile.store_builder is not None
    scheme = scheme_for(kg.profile) if kg is not None else None

    def describe(kind: str, prefix: str, ident: str) -> tuple[str, str] | None:
        entry = memory.get(ident) if memory is not None else None
        if entry is not None:
            return entry.label, entry.description
        if not local:
            return None
        try:
            iri = scheme.join(prefix or None, ident)
            rows = kg.bulk_values(
                f"SELECT ?l ?d WHERE {{ <{iri}> <{kg.profile.label_predicate}> ?l . "
                f"OPTIONAL {{ <{iri}> <{kg.profile.description_predicate}> ?d }} }} LIMIT 1")
        except (KGError, ValueError):
            return None
        return (rows[0]["l"], rows[0].get("d", "")) if rows else None

    return describe
