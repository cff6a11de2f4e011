"""Answer normalisation: every answer becomes one canonical string, so equal answers compare equal.

Rules (:func:`normalise_answer`):

* IRIs: angle brackets dropped; a prefixed name (``wd:Q42``) is expanded and the ``https://`` variant of a
  namespace is mapped to its ``http://`` form, using the namespaces declared by the KG profiles
  (:mod:`sparqlab.kg.profiles`), so ``wd:Q42``, ``http://www.wikidata.org/entity/Q42`` and
  ``https://www.wikidata.org/entity/Q42`` are one answer.
* numbers (xsd:integer, decimal, float, double and the derived integer types): the shortest plain decimal, so
  ``"1"^^xsd:integer``, ``"1.0"^^xsd:decimal`` and ``"1E0"^^xsd:double`` all become ``"1"``; COUNT results are
  numbers too.
* dates and dateTimes: ``YYYY-MM-DD`` when the time is midnight UTC (Wikidata stores dates that way), else the
  dateTime with ``Z`` for UTC.
* booleans: ``"true"`` / ``"false"`` (also for ``"1"^^xsd:boolean``, Python ``True``); an ASK result is the set
  {"true"} or {"false"}.
* other literals: the lexical form with surrounding whitespace removed; language tags are dropped.

Plain strings (gold answers stored as text) get the same treatment as the terms they stand for: a string that
looks like an IRI, number, date or boolean is normalised as one. The function is idempotent.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from sparqlab.kg.results import XSD, QueryResult, Term

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

NUMERIC_TYPES = {
    XSD + name
    for name in (
        "integer", "decimal", "float", "double", "int", "long", "short", "byte", "nonNegativeInteger",
        "positiveInteger", "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt",
        "unsignedShort", "unsignedByte",
    )
}
DATE_TYPES = {XSD + "date", XSD + "dateTime", XSD + "dateTimeStamp"}
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
COMPANION_SUFFIXES = ("Label", "Description", "AltLabel")
"""``?xLabel`` / ``?xDescription`` / ``?xAltLabel`` next to ``?x`` only describe ``?x`` and are not answers."""

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(
    r"(?P<date>-?\d{4,}-\d{2}-\d{2})"
    r"(T(?P<time>\d{2}:\d{2}:\d{2})(?P<frac>\.\d+)?)?"
    r"(?P<tz>Z|[+-]\d{2}:\d{2})?"
)
_NOT_IRIREF = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_PREFIXED = re.compile(r"(?P<prefix>[A-Za-z][\w.-]*)?:(?P<local>[^\s/:<>\"]+)")


def normalise_answer(value: Any) -> str:
    """The canonical string of one answer: a :class:`Term`, a SPARQL-JSON binding value, a string, number or bool."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return _number(str(value))
    if isinstance(value, Mapping):
        value = Term.from_json(value)
    if isinstance(value, Term):
        return normalise_term(value)
    if isinstance(value, str):
        return _string(value)
    raise TypeError(f"cannot normalise an answer of type {type(value).__name__}: {value!r}")


def normalise_term(term: Term) -> str:
    """The canonical string of an RDF term (rules in the module docstring)."""
    if term.type == "uri":
        return _iri(term.value.strip())
    if term.type == "bnode":
        return "_:" + term.value
    lexical = term.value.strip()
    if term.datatype in NUMERIC_TYPES:
        return _number(lexical)
    if term.datatype in DATE_TYPES:
        return _date(lexical)
    if term.datatype == XSD + "boolean":
        return "true" if lexical in ("true", "1") else "false"
    if term.lang or term.datatype in (None, "", XSD + "string", RDF_LANG_STRING):
        return _string(lexical)
    return unicodedata.normalize("NFC", lexical)


def answer_set(values: Iterable[Any]) -> set[str]:
    """The normalised set of an iterable of answers (``None`` items skipped)."""
    return {normalise_answer(v) for v in values if v is not None}


def answer_columns(variables: list[str]) -> list[str]:
    """The result columns that hold answers: all but the label/description companions of another column."""
    return [
        v for v in variables if not any(v.endswith(s) and v[: -len(s)] in variables for s in COMPANION_SUFFIXES)
    ]


def answers_from_result(result: QueryResult, kg: KnowledgeGraph | None = None) -> set[str]:
    """The normalised answer set of a query result.

    ASK → {"true"} or {"false"}. SELECT (and graph) results → every bound value of every answer column
    (:func:`answer_columns`), so a multi-column result contributes all its values and a COUNT its number. With a
    ``kg`` whose profile has ``answer_key == "label"`` (the movie KG, whose gold answers are names), IRIs are
    replaced by their labels, fetched in one batched query; an IRI without a label stays an IRI.
    """
    if result.kind == "ask":
        return {normalise_answer(bool(result.boolean))}
    columns = answer_columns(result.vars or sorted({k for row in result.rows for k in row}))
    terms = [row[c] for row in result.rows for c in columns if c in row]
    if kg is not None and kg.profile.answer_key == "label":
        labels = fetch_labels(kg, {t.value for t in terms if t.type == "uri"})
        terms = [Term("literal", labels[t.value]) if t.value in labels and t.type == "uri" else t for t in terms]
    return answer_set(terms)


