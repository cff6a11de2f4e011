"""Entity, property and class search by name: what an agent's ``search`` tool and entity linking call.

Local KGs get a label index built once from the KG itself (its profile's label, alias, description and type
predicates) into ``cache_dir()/search/``: SQLite with an FTS5 trigram table over every name of an item — its
labels in every language and its aliases (``skos:altLabel``), as Wikidata's search matches them — so a misspelt
name still shares most trigrams with the right one; candidates are ranked with rapidfuzz against the name they
matched and ties broken by how many triples mention the entity. A hit shows the label in the profile's language
and, when the query matched another name, that name (``matched``). The index's size and digest are recorded
beside it when it is written and checked when it is opened: a damaged index is rebuilt (with a warning naming
it), never read into failing searches. Other backends are registered by their KG's module (Wikidata's
``wbsearchentities`` API in :mod:`sparqlab.graphs.wikidata`, Freebase's and DBpedia's in theirs) and build on the
similarity, ranking and typing here.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

from sparqlab.core.hashing import stable_hash
from sparqlab.core.integrity import RebuiltOutputWarning, sidecar_problem, write_sidecar
from sparqlab.core.paths import cache_dir
from sparqlab.kg.base import KnowledgeGraph, register_searcher
from sparqlab.kg.profiles import IdKind, KGProfile
from sparqlab.kg.results import SearchHit, check_bound

_CANDIDATES = 400


def normalise(text: str) -> str:
    """Case-folded with collapsed whitespace: what exact matching compares."""
    return " ".join(text.casefold().split())


def similarity(query: str, label: str) -> float:
    """0-100: whole-string similarity (any word order), or 0.9 x the best partial match when the query is a
    fragment of a longer label ("Schoenaerts"); a short label inside a long query ("math") gets no such bonus."""
    from rapidfuzz import fuzz

    query, label = normalise(query), normalise(label)
    if query == label:
        return 100.0
    score = max(fuzz.ratio(query, label), fuzz.token_sort_ratio(query, label))
    if len(label) > len(query):
        score = max(score, 0.9 * fuzz.partial_ratio(query, label))
    return score


def rank(query: str, hits: list[tuple[SearchHit, int]], limit: int) -> list[SearchHit]:
    """Score by :func:`similarity` to the name each hit matched (its label unless ``matched`` says otherwise),
    ties broken by popularity; each id once (its best-matching name), best first."""
    best: dict[str, tuple[tuple, SearchHit]] = {}
    for hit, popularity in hits:
        score = similarity(query, hit.matched or hit.label)
        key = (score, popularity)
        if hit.id not in best or key > best[hit.id][0]:
            hit.score = round(score, 2)
            best[hit.id] = (key, hit)
    ordered = sorted(best.values(), key=lambda pair: pair[0], reverse=True)
    return [hit for _, hit in ordered[:limit]]


def matches_types(hit: SearchHit, types: list[str] | None) -> bool:
    return not types or any(t in hit.types or t in hit.type_ids for t in types)


INDEX_VERSION = 2
"""The label index's table layout (SQLite ``user_version``); an index of another layout is rebuilt."""


