"""The one SPARQL parser for structure: a query as a tree of graph-pattern elements, and its printer.

Structural exact match (:mod:`sparqlab.eval.structural`), error categories (:mod:`sparqlab.eval.errors`),
complexity features (:mod:`sparqlab.eval.complexity`), the worker's ``SERVICE`` check (:func:`uses_service`),
DeSQ's fragment extraction and SAGA's triple patterns (:mod:`sparqlab.methods.agents.schema.patterns`, through the
tolerant mode that reads an agent's broken draft as far as it can) all read this tree; nothing else in the library
parses SPARQL for its structure (GenOp alone translates queries to SPARQL algebra with rdflib, because the paper
defines its operators over that algebra).
Neither pyoxigraph nor rdflib's algebra gives a query back in source form, which the printers need. The tree keeps
what the query says, not its algebra: a group is a list of elements (triple patterns, FILTER, BIND, VALUES,
OPTIONAL, MINUS, UNION, GRAPH, SERVICE, sub-SELECT, nested group); expressions are token lists in which every
variable, IRI and literal is a :class:`Term`, so a printer can rename variables or replace IRIs anywhere in the
query (a FILTER's ``EXISTS { ... }`` patterns are parsed too, beside its tokens). Prefixed names are expanded with
the query's own PREFIX declarations and the predefined prefixes the caller passes (the KG layer's table:
:func:`sparqlab.kg.profiles.known_prefixes`); ``a`` becomes ``rdf:type``; ``[ ... ]`` and ``_:x`` blank nodes are
terms of kind ``bnode`` (they behave as variables); ``;`` and ``,`` abbreviations are expanded into one triple
pattern per subject-predicate-object.

Parsing is bounded: brackets nested deeper than the screen's :data:`~sparqlab.sparql.screen.MAX_NESTING` are
refused before the (recursive) parser runs, and the lexer is one linear regular-expression pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sparqlab.sparql.screen import MAX_NESTING, expand_escapes, scan

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
"""The two namespaces the SPARQL language itself fixes: ``a`` is ``rdf:type``, casts are XSD's."""


def quote_literal(text: str) -> str:
    """``text`` as a double-quoted string literal, escaped alike for SPARQL and N-Triples."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


class SparqlParseError(ValueError):
    """A query the parser cannot read; the message says where."""


@dataclass(frozen=True)
class Term:
    """A variable (``var``), IRI (``iri``), unexpanded prefixed name (``pname``: unknown prefix), literal
    (``literal``, with ``lang`` or ``datatype``), number (``number``, its lexical form), boolean (``bool``) or
    blank node (``bnode``)."""

    kind: str
    value: str
    lang: str | None = None
    datatype: str | None = None

    @property
    def is_variable(self) -> bool:
        """Variables and blank nodes: both may be renamed consistently without changing the query."""
        return self.kind in ("var", "bnode")


Token = Term | str
"""An expression token: a term, or a keyword / operator / punctuation string (keywords upper-cased)."""


@dataclass
class Triple:
    subject: Term
    predicate: list[Token]  # one term, or a property path's tokens
    object: Term


@dataclass
class Filter:
    expression: list[Token]  # the constraint, e.g. ["(", ?x, "<", 3, ")"] or ["NOT", "EXISTS", "{", ...]
    exists: list[Group] = field(default_factory=list, compare=False)  # its EXISTS / NOT EXISTS patterns, parsed


@dataclass
class Bind:
    expression: list[Token]
    variable: Term


@dataclass
class InlineValues:
    tokens: list[Token]  # everything after VALUES


@dataclass
class Group:
    elements: list[Element] = field(default_factory=list)


@dataclass
class Optional:
    group: Group


@dataclass
class Minus:
    group: Group


@dataclass
class UnionOf:
    groups: list[Group]


@dataclass
class GraphOf:
    name: Term
    group: Group


@dataclass
class Service:
    endpoint: Term
    group: Group
    silent: bool = False


@dataclass
class SubSelect:
    query: Query


@dataclass
class Include:
    """Blazegraph's ``INCLUDE %name`` of a named subquery (Wikidata Query Service queries use it)."""

    name: str


Element = (Triple | Filter | Bind | InlineValues | Group | Optional | Minus | UnionOf | GraphOf | Service | SubSelect
           | Include)


