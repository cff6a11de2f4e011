"""Schema layer of SAGA: the schema index (formal + empirical domain/range, coverage masking), the persistent
type state Θ, the type filter P_τ(e) and the compact property rendering. Used by :mod:`sparqlab.methods.agents` and by
``sparqlab schema show|filter``."""

from sparqlab.methods.agents.schema.index import (
    SCHEMA_INDEX_VERSION,
    PropertySchema,
    SchemaIndex,
    build_schema_index,
    class_superclasses,
    declared_digest,
    declared_superclasses,
    default_schema_folder,
    entity_types,
    frequent_types,
    load_or_build,
    sample_queries,
    sample_types,
    superclass_query,
    superclasses,
)
from sparqlab.methods.agents.schema.patterns import Triple, triple_patterns, type_patterns
from sparqlab.methods.agents.schema.render import render_property
from sparqlab.methods.agents.schema.types import (
    FilterResult,
    TypeState,
    domain_conflicts,
    type_filter,
)

__all__ = [
    "SCHEMA_INDEX_VERSION", "class_superclasses", "declared_digest", "declared_superclasses", "default_schema_folder", "entity_types", "frequent_types", "sample_queries",
    "superclasses", "FilterResult", "PropertySchema", "SchemaIndex", "Triple", "TypeState", "build_schema_index", "domain_conflicts",
    "load_or_build", "render_property", "sample_types", "superclass_query", "triple_patterns", "type_filter",
    "type_patterns",
]