class LabelIndex:
    """A local label index of one KG (built on first use; rebuilt when this module, its layout or the KG
    changes)."""

    def __init__(self, kg: KnowledgeGraph, path: str | Path | None = None,
                 rows: Callable[[], list[tuple]] | None = None):
        """``rows``: where the index's rows (:func:`index_row`) come from instead of reading the whole KG (a KG
        too large to read, whose module knows its entity names: :mod:`sparqlab.graphs.freebase`)."""
        self.kg = kg
        self.path = Path(path) if path else default_index_path(kg)
        self._local = threading.local()
        problem = sidecar_problem(self.path) if self.path.exists() else None
        if problem:
            warnings.warn(f"the search index {self.path} was damaged ({problem}); it is rebuilt from the KG",
                          RebuiltOutputWarning, stacklevel=2)
        if problem or not self.path.exists() or _layout(self.path) != INDEX_VERSION:
            if rows is None:
                build_index(kg, self.path)
            else:
                write_index(self.path, rows())

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            self._local.conn = conn
        return conn

    def search(self, text: str, *, kind: IdKind = "entity", limit: int = 10,
               types: list[str] | None = None) -> list[SearchHit]:
        """Best matches for ``text`` among ``kind`` items, optionally only those with one of ``types``."""
        norm = normalise(text)
        if not norm:
            return []
        columns = "i.id, i.label, i.description, i.types, i.type_ids, i.kind, i.popularity, i.name"
        rows = self._connection().execute(
            f"SELECT {columns} FROM items i WHERE i.norm = ? AND i.kind = ?", (norm, kind)
        ).fetchall()
        trigrams = {norm[i:i + 3] for i in range(len(norm) - 2)}
        if not trigrams:  # too short for trigrams: labels starting with the text, most mentioned first
            rows += self._connection().execute(
                f"SELECT {columns} FROM items i WHERE i.norm LIKE ? ESCAPE '\\' AND i.kind = ? "
                "ORDER BY i.popularity DESC LIMIT ?",
                (norm.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%", kind, _CANDIDATES),
            ).fetchall()
        else:
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in sorted(trigrams))
            rows += self._connection().execute(
                f"SELECT {columns} FROM items_fts f JOIN items i ON i.rowid = f.rowid "
                "WHERE items_fts MATCH ? AND i.kind = ? ORDER BY f.rank LIMIT ?",
                (match, kind, _CANDIDATES),
            ).fetchall()
        hits = [(SearchHit(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]), r[5],
                           matched="" if r[7] == r[1] else r[7]), r[6]) for r in rows]
        return rank(text, [(h, p) for h, p in hits if matches_types(h, types)], limit)

    def __len__(self) -> int:
        return self._connection().execute("SELECT COUNT(DISTINCT id) FROM items").fetchone()[0]


def _layout(path: Path) -> int:
    """The ``user_version`` of an index file (0 for a file of an older layout or not readable)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def default_index_path(kg: KnowledgeGraph) -> Path:
    """``cache_dir()/search/<hash of the KG identity, profile and this module>.sqlite``: the profile by its digest,
    so a refinement that names other label or alias predicates gets an index of its own."""
    source = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return cache_dir() / "search" / f"{stable_hash([kg.identity, kg.profile.digest(), source], 20)}.sqlite"


def _lang_filter(var: str, languages: tuple[str, ...]) -> str:
    return f"FILTER(LANG({var}) IN ({', '.join(json.dumps(lang) for lang in languages)}))"


def build_index(kg: KnowledgeGraph, path: Path) -> None:
    """Read every named IRI with its names (labels in any language, aliases), display label, description and
    types from the KG and write the index atomically. The display label is one in the profile's languages, in
    their order, else one in another language: an item labelled only in German is still found and shown."""
    p = kg.profile
    languages = p.label_languages
    names = " ".join(f"<{predicate}>" for predicate in (p.label_predicate, *p.alias_predicates))
    items = kg.bulk_values(f"""
        SELECT ?e ?label (LANG(?label) AS ?lang) ?desc ?type ?typeLabel WHERE {{
          ?e <{p.label_predicate}> ?label . FILTER(isIRI(?e))
          OPTIONAL {{ ?e <{p.description_predicate}> ?desc {_lang_filter("?desc", languages)} }}
          OPTIONAL {{ ?e <{p.type_predicate}> ?type .
                     OPTIONAL {{ ?type <{p.label_predicate}> ?typeLabel {_lang_filter("?typeLabel", languages)} }} }}
        }}""")
    for row in items:
        check_bound(kg.identity, row, ("e", "label"))
    other_names = kg.bulk_values(f"""
        SELECT DISTINCT ?e ?name WHERE {{ VALUES ?by {{ {names} }} ?e ?by ?name . FILTER(isIRI(?e) && isLiteral(?name)) }}""")
    predicates = {row["p"] for row in kg.bulk_values("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")}
    # Properties described by their own item (Wikidata's wd:P19, typed rdf:type wikibase:Property)
    values = " ".join(f"<{t}>" for t in p.property_types)
    predicates |= {row["e"] for row in kg.bulk_values(f"SELECT DISTINCT ?e WHERE {{ VALUES ?t {{ {values} }} ?e a ?t }}")}
    popularity = {row["e"]: int(row["n"]) for row in kg.bulk_values(
        "SELECT ?e (COUNT(*) AS ?n) WHERE { { ?e ?p ?o } UNION { ?s ?p ?e } } GROUP BY ?e")}

    preference = {language: rank for rank, language in enumerate(languages)}
    entries: dict[str, dict] = {}
    for row in sorted(items, key=lambda r: (r["e"], preference.get(r.get("lang", ""), len(languages)), r["label"],
                                            r.get("desc", ""))):
        entry = entries.setdefault(row["e"], {"label": row["label"], "desc": row.get("desc", ""), "types": {},
                                              "names": {row["label"]}})
        if "type" in row:
            entry["types"][row["type"]] = row.get("typeLabel", row["type"])
    for row in other_names:
        if row["e"] in entries:
            entries[row["e"]]["names"].add(row["name"])
    write_index(path, [index_row(iri, entry["label"], entry["desc"], _kind(iri, entry["types"], predicates, p),
                                 entry["types"], popularity.get(iri, 0), name)
                       for iri, entry in entries.items() for name in sorted(entry["names"])])


def index_row(iri: str, label: str, description: str, kind: IdKind, types: dict[str, str] | None = None,
              popularity: int = 0, name: str | None = None) -> tuple:
    """One row of a label index: one ``name`` a search matches (default: the display ``label``; an item has a
    row per name); ``types`` maps type IRIs to their labels."""
    types = types or {}
    name = label if name is None else name
    return (iri, label, name, normalise(name), description, kind, json.dumps(sorted(types.values())),
            json.dumps(sorted(types)), popularity)


def write_index(path: Path, rows: list[tuple]) -> None:
    """Write a label index of ``rows`` (:func:`index_row`) to ``path`` atomically, with its integrity record
    beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=".index-", suffix=".sqlite", dir=path.parent)
    os.close(handle)
    try:
        _write_index(scratch, rows)
        os.chmod(scratch, 0o644)  # mkstemp's 0600 would hide the index from other users of a shared cache
        os.replace(scratch, path)
        write_sidecar(path)
    except BaseException:  # an interrupted build leaves no half-written file in the cache
        Path(scratch).unlink(missing_ok=True)
        raise