@dataclass
class Projection:
    """One SELECT item: a variable, or ``(expression AS variable)``."""

    variable: Term
    expression: list[Token] | None = None


@dataclass
class Query:
    """A parsed query. ``form`` is SELECT / ASK / CONSTRUCT / DESCRIBE; ``projection`` is ``None`` for ``*``."""

    form: str
    where: Group
    modifier: str = ""  # DISTINCT / REDUCED
    projection: list[Projection] | None = None
    template: list[Triple] = field(default_factory=list)  # CONSTRUCT
    describe: list[Term] = field(default_factory=list)  # DESCRIBE
    dataset: list[list[Token]] = field(default_factory=list)  # FROM [NAMED] clauses
    named: list[tuple[str, Query]] = field(default_factory=list)  # Blazegraph WITH { ... } AS %name
    group_by: list[Token] | None = None
    having: list[Token] | None = None
    order_by: list[Token] | None = None
    limit: int | None = None
    offset: int | None = None
    values: list[Token] | None = None  # trailing VALUES


# ---------------------------------------------------------------------------------------------- tokenizer

_STRING = r"""(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_PN_LOCAL = r"(?:[\w\-%:]|\\.|\.(?=[\w\-%:]))*"
_LEXER = re.compile(
    rf"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<string>{_STRING})
  | (?P<iri><[^<>"{{}}|^`\\\s]*>)
  | (?P<var>[?$][A-Za-z0-9_\u00B7-\uFFFF]+)
  | (?P<bnode>_:[A-Za-z0-9_](?:[\w\-]|\.(?=[\w\-]))*)
  | (?P<include>%[A-Za-z_]\w*)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<number>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+))
  | (?P<pname>(?:[A-Za-z][\w\-.]*)?:{_PN_LOCAL})
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>\^\^|&&|\|\||!=|<=|>=|[{{}}()\[\];,.=<>!+\-*/|^?])
    """,
    re.VERBOSE,
)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


@dataclass(frozen=True)
class _Lexeme:
    kind: str
    text: str
    position: int


