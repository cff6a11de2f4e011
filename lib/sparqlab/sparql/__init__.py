"""SPARQL text: the one room for reading, checking and writing queries as text, below every layer that runs them.

- :mod:`~sparqlab.sparql.screen` — the read-only screen every untrusted query passes before a store or endpoint
  sees it (one linear scan: updates, nesting, balance, undeclared prefixes, length), the portable spelling of a
  query, and the parser message shown to a reader;
- :mod:`~sparqlab.sparql.tree` — the one parser for structure (a query as a tree of group elements, with a
  printer that can rename variables or replace IRIs); structural EM, error categories, complexity features, the
  store worker's ``SERVICE`` check, DeSQ's fragments and SAGA's triple patterns (its tolerant mode) all read it;
- :mod:`~sparqlab.sparql.rewrite` — the documented, optional rewrite of derived-integer casts;
- :mod:`~sparqlab.sparql.extract` — where a query sits in free text (model replies).

The room imports only :mod:`sparqlab.core`. What a KG adds — its predefined prefixes
(:func:`sparqlab.kg.profiles.known_prefixes`), its typed errors (:func:`sparqlab.kg.base.check_read_only` raises
them for the screen's :class:`~sparqlab.sparql.screen.Refused`) — the caller passes in or translates. Nothing else
in the library parses SPARQL for its structure; GenOp (:mod:`sparqlab.methods.genop`) evaluates queries over
rdflib's SPARQL algebra, because the paper defines its operators over that algebra, not over source text.
"""
