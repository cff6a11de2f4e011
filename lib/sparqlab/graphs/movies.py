"""The bundled movie KG: MetaQA's WikiMovies KB as RDF, in the shape the GGC paper's label-based queries expect.

IRIs (namespace from the ``movies`` profile): entities ``entity/{Class}/{percent-encoded name}``, classes
``class/{Class}``, relations ``relation/{metaqa relation}``. Every entity and relation has an ``rdfs:label`` (the
MetaQA name, a plain literal), so ``?rel rdfs:label "starred_actors" . ?e rdfs:label "Wind"`` works. Classes come
from relation positions: any subject is a Film, the objects of each relation belong to that relation's range
class; a name used in two roles (a film and a tag called "Wind") becomes two entities with the same label, the
ambiguity an agent has to resolve. Descriptions (``rdfs:comment``) are built from the KB's own facts.

The store is bulk-loaded once into ``cache_dir()/kg/movies-{build hash}/store``; the hash covers this builder's
declared version (:data:`BUILD_RECIPE`), the store format's, the input file and the pyoxigraph version, so a
changed builder rebuilds instead of reusing; the store is checked against the integrity record of its build
before each use (:func:`sparqlab.engines.oxigraph_store.ensure_built`). Older builds are left in place (another
process may still be reading one); ``make clean`` removes them.
"""

from __future__ import annotations

import gzip
import hashlib
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote

from sparqlab.core.paths import cache_dir, data_dir
from sparqlab.engines.oxigraph_store import builder_hash, ensure_built, install_store
from sparqlab.graphs.profiles import MOVIES_NS
from sparqlab.kg.profiles import register_store_builder
from sparqlab.kg.vocab import RDF, RDFS
from sparqlab.sparql.tree import quote_literal

BUILD_RECIPE = "676004958768c3112d1fe01022c1df857c5285e70e82a143ed7efa4c5e9451fd"
"""The version of what :func:`build` writes (part of the store's hash): give it a new value whenever the RDF it
makes from the KB changes. The first value is the SHA-256 this module's source had when the hash covered the
source instead, so the store built before, and the run ids naming it, stay valid."""

FILM = "Film"
RELATION_RANGES = {
    "starred_actors": "Person",
    "directed_by": "Person",
    "written_by": "Person",
    "has_genre": "Genre",
    "has_tags": "Tag",
    "in_language": "Language",
    "release_year": "Year",
    "has_imdb_rating": "Rating",
    "has_imdb_votes": "Votes",
}
"""MetaQA's nine relations, each from a Film to the class of its objects."""

RELATION_COMMENTS = {
    "starred_actors": "an actor credited in the film",
    "directed_by": "a director of the film",
    "written_by": "a writer of the film",
    "has_genre": "a genre of the film",
    "has_tags": "a user tag of the film (topics, people, moods)",
    "in_language": "a language of the film",
    "release_year": "a year the film was released",
    "has_imdb_rating": "the film's IMDb rating level (e.g. good, bad)",
    "has_imdb_votes": "how many IMDb votes the film has, as a level (e.g. famous)",
}

CLASS_COMMENTS = {
    FILM: "a film (movie)",
    "Person": "a person: actor, director or writer",
    "Genre": "a film genre",
    "Tag": "a user tag attached to films",
    "Language": "a language films are made in",
    "Year": "a release year",
    "Rating": "an IMDb rating level",
    "Votes": "an IMDb popularity (votes) level",
}

ROLE_PHRASES = {"starred_actors": "actor in", "directed_by": "director of", "written_by": "writer of"}
VALUE_PHRASES = {
    "has_genre": "genre of", "has_tags": "tag on", "in_language": "language of", "release_year": "release year of",
    "has_imdb_rating": "IMDb rating level of", "has_imdb_votes": "IMDb votes level of",
}

KB_FILE = "kb_derived_kb.txt.gz"


def kb_path() -> Path:
    """The MetaQA KB in ``subject|relation|object`` lines (see ``data/metaqa/PROVENANCE.md``)."""
    return data_dir() / "metaqa" / KB_FILE


def entity_iri(cls: str, name: str) -> str:
    """The IRI of the entity of class ``cls`` named ``name`` (so a name in two roles gives two IRIs)."""
    return f"{MOVIES_NS}entity/{cls}/{quote(name, safe='')}"


def class_iri(cls: str) -> str:
    return f"{MOVIES_NS}class/{cls}"


def relation_iri(relation: str) -> str:
    return f"{MOVIES_NS}relation/{relation}"


def read_kb(path: Path | None = None) -> list[tuple[str, str, str]]:
    """The KB triples, in file order; an unknown relation is an error (the schema would not cover it)."""
    triples = []
    with gzip.open(path or kb_path(), "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\n")
            if not line:
                continue
            fields = line.split("|")
            if len(fields) != 3:
                raise ValueError(f"{path or kb_path()}:{number}: expected subject|relation|object, got {line!r}")
            subject, relation, obj = fields
            if relation not in RELATION_RANGES:
                raise ValueError(f"{path or kb_path()}:{number}: unknown relation {relation!r}")
            triples.append((subject, relation, obj))
    return triples