def _unescape(body: str) -> str:
    def replace(match: re.Match) -> str:
        code = match.group(1)
        if code[0] in "uU":
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, "\\" + code)

    return re.sub(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", replace, body)


def _lex(text: str, tolerant: bool = False) -> list[_Lexeme]:
    """The query's lexemes; ``tolerant`` passes over a character no lexeme starts with instead of refusing it."""
    lexemes, position = [], 0
    while position < len(text):
        match = _LEXER.match(text, position)
        if match is None and tolerant:
            position += 1
            continue
        if match is None:
            raise SparqlParseError(f"unexpected character {text[position]!r} at offset {position}: "
                                   f"...{text[max(0, position - 30):position + 30]!r}")
        kind = str(match.lastgroup)  # every alternative of the lexer is a named group
        if kind != "ws":
            lexemes.append(_Lexeme(kind, match.group(), position))
        position = match.end()
    return lexemes


# ---------------------------------------------------------------------------------------------- parser

_ELEMENT_KEYWORDS = {"FILTER", "OPTIONAL", "MINUS", "BIND", "VALUES", "SERVICE", "GRAPH", "INCLUDE"}
_QUERY_END = {"GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "VALUES"}


class _Parser:
    def __init__(self, text: str, prefixes: Mapping[str, str] | None, tolerant: bool = False):
        self.tolerant = tolerant
        self.lexemes = _lex(text, tolerant)
        self.index = 0
        self.prefixes = dict(prefixes or {})
        self.base = ""
        self.blank_count = 0

    # -- cursor helpers
    def peek(self, ahead: int = 0) -> _Lexeme | None:
        index = self.index + ahead
        return self.lexemes[index] if index < len(self.lexemes) else None

    def keyword(self, ahead: int = 0) -> str:
        """The upper-cased text of a bare word at the cursor, else ``""``."""
        lexeme = self.peek(ahead)
        return lexeme.text.upper() if lexeme is not None and lexeme.kind == "name" else ""

    def is_punct(self, text: str, ahead: int = 0) -> bool:
        lexeme = self.peek(ahead)
        return lexeme is not None and lexeme.kind == "punct" and lexeme.text == text

    def take(self) -> _Lexeme:
        lexeme = self.peek()
        if lexeme is None:
            raise SparqlParseError("unexpected end of query")
        self.index += 1
        return lexeme

    def expect(self, text: str) -> None:
        lexeme = self.take()
        if lexeme.text.upper() != text:
            raise self.error(f"expected {text!r}", lexeme)

    def error(self, message: str, lexeme: _Lexeme | None = None) -> SparqlParseError:
        lexeme = lexeme or self.peek()
        where = f"at offset {lexeme.position} ({lexeme.text!r})" if lexeme else "at the end of the query"
        return SparqlParseError(f"{message} {where}")

    # -- terms
    def term(self, lexeme: _Lexeme) -> Term:
        kind, text = lexeme.kind, lexeme.text
        if kind == "var":
            return Term("var", text[1:])
        if kind == "iri":
            iri = text[1:-1]
            return Term("iri", self.base + iri if self.base and ":" not in iri else iri)
        if kind == "pname":
            prefix, _, local = text.partition(":")
            local = re.sub(r"\\(.)", r"\1", local)
            return Term("iri", self.prefixes[prefix] + local) if prefix in self.prefixes else Term("pname", text)
        if kind == "bnode":
            return Term("bnode", text[2:])
        if kind == "number":
            return Term("number", text)
        if kind == "string":
            quote = 3 if text[:3] in ('"""', "'''") else 1
            value = _unescape(text[quote:-quote])
            if (following := self.peek()) is not None and following.kind == "lang":
                return Term("literal", value, lang=self.take().text[1:].lower())
            if self.is_punct("^^"):
                self.take()
                datatype = self.term(self.take())
                return Term("literal", value, datatype=datatype.value)
            return Term("literal", value)
        if kind == "name" and text.lower() in ("true", "false"):
            return Term("bool", text.lower())
        if kind == "name" and text == "a":
            return Term("iri", RDF + "type")
        raise self.error("expected an RDF term", lexeme)

    def fresh_blank(self) -> Term:
        self.blank_count += 1
        return Term("bnode", f"anon{self.blank_count}")

    # -- balanced token runs (expressions)
    def balanced(self) -> list[Token]:
        """Tokens from an opening bracket at the cursor to its matching close, inclusive."""
        opening = self.peek()
        if opening is None or opening.text not in "({":
            raise self.error("expected '(' or '{'")
        depth, tokens = 0, []
        while True:
            lexeme = self.take()
            if lexeme.kind == "punct" and lexeme.text in "({":
                depth += 1
            elif lexeme.kind == "punct" and lexeme.text in ")}":
                depth -= 1
            tokens.append(self.token(lexeme))
            if depth == 0:
                return tokens

    def token(self, lexeme: _Lexeme) -> Token:
        if lexeme.kind in ("punct",):
            return lexeme.text
        if lexeme.kind == "name" and lexeme.text.lower() not in ("true", "false", "a"):
            return lexeme.text.upper()
        if lexeme.kind == "lang":
            return lexeme.text
        return self.term(lexeme)

    def call_or_bracketed(self) -> list[Token]:
        """A bracketed expression or a function call (``CONTAINS(...)``, ``wdt:P1(...)``)."""
        if self.is_punct("("):
            return self.balanced()
        head = self.take()
        if head.kind == "name" and head.text.upper() in ("NOT", "EXISTS"):
            tokens: list[Token] = [head.text.upper()]
            if head.text.upper() == "NOT":
                self.expect("EXISTS")
                tokens.append("EXISTS")
            return tokens + self.balanced()
        return [self.token(head), *self.balanced()]

    def until(self, stop: Callable[[], bool]) -> list[Token]:
        """Tokens (balanced groups kept whole) until ``stop()`` or the end of the input / enclosing group."""
        tokens: list[Token] = []
        while self.peek() is not None and not stop() and not self.is_punct("}"):
            tokens += self.balanced() if self.is_punct("(") or self.is_punct("{") else [self.token(self.take())]
        return tokens

    # -- query
    def parse_query(self, top: bool = True) -> Query:
        if not self.tolerant:
            return self.strict_query(top)
        start = self.index
        try:
            return self.strict_query(top)
        except SparqlParseError:
            if not top:
                raise  # a sub-SELECT: its enclosing group passes over it
        # the head or the tail could not be read: keep the PREFIX declarations read so far and the first group
        self.index = start
        while self.peek() is not None and not self.is_punct("{"):
            self.take()
        query = Query(form="SELECT", where=self.group() if self.peek() is not None else Group())
        return query

    def strict_query(self, top: bool) -> Query:
        if top:
            self.prologue()
        form = self.keyword()
        if form not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
            raise self.error("expected SELECT, ASK, CONSTRUCT or DESCRIBE")
        self.take()
        query = Query(form=form, where=Group())
        if form == "SELECT":
            if self.keyword() in ("DISTINCT", "REDUCED"):
                query.modifier = self.take().text.upper()
            query.projection = self.projection()
        elif form == "CONSTRUCT" and self.is_punct("{"):
            self.take()
            query.template = self.triples_until_close()
        elif form == "DESCRIBE":
            while self.peek() is not None and self.keyword() not in ("WHERE", "FROM") and not self.is_punct("{"):
                lexeme = self.take()
                if not (lexeme.kind == "punct" and lexeme.text == "*"):
                    query.describe.append(self.term(lexeme))
        while self.keyword() == "WITH" and self.is_punct("{", 1):
            self.take()
            self.expect("{")
            named = self.parse_query(top=False)
            self.expect("}")
            self.expect("AS")
            name = self.take()
            if name.kind != "include":
                raise self.error("expected %name after WITH { ... } AS", name)
            query.named.append((name.text[1:], named))
        while self.keyword() == "FROM":
            query.dataset.append([self.token(self.take()) for _ in range(3 if self.keyword(1) == "NAMED" else 2)])
        if self.keyword() == "WHERE":
            self.take()
        if self.is_punct("{"):
            query.where = self.group()
        elif form != "DESCRIBE":
            raise self.error("expected the WHERE clause '{'")
        if self.tolerant and top:  # the solution modifiers hold no patterns: what follows the WHERE clause is passed over
            return query
        self.modifiers(query)
        if top and self.peek() is not None:
            raise self.error("unexpected text after the query")
        return query

    def prologue(self) -> None:
        while self.keyword() in ("PREFIX", "BASE"):
            if self.take().text.upper() == "BASE":
                self.base = self.term(self.take()).value
                continue
            name = self.take()
            if name.kind != "pname" or not name.text.endswith(":"):
                raise self.error("expected 'name:' after PREFIX", name)
            iri = self.take()
            if iri.kind != "iri":
                raise self.error("expected <iri> in PREFIX", iri)
            self.prefixes[name.text[:-1]] = iri.text[1:-1]

    def projection(self) -> list[Projection] | None:
        if self.is_punct("*"):
            self.take()
            return None
        items = []
        while True:
            lexeme = self.peek()
            if lexeme is not None and lexeme.kind == "var":
                items.append(Projection(self.term(self.take())))
            elif self.is_punct("("):
                tokens = self.balanced()
                if len(tokens) < 5 or tokens[-3] != "AS" or not isinstance(tokens[-2], Term):
                    raise self.error("expected (expression AS ?var) in the projection")
                items.append(Projection(tokens[-2], tokens[1:-3]))
            else:
                break
        if not items:
            raise self.error("expected a projection")
        return items

    def modifiers(self, query: Query) -> None:
        while True:
            word = self.keyword()
            if word == "GROUP":
                self.take()
                self.expect("BY")
                query.group_by = self.until(lambda: self.keyword() in _QUERY_END)
            elif word == "HAVING":
                self.take()
                query.having = self.until(lambda: self.keyword() in _QUERY_END)
            elif word == "ORDER":
                self.take()
                self.expect("BY")
                query.order_by = self.until(lambda: self.keyword() in _QUERY_END)
            elif word in ("LIMIT", "OFFSET"):
                self.take()
                number = self.take()
                if number.kind != "number" or not number.text.isdigit():
                    raise self.error(f"expected an integer after {word}", number)
                setattr(query, word.lower(), int(number.text))
            elif word == "VALUES":
                self.take()
                query.values = self.values_block()
            else:
                return

    def values_block(self) -> list[Token]:
        head = self.balanced() if self.is_punct("(") else [self.term(self.take())]
        return head + self.balanced()

    # -- group graph patterns
    def group(self) -> Group:
        self.expect("{")
        if self.keyword() == "SELECT":
            query = self.parse_query(top=False)
            self.expect("}")
            return Group([SubSelect(query)])
        group = Group()
        while not self.is_punct("}"):
            if self.peek() is None and self.tolerant:
                return group  # a query cut off inside the group
            if self.peek() is None:
                raise self.error("unclosed '{'")
            if self.is_punct("."):
                self.take()
                continue
            start = self.index
            try:
                group.elements += self.element()
            except SparqlParseError:
                if not self.tolerant:
                    raise
                self.index = start
                self.pass_over_element()
        self.take()
        return group

    def pass_over_element(self) -> None:
        """Tolerant mode: move past an element that cannot be read, to the ``.`` after it or the ``}`` that
        closes its group (brackets inside it are skipped whole)."""
        depth = 0
        while (lexeme := self.peek()) is not None:
            if lexeme.kind == "punct" and lexeme.text in "({[":
                depth += 1
            elif lexeme.kind == "punct" and lexeme.text in ")}]":
                if depth == 0:
                    return
                depth -= 1
            elif depth == 0 and lexeme.kind == "punct" and lexeme.text == ".":
                self.take()
                return
            self.take()

    def element(self) -> list[Element]:
        word = self.keyword()
        if word == "FILTER":
            self.take()
            start = self.index
            expression = self.call_or_bracketed()
            return [Filter(expression, self.exists_groups(start, self.index))]
        if word in ("OPTIONAL", "MINUS"):
            self.take()
            return [(Optional if word == "OPTIONAL" else Minus)(self.group())]
        if word == "BIND":
            self.take()
            tokens = self.balanced()
            if len(tokens) < 5 or tokens[-3] != "AS" or not isinstance(tokens[-2], Term):
                raise self.error("expected BIND(expression AS ?var)")
            return [Bind(tokens[1:-3], tokens[-2])]
        if word == "VALUES":
            self.take()
            return [InlineValues(self.values_block())]
        if word == "INCLUDE":
            self.take()
            name = self.take()
            if name.kind != "include":
                raise self.error("expected %name after INCLUDE", name)
            return [Include(name.text[1:])]
        if word in ("SERVICE", "GRAPH"):
            self.take()
            silent = word == "SERVICE" and self.keyword() == "SILENT"
            if silent:
                self.take()
            target = self.term(self.take())
            return [Service(target, self.group(), silent) if word == "SERVICE" else GraphOf(target, self.group())]
        if self.is_punct("{"):
            groups = [self.group()]
            while self.keyword() == "UNION":
                self.take()
                groups.append(self.group())
            if len(groups) > 1:
                return [UnionOf(groups)]
            inner = groups[0]
            return [inner.elements[0]] if _is_subselect(inner) else [inner]
        return [*self.triples_same_subject()]

    def exists_groups(self, start: int, end: int) -> list[Group]:
        """The ``EXISTS { ... }`` groups among the lexemes ``start:end`` (read again as groups; the cursor is
        restored). Nested ones belong to the group they are in."""
        groups, resume = [], self.index
        self.index = start
        while self.index < end:
            if self.keyword() == "EXISTS" and self.is_punct("{", 1):
                self.take()
                groups.append(self.group())
            else:
                self.take()
        self.index = resume
        return groups

    def triples_until_close(self) -> list[Triple]:
        triples: list[Triple] = []
        while not self.is_punct("}"):
            if self.is_punct("."):
                self.take()
                continue
            triples += self.triples_same_subject()
        self.take()
        return triples

    def triples_same_subject(self) -> list[Triple]:
        triples: list[Triple] = []
        if self.is_punct("["):
            subject = self.blank_property_list(triples)
            if self.is_punct(".") or self.is_punct("}"):
                return triples
        else:
            lexeme = self.take()
            if lexeme.kind in ("punct",) or (lexeme.kind == "name" and lexeme.text.upper() in _ELEMENT_KEYWORDS):
                raise self.error("expected a triple pattern", lexeme)
            subject = self.term(lexeme)
        self.property_list(subject, triples)
        return triples

    def property_list(self, subject: Term, triples: list[Triple]) -> None:
        while True:
            predicate = self.verb()
            while True:
                triples.append(Triple(subject, predicate, self.object(triples)))
                if not self.is_punct(","):
                    break
                self.take()
            if not self.is_punct(";"):
                return
            while self.is_punct(";"):
                self.take()
            if any(self.is_punct(p) for p in ".]}{") or self.keyword() in _ELEMENT_KEYWORDS:
                return  # a trailing ';' (Blazegraph accepts one before the next element)

    def object(self, triples: list[Triple]) -> Term:
        if self.is_punct("["):
            return self.blank_property_list(triples)
        if self.is_punct("("):
            raise self.error("RDF collections '( ... )' in triple patterns are not supported")
        lexeme = self.take()
        if lexeme.kind == "punct" and lexeme.text in "+-" and (number := self.peek()) and number.kind == "number":
            return Term("number", lexeme.text + self.take().text)
        return self.term(lexeme)

    def blank_property_list(self, triples: list[Triple]) -> Term:
        self.expect("[")
        node = self.fresh_blank()
        if not self.is_punct("]"):
            self.property_list(node, triples)
        self.expect("]")
        return node

    def verb(self) -> list[Token]:
        lexeme = self.peek()
        if lexeme is not None and lexeme.kind == "var":
            return [self.term(self.take())]
        return self.path_alternative()

    def path_alternative(self) -> list[Token]:
        tokens = self.path_sequence()
        while self.is_punct("|"):
            self.take()
            tokens += ["|", *self.path_sequence()]
        return tokens

    def path_sequence(self) -> list[Token]:
        tokens = self.path_element()
        while self.is_punct("/"):
            self.take()
            tokens += ["/", *self.path_element()]
        return tokens

    def path_element(self) -> list[Token]:
        tokens: list[Token] = []
        if self.is_punct("^"):
            self.take()
            tokens.append("^")
        if self.is_punct("!"):
            self.take()
            tokens.append("!")
            tokens += self.balanced() if self.is_punct("(") else [self.term(self.take())]
        elif self.is_punct("("):
            self.take()
            tokens += ["(", *self.path_alternative(), ")"]
            self.expect(")")
        else:
            lexeme = self.take()
            if lexeme.kind not in ("iri", "pname") and not (lexeme.kind == "name" and lexeme.text == "a"):
                raise self.error("expected a predicate (IRI, prefixed name, 'a', variable or path)", lexeme)
            tokens.append(self.term(lexeme))
        for modifier in ("*", "+", "?"):
            if self.is_punct(modifier):
                self.take()
                tokens.append(modifier)
                break
        return tokens


def _is_subselect(group: Group) -> bool:
    return len(group.elements) == 1 and isinstance(group.elements[0], SubSelect)


def parse_query(text: str, prefixes: Mapping[str, str] | None = None, *, tolerant: bool = False) -> Query:
    """Parse a SPARQL query. ``prefixes`` are those a query may use without declaring them (the KG's predefined
    ones, :func:`sparqlab.kg.profiles.known_prefixes`); a prefixed name under no known prefix stays a ``pname``.

    ``tolerant`` reads what it can of a broken or cut-off query (an agent's draft, checked before it is run): a
    group element it cannot read is passed over to the next ``.`` or ``}``, an unclosed group ends with the text,
    characters no lexeme starts with are passed over, and a query whose head (prologue, form, projection) cannot
    be read is taken as ``SELECT *`` over its first group; the solution modifiers are not read. Nesting deeper
    than the limit and an empty query are refused in both modes.

    Raises :class:`SparqlParseError` (a ``ValueError``) saying where the query stops making sense, and for
    brackets nested deeper than the screen's :data:`~sparqlab.sparql.screen.MAX_NESTING` (the parser and the
    printers recurse per level, and predicted queries are untrusted).
    """
    if not isinstance(text, str) or not text.strip():
        raise SparqlParseError("empty query")
    depth = scan(text).max_depth
    if depth > MAX_NESTING:
        raise SparqlParseError(f"brackets nested {depth} deep, more than the limit of {MAX_NESTING}")
    return _Parser(text, prefixes, tolerant).parse_query()


def parts_of(query: Query, *, services: bool = True, exists: bool = True) -> Iterator[Query | Group]:
    """The query, every group in it and every query in it, outermost first: the WHERE clause and, inside it, every
    nested, OPTIONAL, MINUS, UNION, GRAPH and SERVICE group, FILTER EXISTS pattern, sub-SELECT and named
    subquery (iterative: the parse bounds the nesting, not the stack). ``services=False`` leaves SERVICE groups
    out, ``exists=False`` the EXISTS patterns."""
    stack: list[Query | Group] = [query]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, Query):
            stack += [named for _, named in reversed(item.named)] + [item.where]
            continue
        for element in reversed(item.elements):
            if isinstance(element, Group):
                stack.append(element)
            elif isinstance(element, Optional | Minus | GraphOf) or (services and isinstance(element, Service)):
                stack.append(element.group)
            elif isinstance(element, UnionOf):
                stack += reversed(element.groups)
            elif isinstance(element, Filter) and exists:
                stack += reversed(element.exists)
            elif isinstance(element, SubSelect):
                stack.append(element.query)


AGGREGATES = frozenset({"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"})
"""The aggregate function keywords of SPARQL 1.1 (section 18.5)."""


def aggregates(query: Query) -> bool:
    """Whether the query's solutions are groups: a ``GROUP BY``, or an aggregate function in its projection,
    ``HAVING`` or ``ORDER BY`` (sub-SELECTs not included)."""
    expressions = [item.expression or [] for item in query.projection or []] + [query.having or [],
                                                                                  query.order_by or []]
    return query.group_by is not None or any(token in AGGREGATES for tokens in expressions for token in tokens
                                             if isinstance(token, str))


def uses_service(sparql: str, prefixes: Mapping[str, str] | None = None) -> bool:
    """Whether the query holds a ``SERVICE`` pattern anywhere (subqueries, EXISTS, OPTIONAL ...): stage 2 of the
    screen (:mod:`sparqlab.sparql.screen`), run where parsing is bounded (the store's worker).

    Decided from the parsed query, after SPARQL's ``\\u`` escapes are applied as the grammar says. Text in which
    the letters ``service`` occur nowhere, in any case or escape, cannot hold the keyword, so it skips the parse. A
    query the parser cannot read falls back to the conservative answer: any ``SERVICE`` keyword outside strings,
    IRIs and comments counts.
    """
    text = expand_escapes(sparql)
    if "SERVICE" not in text.upper() and "service" not in text.casefold():
        return False
    try:
        tree = parse_query(text, prefixes)
    except SparqlParseError:
        return scan(sparql).mentions_service
    return any(isinstance(element, Service) for part in parts_of(tree) if isinstance(part, Group)
               for element in part.elements)


# ---------------------------------------------------------------------------------------------- printer


def default_term(term: Term) -> str:
    """A term in SPARQL syntax, IRIs written in full."""
    if term.kind == "var":
        return f"?{term.value}"
    if term.kind == "bnode":
        return f"_:{term.value}"
    if term.kind == "iri":
        return f"<{term.value}>"
    if term.kind == "literal":
        text = quote_literal(term.value)
        if term.lang:
            return f"{text}@{term.lang}"
        return f"{text}^^<{term.datatype}>" if term.datatype else text
    return term.value


TermPrinter = Callable[[Term], str]


def tokens_text(tokens: Sequence[Token], show: TermPrinter = default_term) -> str:
    """Expression tokens with one space between them (normalised operator and bracket spacing)."""
    return " ".join(show(t) if isinstance(t, Term) else t for t in tokens)


def triple_text(triple: Triple, show: TermPrinter = default_term) -> str:
    return f"{show(triple.subject)} {tokens_text(triple.predicate, show)} {show(triple.object)}"


def element_text(element: Element, show: TermPrinter = default_term, ordered: bool = False) -> str:
    """One group element as SPARQL text (a triple pattern without its final dot)."""
    if isinstance(element, Triple):
        return triple_text(element, show)
    if isinstance(element, Filter):
        return f"FILTER {tokens_text(element.expression, show)}"
    if isinstance(element, Bind):
        return f"BIND ( {tokens_text(element.expression, show)} AS {show(element.variable)} )"
    if isinstance(element, InlineValues):
        return f"VALUES {tokens_text(element.tokens, show)}"
    if isinstance(element, Group):
        return group_text(element, show, ordered)
    if isinstance(element, Optional):
        return f"OPTIONAL {group_text(element.group, show, ordered)}"
    if isinstance(element, Minus):
        return f"MINUS {group_text(element.group, show, ordered)}"
    if isinstance(element, UnionOf):
        return " UNION ".join(group_text(g, show, ordered) for g in element.groups)
    if isinstance(element, GraphOf):
        return f"GRAPH {show(element.name)} {group_text(element.group, show, ordered)}"
    if isinstance(element, Service):
        silent = "SILENT " if element.silent else ""
        return f"SERVICE {silent}{show(element.endpoint)} {group_text(element.group, show, ordered)}"
    if isinstance(element, SubSelect):
        return f"{{ {query_text(element.query, show, ordered)} }}"
    if isinstance(element, Include):
        return f"INCLUDE %{element.name}"
    raise TypeError(f"not a group element: {element!r}")


def group_text(group: Group, show: TermPrinter = default_term, ordered: bool = False) -> str:
    """``{ ... }``; with ``ordered``, the group's triple patterns and its filters each in sorted order (their
    order does not change what the group matches), every other element in place after them."""
    if not ordered:
        parts = [element_text(e, show) + (" ." if isinstance(e, Triple) else "") for e in group.elements]
    else:
        triples = sorted(element_text(e, show) + " ." for e in group.elements if isinstance(e, Triple))
        filters = sorted(element_text(e, show, True) for e in group.elements if isinstance(e, Filter))
        rest = [element_text(e, show, True) for e in group.elements if not isinstance(e, Triple | Filter)]
        parts = triples + filters + rest
    return "{ " + " ".join(parts) + " }" if parts else "{ }"


def head_text(query: Query, show: TermPrinter = default_term, ordered: bool = False) -> str:
    """The query form with its projection (``SELECT DISTINCT ?a (COUNT(?b) AS ?c)``), up to WHERE."""
    parts = [query.form] + ([query.modifier] if query.modifier else [])
    if query.form == "SELECT":
        if query.projection is None:
            parts.append("*")
        for item in query.projection or []:
            if item.expression is None:
                parts.append(show(item.variable))
            else:
                parts.append(f"( {tokens_text(item.expression, show)} AS {show(item.variable)} )")
    elif query.form == "CONSTRUCT":
        parts.append("{ " + " ".join(triple_text(t, show) + " ." for t in query.template) + " }")
    elif query.form == "DESCRIBE":
        parts += [show(t) for t in query.describe] or ["*"]
    parts += [f"WITH {{ {query_text(named, show, ordered)} }} AS %{name}" for name, named in query.named]
    parts += [tokens_text(clause, show) for clause in query.dataset]
    return " ".join(parts)


def modifier_texts(query: Query, show: TermPrinter = default_term) -> list[str]:
    """The solution modifiers in SPARQL order (GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET, trailing VALUES)."""
    parts = []
    if query.group_by is not None:
        parts.append(f"GROUP BY {tokens_text(query.group_by, show)}")
    if query.having is not None:
        parts.append(f"HAVING {tokens_text(query.having, show)}")
    if query.order_by is not None:
        parts.append(f"ORDER BY {tokens_text(query.order_by, show)}")
    if query.limit is not None:
        parts.append(f"LIMIT {query.limit}")
    if query.offset is not None:
        parts.append(f"OFFSET {query.offset}")
    if query.values is not None:
        parts.append(f"VALUES {tokens_text(query.values, show)}")
    return parts


def query_text(query: Query, show: TermPrinter = default_term, ordered: bool = False) -> str:
    """The whole query on one line (no PREFIX declarations: the default printer writes IRIs in full)."""
    return " ".join([head_text(query, show, ordered), "WHERE", group_text(query.where, show, ordered),
                     *modifier_texts(query, show)])


def iter_terms(query: Query) -> Iterator[Term]:
    """Every term of the query in printing order (projection, dataset, pattern, modifiers)."""
    found: list[Term] = []

    def record(term: Term) -> str:
        found.append(term)
        return ""

    query_text(query, record)
    return iter(found)
