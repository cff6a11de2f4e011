"""SAGA's mechanisms as one typed component config (method section, Table 5's ablations): the session of a SAGA
question carries it (:attr:`~sparqlab.methods.agents.controller.AgentSession.features`) and SAGA's tools read its
attributes, so a misspelt flag is an error when the config is built, never a silent "off"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, get_args

from sparqlab.platform import MethodConfig

if TYPE_CHECKING:
    from sparqlab.kg.profiles import KGProfile


@dataclass(frozen=True)
class SagaFeatures(MethodConfig):
    """Which of SAGA's mechanisms run; nested in :class:`~sparqlab.methods.agents.saga.SagaConfig` as ``features``.

    - ``type_filter``: apply P_τ(e) (Eq. 3) in lookups and [BLOCKED] at execute time (Table 5 "− type-constrained
      filtering" when off: neighbourhoods shown in full, still annotated). Property search never depends on it.
    - ``type_state``: keep Θ across steps — entity types from lookups, variable types from executed type
      patterns, trace-local range evidence, the type context in the prompt (Table 5 "− persistent type state"
      when off: only the current lookup's and query's own types are used).
    - ``answer_type_prior``: the one-off answer-type call and its use as a prior (Table 5 "− answer-type prior").
    - ``search_filter``: also hide property search hits whose known domain excludes the types of the last
      looked-up entity (not in the paper, whose search only annotates; off by default, a variant).
    - ``empirical_fallback``: show sampled subject/object types as a hint ("domain: usually …") where no formal
      declaration exists. Soft evidence never removes a property or blocks a query (method section, "Schema
      index"), so at ``schema_coverage=0`` the filter removes nothing.
    - ``empirical_filter``: let that sampled evidence remove properties in lookups like a declaration (the
      workbench's earlier reading; off by default). [BLOCKED] relies on formal declarations either way.
    - ``variable_types``: ``query`` (default) — the [BLOCKED] check takes a variable's types from the query's
      own type patterns, and Θ records them only after the query ran with results, replacing what an earlier
      query said about the same variable name; ``trace`` — the earlier reading: every query's type patterns
      enter Θ before it runs (blocked and failing ones too) and a variable keeps them for later queries.
    - ``subclass_closure``: close τ(e) (and σ(e)) under subclass-of before P_τ and [BLOCKED] match a declared
      class. ``None`` (default): what the KG's declarations mean (:attr:`sparqlab.kg.ConstraintScheme.
      subclass_semantics`): on ``rdfs:domain`` / ``rdfs:range`` schemas a declaration covers every subclass (RDFS
      semantics), on Wikidata's P2302 constraints and Freebase matching is exact, as Eq. (3) and appendix E.7
      describe. ``True`` / ``False`` force one reading on any KG (``False`` on an RDFS KG is the earlier exact
      match).
    """

    type_filter: bool = True
    type_state: bool = True
    answer_type_prior: bool = True
    search_filter: bool = False
    empirical_fallback: bool = True
    empirical_filter: bool = False
    variable_types: Literal["query", "trace"] = "query"
    subclass_closure: bool | None = None

    def for_kg(self, profile: KGProfile) -> SagaFeatures:
        """These features with ``subclass_closure`` resolved for one KG (``None``: its declarations' semantics)."""
        if self.subclass_closure is not None:
            return self
        return replace(self, subclass_closure=profile.constraints.subclass_semantics)

    def __post_init__(self) -> None:
        allowed = get_args(self.field_types()["variable_types"])
        if self.variable_types not in allowed:
            raise ValueError(f"variable_types must be one of {', '.join(allowed)}; got {self.variable_types!r}")