def _examples(names: list[str], limit: int) -> str:
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def _plural(count: int) -> str:
    return f"{count} film" if count == 1 else f"{count} films"


def _film_description(facts: dict[str, list[str]]) -> str:
    years = sorted(facts.get("release_year", []))
    text = f"film ({', '.join(years)})" if years else "film"
    if facts.get("directed_by"):
        text += f" directed by {_examples(facts['directed_by'], 2)}"
    if facts.get("starred_actors"):
        text += f", starring {_examples(facts['starred_actors'], 3)}"
    return text


def _object_description(films_by_relation: dict[str, list[str]]) -> str:
    parts = []
    for relation, films in films_by_relation.items():
        phrase = ROLE_PHRASES.get(relation) or VALUE_PHRASES[relation]
        parts.append(f"{phrase} {_plural(len(films))} ({_examples(films, 2)})")
    return "; ".join(parts)


def to_ntriples(triples: list[tuple[str, str, str]]) -> tuple[str, dict]:
    """The KG as N-Triples text, and counts (triples, entities per class, facts per relation)."""
    type_iri, label_iri, comment_iri = f"<{RDF}type>", f"<{RDFS}label>", f"<{RDFS}comment>"
    film_facts: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    object_films: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    lines = []
    for subject, relation, obj in triples:
        cls = RELATION_RANGES[relation]
        film_facts[subject][relation].append(obj)
        object_films[(cls, obj)][relation].append(subject)
        lines.append(f"<{entity_iri(FILM, subject)}> <{relation_iri(relation)}> <{entity_iri(cls, obj)}> .")

    entities = [(FILM, name, _film_description(facts)) for name, facts in film_facts.items()]
    entities += [(cls, name, _object_description(films)) for (cls, name), films in object_films.items()]
    for cls, name, description in entities:
        iri = f"<{entity_iri(cls, name)}>"
        lines.append(f"{iri} {type_iri} <{class_iri(cls)}> .")
        lines.append(f"{iri} {label_iri} {quote_literal(name)} .")
        lines.append(f"{iri} {comment_iri} {quote_literal(description)} .")

    for cls, comment in CLASS_COMMENTS.items():
        iri = f"<{class_iri(cls)}>"
        lines += [f"{iri} {type_iri} <{RDFS}Class> .", f"{iri} {label_iri} {quote_literal(cls)} .",
                  f"{iri} {comment_iri} {quote_literal(comment)} ."]
    for relation, range_cls in RELATION_RANGES.items():
        iri = f"<{relation_iri(relation)}>"
        lines += [f"{iri} {type_iri} <{RDF}Property> .", f"{iri} {label_iri} {quote_literal(relation)} .",
                  f"{iri} {comment_iri} {quote_literal(RELATION_COMMENTS[relation])} .",
                  f"{iri} <{RDFS}domain> <{class_iri(FILM)}> .", f"{iri} <{RDFS}range> <{class_iri(range_cls)}> ."]

    stats = {
        "kb_facts": len(triples),
        "triples": len(lines),
        "entities": len(entities),
        "entities_per_class": dict(sorted(Counter(cls for cls, _, _ in entities).items())),
        "facts_per_relation": dict(Counter(relation for _, relation, _ in triples).most_common()),
        "labels_with_several_classes": sum(
            1 for n in Counter(name for _, name, _ in entities).values() if n > 1
        ),
    }
    return "\n".join(lines) + "\n", stats


def build_hash(path: Path | None = None) -> str:
    """Changes whenever the store would: this builder's recipe, the input KB, the pyoxigraph version."""
    import pyoxigraph

    data = hashlib.sha256((path or kb_path()).read_bytes()).hexdigest()
    return builder_hash(BUILD_RECIPE, data, pyoxigraph.__version__, MOVIES_NS)


def build_dir() -> Path:
    """Where this builder's store lives (``store/``) with its ``build.json`` (counts and build time)."""
    return cache_dir() / "kg" / f"movies-{build_hash()}"


def ensure_store(force: bool = False) -> Path:
    """The store directory, built first if missing (or if ``force``) and checked against its integrity record.
    Safe when several processes race."""
    return ensure_built(build_dir(), build, force, rebuild="sparqlab kg build movies --force")


def build(target: Path, force: bool = False) -> dict:
    """Bulk-load the KG into ``target/store`` via a temporary folder renamed into place; returns the stats."""
    import pyoxigraph

    ntriples, stats = to_ntriples(read_kb())

    def fill(store) -> dict:
        store.bulk_load(ntriples.encode("utf-8"), format=pyoxigraph.RdfFormat.N_TRIPLES)
        return stats

    return install_store(target, fill, force)


register_store_builder("movies", ensure_store)
