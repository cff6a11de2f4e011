"""Answer normalisation: every answer becomes one canonical string, so equal answers compare equal.

Rules (:func:`normalise_answer`; docs/metrics.md states each with examples):

* IRIs: angle brackets dropped; a prefixed name (``wd:Q42``) is expanded and the ``https://`` variant of a
  namespace is mapped to its ``http://`` form, using the namespaces declared by the KG profiles
  (:mod:`sparqlab.kg.profiles`), so ``wd:Q42``, ``http://www.wikidata.org/entity/Q42`` and
  ``https://www.wikidata.org/entity/Q42`` are one answer.
* blank nodes: ``_:`` + the label the store gives them; labels mean something only within one store, so a blank
  node equals the same blank node of the same KG and never an IRI or literal.
* numbers (xsd:integer, decimal, float, double and the derived integer types) are compared by value: the shortest
  plain decimal, so ``"1"^^xsd:integer``, ``"1.0"^^xsd:decimal`` and ``"1E0"^^xsd:double`` all become ``"1"``;
  float/double special values become ``INF``, ``-INF``, ``NaN`` (one answer ``NaN`` equals another: answers are
  compared as terms, not by IEEE arithmetic). Only numeric datatypes are read as numbers: the plain literal
  ``"007"`` stays ``007``.
* dates and dateTimes (XSD value semantics): a dateTime is an instant, a date the instant its day starts; a zone
  other than UTC is converted to UTC and a missing zone is read as UTC (Wikidata's convention). The result is
  written ``YYYY-MM-DD`` when it falls on midnight UTC, else ``YYYY-MM-DDThh:mm:ss[.fff]Z``; ``24:00:00`` is the
  next day's midnight.
* booleans: ``"true"`` / ``"false"`` (also for ``"1"^^xsd:boolean``, Python ``True``); an ASK result is the set
  {"true"} or {"false"}.
* ill-typed literals (a lexical form outside its numeric, date or boolean datatype's lexical space, such as
  ``"abc"^^xsd:integer``, ``"2021-02-30"^^xsd:date`` or ``"300"^^xsd:byte``): written ``"lexical"^^<datatype>``,
  so they equal only the same ill-typed literal, never a value or a plain string.
* other literals: the lexical form in Unicode NFC with surrounding whitespace removed; language tags are dropped
  (``"Paris"@en`` = ``"Paris"@fr`` = ``"Paris"``), case is kept; ``xsd:string`` is a plain literal.

Plain Python strings (gold answers stored as text, and the canonical strings this module returns) are plain
literals, except that a string written as an IRI (``<...>``, ``http(s)://...``, a profile's prefixed name) is an
IRI. So every canonical string maps to itself and the function is idempotent. Python numbers and booleans are
typed values.
"""

from __future__ import annotations

import datetime
import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sparqlab.kg.results import XSD, QueryResult, Term, check_bound

if TYPE_CHECKING:
    from sparqlab.kg.base import KnowledgeGraph

INTEGER_TYPES = {
    XSD + name
    for name in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "nonPositiveInteger",
        "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
}
FLOAT_TYPES = {XSD + "float", XSD + "double"}
NUMERIC_TYPES = INTEGER_TYPES | FLOAT_TYPES | {XSD + "decimal"}
INTEGER_RANGES = {
    XSD + "long": (-(2**63), 2**63 - 1), XSD + "int": (-(2**31), 2**31 - 1), XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-128, 127), XSD + "nonNegativeInteger": (0, None), XSD + "positiveInteger": (1, None),
    XSD + "nonPositiveInteger": (None, 0), XSD + "negativeInteger": (None, -1),
    XSD + "unsignedLong": (0, 2**64 - 1), XSD + "unsignedInt": (0, 2**32 - 1), XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 255),
}
"""Value bounds of the derived integer types (XSD 1.1 part 2, section 3.4); ``None`` = unbounded."""
DATE_TYPES = {XSD + "date", XSD + "dateTime", XSD + "dateTimeStamp"}
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
COMPANION_SUFFIXES = ("Label", "Description", "AltLabel")
"""``?xLabel`` / ``?xDescription`` / ``?xAltLabel`` next to ``?x`` only describe ``?x`` and are not answers."""

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")
_FLOAT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FLOAT_SPECIAL = {"INF": "INF", "+INF": "INF", "-INF": "-INF", "NaN": "NaN"}
_DATE = re.compile(
    r"(?P<year>-?(?:[1-9]\d{4,}|\d{4}))-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(T(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})(?P<frac>\.\d+)?)?"
    r"(?P<tz>Z|[+-]\d{2}:\d{2})?"
)
_GREGORIAN_CYCLE = 400
"""Years after which the Gregorian calendar repeats (146,097 days, whole weeks): used to do date arithmetic on
years outside Python's 1..9999."""
_NOT_IRIREF = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_PREFIXED = re.compile(r"(?P<prefix>[A-Za-z][\w.-]*)?:(?P<local>[^\s/:<>\"]+)")


class IllTyped(ValueError):
    """A lexical form outside its datatype's lexical space."""