def _write_index(path: str, rows: list[tuple]) -> None:
    """The items table, its lookup index and its FTS5 trigram index, in a new SQLite file."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(f"""
            CREATE TABLE items (rowid INTEGER PRIMARY KEY, id TEXT, label TEXT, name TEXT, norm TEXT,
                                description TEXT, kind TEXT, types TEXT, type_ids TEXT, popularity INTEGER);
            CREATE INDEX items_norm ON items (norm, kind);
            CREATE VIRTUAL TABLE items_fts USING fts5 (name, content='items', content_rowid='rowid',
                                                       tokenize='trigram');
            PRAGMA user_version = {INDEX_VERSION};
        """)
        conn.executemany(
            "INSERT INTO items (id, label, name, norm, description, kind, types, type_ids, popularity) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        conn.execute("INSERT INTO items_fts (rowid, name) SELECT rowid, name FROM items")
        conn.commit()
    finally:
        conn.close()


def _kind(iri: str, types: dict[str, str], predicates: set[str], profile: KGProfile) -> IdKind:
    """``property`` for IRIs used as predicates or typed as properties, ``class`` for classes, else ``entity``."""
    if iri in predicates or any(t in profile.property_types for t in types):
        return "property"
    if any(t in profile.class_types for t in types):
        return "class"
    return "entity"


def add_types(kg: KnowledgeGraph, hits: list[SearchHit], language: str) -> None:
    """Fill the types (IRIs and labels in ``language``) of ``hits`` with one query to the KG."""
    if not hits:
        return
    p = kg.profile
    values = " ".join(f"<{iri}>" for iri in dict.fromkeys(h.id for h in hits))
    result = kg.query(
        f"SELECT ?e ?type ?typeLabel WHERE {{ VALUES ?e {{ {values} }} ?e <{p.type_predicate}> ?type . "
        f"OPTIONAL {{ ?type <{p.label_predicate}> ?typeLabel FILTER(LANG(?typeLabel) = {json.dumps(language)}) }} }}"
    )
    for row in result.rows:
        for hit in hits:
            if hit.id == row["e"].value and row["type"].value not in hit.type_ids:
                hit.type_ids.append(row["type"].value)
                hit.types.append(row["typeLabel"].value if "typeLabel" in row else row["type"].value)


register_searcher("local", LabelIndex)