def fetch_labels(kg: KnowledgeGraph, iris: Iterable[str], batch_size: int = 1000) -> dict[str, str]:
    """One label per IRI through the profile's label predicate, in as few queries as ``batch_size`` allows.

    Only labels in the profile's ``label_languages`` are read (``""`` = untagged); among several, the earlier
    language and then the smallest string wins, so the choice is deterministic. IRIs that cannot be written in
    SPARQL (spaces, ``<>"{}|^`\\``) get no label.
    """
    iris = sorted(i for i in set(iris) if not _NOT_IRIREF.search(i))
    languages = list(kg.profile.label_languages)
    tests = " || ".join('lang(?label) = ""' if not lang else f'langMatches(lang(?label), "{lang}")'
                        for lang in languages)
    best: dict[str, tuple[int, str]] = {}
    for start in range(0, len(iris), batch_size):
        chunk = iris[start : start + batch_size]
        values = " ".join(f"<{iri}>" for iri in chunk)
        sparql = (f"SELECT ?item ?label WHERE {{ VALUES ?item {{ {values} }} "
                  f"?item <{kg.profile.label_predicate}> ?label . FILTER({tests or 'true'}) }}")
        for row in kg.query(sparql, max_rows=max(kg.options.max_rows, 10 * len(chunk))).rows:
            iri, label = row["item"].value, row["label"]
            rank = (_language_rank(label.lang or "", languages), label.value)
            if iri not in best or rank < best[iri]:
                best[iri] = rank
    return {iri: rank[1] for iri, rank in best.items()}


def _language_rank(lang: str, languages: list[str]) -> int:
    """Position of the first of ``languages`` that ``lang`` matches (``en`` covers ``en-GB``)."""
    lang = lang.lower()
    for index, wanted in enumerate(languages):
        if lang == wanted or (wanted and lang.startswith(wanted.lower() + "-")):
            return index
    return len(languages)


def _string(text: str) -> str:
    text = unicodedata.normalize("NFC", text.strip())
    if text.startswith("<") and text.endswith(">"):
        return _iri(text[1:-1].strip())
    if text.lower() in ("true", "false"):
        return text.lower()
    if _NUMBER.fullmatch(text):
        return _number(text)
    if _DATE.fullmatch(text):
        return _date(text)
    if text.startswith(("http://", "https://")) or _expand(text) != text:
        return _iri(text)
    return text


def _number(lexical: str) -> str:
    try:
        number = Decimal(lexical.strip())
    except InvalidOperation:
        return lexical.strip()
    if not number.is_finite():
        return str(number)
    if number.is_zero():
        return "0"
    return format(number.normalize(), "f")


def _date(lexical: str) -> str:
    match = _DATE.fullmatch(lexical.strip())
    if not match:
        return lexical.strip()
    tz = match["tz"] or ""
    if tz in ("+00:00", "-00:00"):
        tz = "Z"
    time, frac = match["time"], (match["frac"] or "").rstrip("0").rstrip(".")
    if time is None or (time == "00:00:00" and not frac and tz in ("", "Z")):
        return match["date"]
    return f"{match['date']}T{time}{frac}{tz}"


def _iri(iri: str) -> str:
    """Expanded, with the scheme of a profile namespace written as the profile declares it."""
    iri = _expand(iri)
    for namespace in _namespaces().values():
        scheme, _, rest = namespace.partition("://")
        other = {"http": "https", "https": "http"}.get(scheme)
        if other and iri.startswith(f"{other}://{rest}"):
            return namespace + iri[len(other) + 3 + len(rest) :]
    return iri


def _expand(name: str) -> str:
    """``prefix:local`` → full IRI when ``prefix`` is declared by a KG profile; anything else unchanged."""
    match = _PREFIXED.fullmatch(name)
    if not match:
        return name
    namespace = _namespaces().get(match["prefix"] or "")
    return namespace + match["local"] if namespace else name


def _namespaces() -> dict[str, str]:
    """Prefix → namespace over all registered KG profiles (recomputed when a profile is added)."""
    from sparqlab.kg.profiles import PROFILES

    return _namespaces_of(tuple(PROFILES))


@functools.cache
def _namespaces_of(names: tuple[str, ...]) -> dict[str, str]:
    """A prefix that two profiles bind to different namespaces is left out: it has no single meaning."""
    from sparqlab.kg.profiles import PROFILES

    seen: dict[str, set[str]] = {}
    for name in names:
        for prefix, namespace in PROFILES[name].prefixes.items():
            seen.setdefault(prefix, set()).add(namespace)
    return {p: next(iter(ns)) for p, ns in seen.items() if len(ns) == 1}