def normalise_answer(value: Any) -> str:
    """The canonical string of one answer: a :class:`Term`, a SPARQL-JSON binding value, a string, number or bool."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return _decimal(Decimal(repr(value)) if isinstance(value, float) else Decimal(value))
    if isinstance(value, Mapping):
        value = Term.from_json(dict(value))
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
        return "_:" + term.value.strip().removeprefix("_:")
    lexical = term.value.strip()
    try:
        if term.datatype in NUMERIC_TYPES:
            return _number(lexical, term.datatype)
        if term.datatype in DATE_TYPES:
            return _date(lexical, term.datatype)
        if term.datatype == XSD + "boolean":
            return _boolean(lexical)
    except IllTyped:
        return f'"{lexical}"^^<{term.datatype}>'
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
            check_bound(kg.identity, row, ("item", "label"))
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
    """A plain literal, or an IRI when written as one."""
    text = unicodedata.normalize("NFC", text.strip())
    if text.startswith("<") and text.endswith(">"):
        return _iri(text[1:-1].strip())
    if text.startswith(("http://", "https://")) or _expand(text) != text:
        return _iri(text)
    return text


def _boolean(lexical: str) -> str:
    if lexical in ("true", "1"):
        return "true"
    if lexical in ("false", "0"):
        return "false"
    raise IllTyped(lexical)


def _number(lexical: str, datatype: str) -> str:
    """The shortest plain decimal of a numeric literal's value (INF, -INF, NaN for float/double)."""
    if datatype in FLOAT_TYPES and lexical in _FLOAT_SPECIAL:
        return _FLOAT_SPECIAL[lexical]
    pattern = _INTEGER if datatype in INTEGER_TYPES else _DECIMAL if datatype == XSD + "decimal" else _FLOAT
    if not pattern.fullmatch(lexical):
        raise IllTyped(lexical)
    number = Decimal(lexical)
    low, high = INTEGER_RANGES.get(datatype, (None, None))
    if (low is not None and number < low) or (high is not None and number > high):
        raise IllTyped(lexical)
    return _decimal(number)


def _decimal(number: Decimal) -> str:
    if number.is_nan():
        return "NaN"
    if number.is_infinite():
        return "-INF" if number < 0 else "INF"
    if number.is_zero():
        return "0"
    return format(number.normalize(), "f")


def _date(lexical: str, datatype: str) -> str:
    """A date or dateTime as its UTC instant: ``YYYY-MM-DD`` at midnight, else ``YYYY-MM-DDThh:mm:ss[.f]Z``."""
    match = _DATE.fullmatch(lexical)
    has_time = match is not None and match["hour"] is not None
    if not match or has_time != (datatype != XSD + "date") or (datatype.endswith("Stamp") and not match["tz"]):
        raise IllTyped(lexical)
    year, month, day = int(match["year"]), int(match["month"]), int(match["day"])
    hour, minute, second = (int(match[k]) if has_time else 0 for k in ("hour", "minute", "second"))
    frac = (match["frac"] or "").rstrip("0").rstrip(".")
    shift = 0
    if match["tz"] and match["tz"] != "Z":
        tz_hours, tz_minutes = int(match["tz"][1:3]), int(match["tz"][4:6])
        if tz_minutes > 59 or tz_hours > 14 or (tz_hours == 14 and tz_minutes):
            raise IllTyped(lexical)
        shift = (1 if match["tz"][0] == "+" else -1) * (tz_hours * 60 + tz_minutes)
    end_of_day = (hour, minute, second) == (24, 0, 0) and not frac
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)) or minute > 59 or second > 59:
        raise IllTyped(lexical)
    if hour > 23 and not end_of_day:
        raise IllTyped(lexical)
    cycles = (year - 401) // _GREGORIAN_CYCLE  # move the year into 401..800, where datetime can count days
    moment = datetime.datetime(year - cycles * _GREGORIAN_CYCLE, month, day, 0 if end_of_day else hour, minute,
                               second)
    moment += datetime.timedelta(days=1 if end_of_day else 0, minutes=-shift)
    year = moment.year + cycles * _GREGORIAN_CYCLE
    date = f"{'-' if year < 0 else ''}{abs(year):04d}-{moment.month:02d}-{moment.day:02d}"
    if moment.time() == datetime.time(0) and not frac:
        return date
    return f"{date}T{moment:%H:%M:%S}{frac}Z"


def _days_in_month(year: int, month: int) -> int:
    """Proleptic Gregorian, astronomical year numbering (XSD 1.1: year 0 is 1 BCE, a leap year)."""
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _iri(iri: str) -> str:
    """Expanded, with the scheme of a profile namespace written as the profile declares it."""
    iri = _expand(iri)
    variants = _scheme_variants()
    if iri.startswith(tuple(variants)):  # most IRIs match none: one C-level test instead of the loop
        for variant, namespace in variants.items():
            if iri.startswith(variant):
                return namespace + iri[len(variant) :]
    return iri


def _scheme_variants() -> dict[str, str]:
    """Each profile namespace written with the other of http/https → the namespace as declared, in profile order
    (recomputed when a profile is added; scoring asks for it once per answer)."""
    from sparqlab.kg.profiles import PROFILES

    return _scheme_variants_of(tuple(PROFILES.loaded()))


@functools.cache
def _scheme_variants_of(names: tuple[str, ...]) -> dict[str, str]:
    variants: dict[str, str] = {}
    for namespace in _namespaces_of(names).values():
        scheme, _, rest = namespace.partition("://")
        other = {"http": "https", "https": "http"}.get(scheme)
        if other:
            variants.setdefault(f"{other}://{rest}", namespace)
    return variants


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

    return _namespaces_of(tuple(PROFILES.loaded()))


@functools.cache
def _namespaces_of(names: tuple[str, ...]) -> dict[str, str]:
    """A prefix that two profiles bind to different namespaces is left out: it has no single meaning."""
    from sparqlab.kg.profiles import PROFILES

    seen: dict[str, set[str]] = {}
    for name in names:
        for prefix, namespace in PROFILES.loaded()[name].prefixes.items():
            seen.setdefault(prefix, set()).add(namespace)
    return {p: next(iter(ns)) for p, ns in seen.items() if len(ns) == 1}
