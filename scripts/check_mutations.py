"""Check that the validity tests can fail: apply each known mutation to a private copy of the code or data, run the
tests that guard against it, and report whether they fail (caught) as they must.

The working tree is never touched: every mutation runs in a temporary project root holding copies of ``lib/``
(found first on ``PYTHONPATH``), ``tests/``, ``scripts/``, ``benchmarks/`` and the mutated data folder, with the
rest of ``data/``, the built movie-KG store and the other top-level files linked, and an empty cache for
everything else. The unmutated copy is run first, so a test that fails without any mutation is reported as such
and not counted as a catch.

    .venv/bin/python scripts/check_mutations.py [--only NAME ...] [--list]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` by ``new`` in ``path``; ``tests`` must then fail.

    ``path`` is a file, or ``file::Qualified.name`` of a function, method or class in it: the anchor is then the
    definition by name (wherever it moves in the file), and ``old`` must occur exactly once inside it, so a
    mutation names the behaviour it breaks rather than a line.
    """

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]

    @property
    def file(self) -> str:
        return self.path.partition("::")[0]

    def apply(self, text: str) -> str:
        """``text`` (the file's) with the mutation applied; ``ValueError`` when the anchor is not unique."""
        file, _, qualname = self.path.partition("::")
        start, end = _definition_span(text, qualname) if qualname else (0, len(text))
        scope = text[start:end]
        if scope.count(self.old) != 1:
            raise ValueError(f"{self.name}: the text to replace occurs {scope.count(self.old)} times in "
                             f"{self.path} (expected once); update the mutation")
        return text[:start] + scope.replace(self.old, self.new) + text[end:]


def _definition_span(text: str, qualname: str) -> tuple[int, int]:
    """Character offsets of the definition ``qualname`` (``name`` or ``Class.method``) in module source ``text``."""
    import ast

    body, node = ast.parse(text).body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                     and n.name == part), None)
        if node is None:
            raise ValueError(f"no definition {qualname!r} found (missing part {part!r})")
        body = node.body
    lines = text.splitlines(keepends=True)
    first = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    return sum(map(len, lines[:first])), sum(map(len, lines[:node.end_lineno]))


KEYWORD = "lib/sparqlab/methods/direct/keyword_rules.py"
KEYWORD_TESTS = ("tests/methods/direct/test_keyword_rules.py",)
NORMALISE = "lib/sparqlab/eval/normalise.py"
NORMALISE_TESTS = ("tests/eval/test_eval_normalise.py",)
MCQA = "lib/sparqlab/data/mcqa.py"
MOVIE_TESTS = "tests/data/test_data_movies.py"
MCQA_MEANING_TESTS = (f"{MOVIE_TESTS}::test_mcqa_gold_queries_mean_what_their_type_says",)

SAGA_TOOLS = "lib/sparqlab/methods/agents/tools.py"
SAGA_TESTS = "tests/methods/agents/test_saga_fidelity.py"
SAGA_TYPES = "lib/sparqlab/methods/agents/schema/types.py"
CONTROLLER_TESTS = "tests/methods/agents/test_controller.py"
GGC_GATE = "lib/sparqlab/methods/ggc/gate.py"
GGC_GATE_TESTS = "tests/methods/ggc/test_ggc_gate.py"
GGC_METHOD = "lib/sparqlab/methods/ggc/method.py"
GGC_METRICS = "lib/sparqlab/methods/ggc/metrics.py"
DESQ_CORRECTION = "lib/sparqlab/methods/desq/correction.py"
DESQ_CORRECTION_TESTS = "tests/methods/desq/test_desq_correction.py"
DESQ_METRICS = "lib/sparqlab/methods/desq/metrics.py"
DESQ_FIDELITY_TESTS = "tests/methods/desq/test_desq_fidelity.py"
GENOP = "lib/sparqlab/methods/genop/semantics.py"
GENOP_EXAMPLES_TESTS = "tests/methods/genop/test_genop_examples.py"
GENOP_FIXPOINT_TESTS = "tests/methods/genop/test_genop_fixpoints.py"
GENOP_SPARQL_TESTS = "tests/methods/genop/test_genop_fidelity.py::test_sparql_edge_cases_evaluate_as_sparql_does"
STRUCTURAL = "lib/sparqlab/eval/structural.py"
STRUCTURAL_TESTS = "tests/eval/test_eval_structural_em.py"
SET_METRICS = "lib/sparqlab/eval/metrics.py"
SET_METRICS_TESTS = "tests/eval/test_eval_set_metrics.py"
GOLD_ERROR_TESTS = "tests/eval/test_gold_errors.py"

MUTATIONS = [
    Mutation("keyword: old class-line pattern (notes with ':' or '(' never match)", KEYWORD,
             'r"^\\s*-\\s*class (\\w+):(.*)$"', 'r"^\\s*-\\s*class (\\w+):\\s*([\\w ,]*)$"', KEYWORD_TESTS),
    Mutation("keyword: direction logic removed (always both directions)", KEYWORD,
             "    if not named:\n        return None\n", "    if True:\n        return None\n", KEYWORD_TESTS),
    Mutation("keyword: subject/object patterns swapped", KEYWORD,
             '"subject": "?uri ?rel ?topic .",', '"subject": "?topic ?rel ?uri .",', KEYWORD_TESTS),
    Mutation("keyword: class named right before the entity not treated as the entity's", KEYWORD,
             "if position == len(words_before_topic) - 1:", "if False:", KEYWORD_TESTS),
    Mutation("keyword: other classes' names kept in a class's words", KEYWORD,
             "and not any(matches(o, w) for o in others)", "", KEYWORD_TESTS),
    Mutation("gold: MCQA same-actor/-director/-writer films keep the topic film (FILTER dropped)", MCQA,
             '"?uri ?rel1 ?e2 ; ?rel4 ?e4 ; rdfs:label ?label .",\n                f"FILTER(?label != {topic})",',
             '"?uri ?rel1 ?e2 ; ?rel4 ?e4 ; rdfs:label ?label .",', MCQA_MEANING_TESTS),
    Mutation("gold: MCQA 1-hop constraint follows the topic's relation", MCQA,
             "?rel2 rdfs:label {quote_literal(ROLE_RELATION[qtype.constraint])} .",
             "?rel2 rdfs:label {quote_literal(ROLE_RELATION[qtype.linking_role])} .", MCQA_MEANING_TESTS),
    Mutation("gold: MCQA co-actor/co-writer answers keep the topic person", MCQA,
             '            "?uri rdfs:label ?label .",\n            f"FILTER(?label != {topic})",',
             '            "?uri rdfs:label ?label .",', MCQA_MEANING_TESTS),
    Mutation("gold: a stored MCQA gold answer set gains a wrong answer", "data/mcqa_movies/test.jsonl",
             '"gold_answers": ["Tube Tales"]', '"gold_answers": ["Alien", "Tube Tales"]',
             (f"{MOVIE_TESTS}::test_bundled_mcqa_gold_is_what_each_type_means_over_the_raw_kb",)),
    Mutation("gold: MetaQA walks keep the topic on hops 2+", "lib/sparqlab/data/metaqa.py",
             "        if number > 1:\n            patterns.append(f\"FILTER(", "        if False:\n            patterns.append(f\"FILTER(",
             (f"{MOVIE_TESTS}::test_metaqa_multi_hop_gold_queries_reproduce_every_answer_set",)),
    Mutation("gold: a 1-hop superset counts as a same-title merge without checking the raw KB",
             "scripts/check_metaqa_gold.py", 'if not got - gold <= kb.objects.get((film, RELATION_OF_ROLE[role]), set()):',
             "if False:", (f"{MOVIE_TESTS}::test_same_title_merge_check_rejects_what_it_cannot_explain",)),
    Mutation("normalise: plain literals read as numbers again", NORMALISE,
             '    if text.startswith(("http://", "https://")) or _expand(text) != text:\n        return _iri(text)\n    return text',
             '    if text.startswith(("http://", "https://")) or _expand(text) != text:\n        return _iri(text)\n'
             '    if re.fullmatch(r"[+-]?\\d+(\\.\\d+)?", text):\n        return _decimal(Decimal(text))\n    return text',
             NORMALISE_TESTS),
    Mutation("normalise: ill-typed literals become their bare lexical form", NORMALISE,
             """return f'"{lexical}"^^<{term.datatype}>'""", "return lexical", NORMALISE_TESTS),
    Mutation("normalise: integer range checks removed", NORMALISE,
             "if (low is not None and number < low) or (high is not None and number > high):", "if False:",
             NORMALISE_TESTS),
    Mutation("normalise: float specials not recognised", NORMALISE,
             "if datatype in FLOAT_TYPES and lexical in _FLOAT_SPECIAL:", "if False:", NORMALISE_TESTS),
    Mutation("normalise: NaN written like Python", NORMALISE, 'return "NaN"', 'return "nan"', NORMALISE_TESTS),
    Mutation("normalise: timezone offset ignored", NORMALISE, "minutes=-shift", "minutes=0", NORMALISE_TESTS),
    Mutation("normalise: 24:00:00 not rolled to the next day", NORMALISE,
             "days=1 if end_of_day else 0", "days=0", NORMALISE_TESTS),
    Mutation("normalise: any day 1..31 accepted", NORMALISE,
             "1 <= day <= _days_in_month(year, month)", "1 <= day <= 31", NORMALISE_TESTS),
    Mutation("normalise: every fourth year a leap year", NORMALISE,
             "(year % 100 != 0 or year % 400 == 0)", "True", NORMALISE_TESTS),
    Mutation("normalise: a date with a time accepted as xsd:date", NORMALISE,
             "has_time != (datatype != XSD + \"date\")", "False", NORMALISE_TESTS),
    Mutation("normalise: any non-true boolean is false", NORMALISE,
             '    if lexical in ("false", "0"):\n        return "false"\n    raise IllTyped(lexical)',
             '    return "false"', NORMALISE_TESTS),
    Mutation("normalise: blank nodes lose their _: mark", NORMALISE,
             'return "_:" + term.value.strip().removeprefix("_:")', "return term.value.strip()", NORMALISE_TESTS),
    Mutation("normalise: language tags kept", NORMALISE,
             "    if term.lang or term.datatype in (None,",
             "    if term.lang:\n        return _string(lexical) + '@' + term.lang\n    if term.datatype in (None,",
             NORMALISE_TESTS),
    # SAGA fidelity: each mutation restores the workbench's earlier behaviour
    Mutation("saga: search hides hits again whenever the type filter is on", SAGA_TOOLS,
             "session.focus and saga_features(session).search_filter",
             "session.focus and saga_features(session).type_filter",
             (f"{SAGA_TESTS}::test_search_annotates_property_hits_and_hides_none",)),
    Mutation("saga: sampled (empirical) evidence filters like a declaration", "lib/sparqlab/methods/agents/schema/index.py",
             "        if self.empirical_filter:\n", "        if True:\n",
             (f"{SAGA_TESTS}::test_soft_evidence_never_removes_a_property_so_zero_coverage_filters_nothing",
              "tests/methods/agents/schema/test_type_semantics.py")),
    Mutation("saga: the P2309 relation ignored (a class matched by its instance-of types)", "lib/sparqlab/methods/agents/schema/types.py",
             "related = related_classes(schema.relation(prop, side), types, supers)", "related = types",
             (f"{SAGA_TESTS}::test_lookup_of_a_class_honours_the_relation_qualifier",
              "tests/methods/agents/schema/test_class_relations.py")),
    Mutation("saga: SPINACH's empty result carries SAGA's type hint", SAGA_TOOLS,
             '(f"\\n{EMPTY_WARNING}" if schema_aware else "")', 'f"\\n{EMPTY_WARNING}"',
             (f"{SAGA_TESTS}::test_spinach_reports_an_empty_result_without_saga_s_type_hint",)),
    Mutation("saga: re-parse only replies that do not parse",
             "lib/sparqlab/methods/agents/controller.py::AgentMethod._next_action",
             'reading.action is not None and (config.reparse == "on_failure" or tools_format)',
             "reading.action is not None",
             (f"{SAGA_TESTS}::test_every_controller_reply_is_reparsed_by_default",)),
    Mutation("saga: variable types enter Θ before execution and stay with the name",
             "lib/sparqlab/methods/agents/features.py",
             'variable_types: Literal["query", "trace"] = "query"', 'variable_types: Literal["query", "trace"] = "trace"',
             (f"{SAGA_TESTS}::test_a_reused_variable_does_not_keep_types_from_a_blocked_query",)),
    Mutation("saga: empty-result rate over all questions (no query counted as empty)", "lib/sparqlab/eval/metrics.py",
             'generated = [r for r in records if r["predicted_sparql"]]', "generated = list(records)",
             ("tests/methods/agents/test_empty_rate_definition.py",)),
    Mutation("saga: --select answerable ignored", "lib/sparqlab/runs/plan.py",
             'if config.select == "answerable":', "if False:", ("tests/methods/agents/test_saga_datasets.py",)),
    # issue 25: semantic mutations per method and for the metrics, named by the behaviour they break; each changes
    # a published number (docs/fidelity.md, "Mutation score")
    Mutation("saga: range evidence not recorded", f"{SAGA_TOOLS}::_execute",
             "            await _range_evidence(ctx, session, triples, result)\n", "            pass\n",
             (f"{SAGA_TESTS}::test_range_evidence_from_results_types_the_object_and_shows_in_the_next_listing",)),
    Mutation("saga: P_τ filter keeps conflicting properties", f"{SAGA_TYPES}::type_filter",
             "(kept if not related or not allowed or allowed & related else removed)", "kept",
             ("tests/methods/agents/schema/test_type_semantics.py",)),
    Mutation("saga: P_τ filter removes properties with an unknown domain (δ = ∅)", f"{SAGA_TYPES}::type_filter",
             "kept if not related or not allowed or allowed & related", "kept if not related or allowed & related",
             ("tests/methods/agents/schema/test_type_semantics.py",)),
    Mutation("saga: [BLOCKED] never fires", f"{SAGA_TOOLS}::_blocked",
             "    if not conflicts:\n        return None", "    if True:\n        return None",
             (f"{CONTROLLER_TESTS}::test_blocked_fires_on_a_known_domain_conflict_only",)),
    Mutation("saga: lookup filters incoming edges by the domain, outgoing by the range", f"{SAGA_TOOLS}::_lookup",
             '(("out", "domain"), ("in", "range"))', '(("out", "range"), ("in", "domain"))',
             (f"{CONTROLLER_TESTS}::test_saga_lookup_filters_and_annotates_while_spinach_prunes",)),
    Mutation("spinach: LLM pruning keeps every property", f"{SAGA_TOOLS}::_prune",
             'if f"({_short(ctx, p)})" in keys}', "}",
             (f"{SAGA_TESTS}::test_spinach_shows_only_the_properties_its_pruning_call_keeps",)),
    Mutation("ggc: KG-feedback features zeroed", f"{GGC_GATE}::_feedback_matrix",
             "np.array([e.feedback.vector() for e in examples], dtype=np.float64)",
             "np.zeros((len(examples), len(FEATURES)))",
             (f"{GGC_GATE_TESTS}::test_the_feedback_features_alone_separate_the_classes",)),
    Mutation("ggc: τ compared with > instead of ≥", f"{GGC_GATE}::decide", "probability >= threshold",
             "probability > threshold", (f"{GGC_GATE_TESTS}::test_threshold_is_inclusive",)),
    Mutation("ggc: corrector never called in mode all", f"{GGC_METHOD}::GGC.answer",
             "        else:\n            triggered = True", "        else:\n            triggered = False",
             ("tests/methods/ggc/test_ggc_method.py::test_modes",)),
    Mutation("ggc: the corrector's query discarded (the initial one kept)", f"{GGC_METHOD}::GGC.answer",
             "return MethodOutput(corrected, None, extra)", "return MethodOutput(initial, unread, extra)",
             ("tests/methods/ggc/test_ggc_method.py::test_modes",)),
    Mutation("ggc: gate metrics' positive class is 'initial query correct'", f"{GGC_METRICS}::pipeline_metrics",
             'labels = ~frame["initial_correct"].to_numpy(bool)', 'labels = frame["initial_correct"].to_numpy(bool)',
             ("tests/methods/ggc/test_ggc_fidelity.py::test_gated_run_metrics_carry_the_gate_metrics_at_its_threshold",)),
    Mutation("ggc: pipeline scores the initial query of corrected questions", f"{GGC_METRICS}::pipeline_metrics",
             'np.where(chosen, frame[f"corrected_{name}"], frame[f"initial_{name}"])',
             'np.where(chosen, frame[f"initial_{name}"], frame[f"initial_{name}"])',
             ("tests/methods/ggc/test_ggc_method.py::test_sweep_from_one_run_equals_the_run_at_that_threshold",)),
    Mutation("ggc: pipeline time counts the corrector on every question", f"{GGC_METRICS}::pipeline_metrics",
             '+ frame["t_corrector_s"][chosen].sum())', '+ frame["t_corrector_s"].fillna(0).sum())',
             ("tests/methods/ggc/test_ggc_data.py",)),
    Mutation("desq: round trip compares labels case-insensitively", f"{DESQ_CORRECTION}::roundtrip_flag",
             "return entry.label != slot.label", "return entry.label.lower() != slot.label.lower()",
             (f"{DESQ_CORRECTION_TESTS}::test_round_trip_exact_is_case_sensitive_and_fuzzy_is_not",)),
    Mutation("desq: round trip trusts an id absent from the memory", f"{DESQ_CORRECTION}::roundtrip_flag",
             "    if entry is None:\n        return True", "    if entry is None:\n        return False",
             (f"{DESQ_CORRECTION_TESTS}::test_round_trip_fixes_an_absent_id_and_keeps_a_correct_one",)),
    Mutation("desq: combined ignores the score threshold", f"{DESQ_CORRECTION}::correct_slots",
             'strategy not in ("score-threshold", "combined")', 'strategy not in ("score-threshold",)',
             (DESQ_CORRECTION_TESTS,)),
    Mutation("desq: oracle flags every slot (always-retrieve)", f"{DESQ_CORRECTION}::correct_slots",
             "flagged = slot.id != gold_ids.get(slot.placeholder)", "flagged = True", (DESQ_CORRECTION_TESTS,)),
    Mutation("desq: final-query EM scored on the uncorrected slots", f"{DESQ_METRICS}::score_output",
             "assemble(parsed.fragments, apply(parsed.slots, corrections), scheme)",
             "assemble(parsed.fragments, parsed.slots, scheme)", (f"{DESQ_FIDELITY_TESTS}::test_final_query_em_is_scored_on_the_corrected_query",)),
    Mutation("desq: id EM macro-averaged over questions in the strategy table", f"{DESQ_METRICS}::strategy_table",
             'if average == "question":', "if True:", (DESQ_FIDELITY_TESTS,)),
    Mutation("desq: fragment EM micro score is the mean of per-question rates", f"{DESQ_METRICS}::micro_scores",
             '"micro": matched.sum() / total.sum() if total.sum() else float("nan")', '"micro": rate.mean()',
             (DESQ_FIDELITY_TESTS,)),
    Mutation("genop: Minus removes a mapping that shares no variable", f"{GENOP}::Evaluation._matches",
             "overlapping = overlapping or (bool(hits) and bool(shared))", "overlapping = overlapping or bool(hits)",
             (GENOP_SPARQL_TESTS, GENOP_EXAMPLES_TESTS)),
    Mutation("genop: Filter keeps mappings whose formula is an error", f"{GENOP}::Evaluation.eval",
             "return {m for m in rows if self.truth(p.formula, m) is True}",
             "return {m for m in rows if self.truth(p.formula, m) is not False}",
             (GENOP_SPARQL_TESTS, GENOP_EXAMPLES_TESTS)),
    Mutation("genop: ¬ε is true instead of ε", f"{GENOP}::Evaluation.truth",
             "return None if value is None else not value", "return not value",
             (GENOP_SPARQL_TESTS, GENOP_EXAMPLES_TESTS)),
    Mutation("genop: OPTIONAL drops left mappings without a match (a Join)", f"{GENOP}::Evaluation.eval",
             "return kept | await self.diff(left, negative_right, p.formula, error_keeps=True)", "return kept",
             (GENOP_SPARQL_TESTS, GENOP_EXAMPLES_TESTS)),
    Mutation("genop: well-founded model reports nothing undefined", f"{GENOP}::Evaluation.well_founded",
             "return true, cand - true - false", "return true, set()", (GENOP_FIXPOINT_TESTS,)),
    Mutation("genop: strata evaluated all at once (higher strata not removed)", f"{GENOP}::Evaluation.run",
             "if level > i})", "if level > i + 1})",
             (f"{GENOP_FIXPOINT_TESTS}::test_a_stratum_is_evaluated_without_the_genops_of_higher_strata",)),
    Mutation("genop: a self-supporting candidate accepted without validation", f"{GENOP}::Evaluation.self_support",
             "            if not ok:\n                return g", "            if False:\n                return g",
             (GENOP_EXAMPLES_TESTS,)),
    Mutation("genop: cyclic SCCs condensed under single-pass and stratified only (ours before)",
             f"{GENOP}::EvalSettings", "condense: bool = True", "condense: bool = False",
             ("tests/methods/genop/test_genop_fidelity.py",)),
    Mutation("genop: the flat row sort key leaves out the variable names", "lib/sparqlab/methods/genop/terms.py::Mu.sort_key",
             "key += (v, *data[v].order_key)", "key += data[v].order_key",
             ("tests/methods/genop/test_genop_fast_paths.py::test_sort_rows_is_the_order_of_sorted_items",)),
    Mutation("core: run_sync on a kept loop leaves a call's tasks running", "lib/sparqlab/core/event_loops.py::_run_on_thread_loop",
             "leftover = asyncio.all_tasks(loop)", "leftover = set()",
             ("tests/core/test_event_loops.py::test_reuse_loop_cancels_what_a_call_leaves_behind",)),
    Mutation("ggc: the gate class-weighted by default (not the paper's unweighted loss)",
             f"{GGC_GATE}::GateSettings", 'class_weights: ClassWeights = "none"', 'class_weights: ClassWeights = "balanced"',
             ("tests/methods/ggc/test_ggc_fidelity.py::test_paper_gate_is_the_default_encoder_on_raw_unweighted_input",)),
    Mutation("desq: fragments aligned by key for a model verbaliser", "lib/sparqlab/methods/desq/method.py::Desq.score",
             'alignment="position" if self.config.verbaliser == "model" else "key"', 'alignment="key"',
             (f"{DESQ_FIDELITY_TESTS}::test_the_method_aligns_by_position_when_the_verbaliser_is_a_model",)),
    Mutation("eval: structural EM compares query text (no renaming or reordering)", f"{STRUCTURAL}::structural_em",
             "return int(canonical_form(predicted) == gold_form)",
             'return int(" ".join(predicted.split()) == " ".join(gold.split()))', (STRUCTURAL_TESTS,)),
    Mutation("eval: structural EM ignores everything but the triple patterns", f"{STRUCTURAL}::structural_em",
             "return int(canonical_form(predicted) == gold_form)",
             'return int(sorted(re.findall(r"\\S+ \\S+ \\S+ \\.", predicted)) == '
             'sorted(re.findall(r"\\S+ \\S+ \\S+ \\.", gold)))', (STRUCTURAL_TESTS,)),
    Mutation("eval: fragment EM aligned by position when asked for key", f"{STRUCTURAL}::fragment_em",
             'if alignment == "position":', "if True:", ("tests/methods/desq/test_desq_structural.py", DESQ_FIDELITY_TESTS)),
    Mutation("eval: fragment EM lets one predicted fragment match two gold ones", f"{STRUCTURAL}::fragment_em",
             "            candidates.remove(normalise_fragment(fragment))\n", "",
             ("tests/methods/desq/test_desq_structural.py", DESQ_FIDELITY_TESTS)),
    Mutation("eval: URI EM compares raw strings (no normalisation)", f"{STRUCTURAL}::uri_em",
             'normalise_fragment(guess) == normalise_fragment(entry.get(name, ""))', 'guess == entry.get(name, "")',
             ("tests/methods/desq/test_desq_structural.py",)),
    Mutation("eval: F1 is recall", f"{SET_METRICS}::normalised_set_scores",
             "2 * hits / (len(predicted) + len(expected))", "hits / len(expected)", (SET_METRICS_TESTS,)),
    Mutation("eval: an empty prediction for an empty gold set scores 0", f"{SET_METRICS}::normalised_set_scores",
             "return SetScore(1.0, 1.0, 1.0)", "return SetScore(0.0, 0.0, 0.0)", (SET_METRICS_TESTS,)),
    Mutation("eval: EM is 'every gold answer found' (a superset matches)", f"{SET_METRICS}::SetScore.em",
             "return self.f1 == 1.0", "return self.recall == 1.0", (SET_METRICS_TESTS,)),
    Mutation("eval: F1 micro-averaged (pooled counts) instead of per question", SET_METRICS,
             'register_metric(F1_KEY, "F1", field=F1_KEY,',
             'register_metric(F1_KEY, "F1", lambda kept: 2 * sum(r["precision"] * r["recall"] for r in kept) / '
             'max(1e-9, sum(r["precision"] + r["recall"] for r in kept)), field=F1_KEY,', (SET_METRICS_TESTS,)),
    Mutation("desq: metrics.json's id EM averaged over questions, not over URI slots",
             f"{DESQ_METRICS}::slot_averaged", "matched += rate * slots\n            total += slots",
             "matched += rate\n            total += 1",
             (f"{DESQ_FIDELITY_TESTS}::test_metrics_json_carries_the_papers_slot_averaged_id_em_and_corpus_bleu",)),
    # issue 29: DeSQ and GenOp fidelity, each restoring the earlier behaviour
    Mutation("desq: final-query EM by graph isomorphism again (not first-appearance names)",
             f"{DESQ_METRICS}::score_output", 'scores[f"{strategy}.final_em"] = query_em(assembled, gold_sparql)',
             'scores[f"{strategy}.final_em"] = structural_em(assembled, gold_sparql)',
             (f"{DESQ_FIDELITY_TESTS}::test_final_query_em_is_the_first_appearance_em_and_structural_em_is_scored_beside_it",)),
    Mutation("eval: query EM names variables canonically (any consistent renaming matches)",
             f"{STRUCTURAL}::query_em", "return int(first_appearance_form(predicted) == gold_form)",
             "return int(canonical_form(predicted) == canonical_form(gold))",
             (f"{DESQ_FIDELITY_TESTS}::test_query_em_names_variables_by_first_appearance_where_structural_em_matches_any_renaming",)),
    Mutation("eval: BLEU over lower-cased whitespace tokens (not sacreBLEU's tokeniser)", f"{STRUCTURAL}::corpus_bleu",
             "return sacrebleu.corpus_bleu(list(predictions), [list(references)]).score / 100",
             "return sacrebleu.corpus_bleu([normalise_fragment(p) for p in predictions], "
             "[[normalise_fragment(r) for r in references]], tokenize='none').score / 100",
             ("tests/methods/desq/test_desq_structural.py::test_corpus_bleu_is_sacrebleu_with_its_standard_tokeniser",)),
    Mutation("desq: an unknown Wikidata id described as empty (scored against \"\")",
             "lib/sparqlab/methods/desq/kb_memory.py::describer", "        if not local:\n            return None",
             '        if not local:\n            return "", ""', (f"{DESQ_FIDELITY_TESTS}::test_an_unknown_slot_says_so_and_is_left_out_of_label_em",)),
    Mutation("desq: unknown slots scored for label and description EM", f"{STRUCTURAL}::uri_em",
             'if name != "id" and str(entry.get("placeholder")) in unknown:', "if False:",
             (f"{DESQ_FIDELITY_TESTS}::test_an_unknown_slot_says_so_and_is_left_out_of_label_em",)),
    Mutation("desq: the Wikidata memory without items (properties only)",
             "lib/sparqlab/graphs/wikidata.py::wikidata_catalogue",
             "return wikidata_properties() + wikidata_items()", "return wikidata_properties()",
             (f"{DESQ_FIDELITY_TESTS}::test_wikidata_gold_slots_carry_the_kb_label_and_description",)),
    Mutation("desq: retrieval text cut to the first 12 description words",
             "lib/sparqlab/methods/desq/kb_memory.py::entry_text", 'description = " ".join(str(description).split())',
             'description = " ".join(str(description).split()[:12])',
             (f"{DESQ_FIDELITY_TESTS}::test_retrieval_embeds_the_label_and_the_whole_description",
              "tests/methods/desq/test_desq_prebuilt_memory.py::test_the_shipped_memories_match_todays_entries")),
    Mutation("desq: BGE-Large's 0.85 applied to any embedder", "lib/sparqlab/methods/desq/method.py::Desq.prepare",
             "else round(cut_equivalent(unrelated), 4)", "else 0.85",
             (f"{DESQ_FIDELITY_TESTS}::test_the_default_cut_is_the_memory_s_equivalent_of_bge_large_s_085",)),
    Mutation("genop: auto runs every acyclic query in a single pass", "lib/sparqlab/methods/genop/dependency.py::Dependencies.auto_semantics",
             'return "single-pass" if self.single_pass_exact else "lfp" if self.monotone else "stratified"',
             'return "single-pass"',
             ("tests/methods/genop/test_genop_fidelity.py::test_auto_uses_the_fixpoint_when_a_genop_is_fed_by_another_union_branch",)),
    Mutation("genop: a GenOp fed by another branch counted as locally supplied",
             "lib/sparqlab/methods/genop/dependency.py::single_pass_exact",
             "            if not g.inputs <= bound:\n                return False", "            pass",
             ("tests/methods/genop/test_genop_fidelity.py",)),
    # issue 29: scoring and protocol (SAGA / SPINACH / GGC), each restoring the earlier behaviour
    Mutation("eval: a gold error is judged again (∅ = ∅ scores 1 for a method that gives up)",
             f"{SET_METRICS}::judge", "        return None\n    if predicted is None:",
             "        return _MATCH if not predicted else _NO_SCORE\n    if predicted is None:", (GOLD_ERROR_TESTS,)),
    Mutation("eval: a prediction without answers keeps its stored score", f"{SET_METRICS}::judged_scores",
             "    if predicted is None:\n        return 0.0, False\n", "",
             (f"{GOLD_ERROR_TESTS}::test_a_missing_prediction_scores_zero_even_when_its_record_claims_otherwise",)),
    Mutation("eval: tables average the raw f1 / em columns", f"{SET_METRICS}::answer_means",
             "judged = judged_frame(frame, rule)", "judged = frame",
             (f"{GOLD_ERROR_TESTS}::test_agent_tables_average_the_judged_questions_and_count_the_gold_errors",)),
    Mutation("agents: the controller samples as appendix F.2 by default",
             "lib/sparqlab/methods/agents/controller.py::AgentConfig", 'sampling: str = "greedy"',
             'sampling: str = "appendix_f2"',
             (f"{CONTROLLER_TESTS}::test_controller_decodes_greedily_with_2048_tokens_by_default_and_f2_is_a_preset",)),
    Mutation("agents: RDFS domains matched exactly (a professor loses memberOf, declared on Person)",
             "lib/sparqlab/kg/profiles.py::ConstraintScheme.subclass_semantics", 'return self.kind == "rdfs" and (',
             'return False and (', ("tests/methods/agents/test_rdfs_domains.py",)),
    Mutation("ggc: the KG's schema listing always in the prompts (an addition to appendix B)",
             "lib/sparqlab/methods/ggc/prompts.py::_system", "    if additions.schema_listing:", "    if True:",
             ("tests/methods/ggc/test_ggc_data.py::test_the_paper_s_prompts_by_default_and_each_addition_is_an_option",)),
    Mutation("ggc: the Alpaca output bare while the chat target is fenced",
             "lib/sparqlab/methods/ggc/data.py::sft_record", '"input": "", "output": target,',
             '"input": "", "output": query.gold_sparql.strip(),',
             ("tests/methods/ggc/test_ggc_data.py::test_the_paper_s_prompts_by_default_and_each_addition_is_an_option",)),
    Mutation("agents: the answer-type prior closed to the profile's catalogue of common types",
             "lib/sparqlab/methods/agents/saga.py::Saga._answer_type", "if iri and not session.schema.knows_class(iri):",
             "if iri and iri not in {ctx.kg.profile.resolve_id(cid) for _, cid in catalogue}:",
             (f"{CONTROLLER_TESTS}::test_the_answer_type_may_be_any_class_of_the_kg_and_an_unindexed_one_is_kept_as_a_label",)),
    Mutation("agents: without persistent type state [BLOCKED] ignores the entity just looked up",
             f"{SAGA_TOOLS}::_check_state", "    for term, classes in session.theta.types.items():",
             "    for term, classes in (session.theta.types if features.type_state else {}).items():",
             (f"{CONTROLLER_TESTS}::test_without_persistent_type_state_the_entity_just_looked_up_still_feeds_blocked",)),
    Mutation("agents: Table 5 without its macro-average column", "lib/sparqlab/experiments/agents.py::ablation_table",
             'table["Avg"] = table.mean(axis=1, skipna=False)', 'pass',
             (f"{GOLD_ERROR_TESTS}::test_agent_tables_average_the_judged_questions_and_count_the_gold_errors",)),
    Mutation("ggc: Table 3 shares leave ground-truth errors out of the base",
             "lib/sparqlab/eval/errors.py::error_table",
             'left_out = [CORRECT, NO_GOLD] + ([GOLD_ERROR] if gold_errors == "exclude" else [])',
             "left_out = [CORRECT, NO_GOLD, GOLD_ERROR]",
             ("tests/methods/ggc/test_ggc_errors.py::test_error_table_shares_are_over_all_errors_with_gold_errors_as_their_own_share",)),
    Mutation("ggc: Table 4 drops gold-error questions the pipeline's gate metrics count",
             "lib/sparqlab/methods/ggc/data.py::labelled_queries",
             "(gold_error and not gold_errors)", "gold_error",
             ("tests/methods/ggc/test_ggc_data.py::test_labelled_queries_skip_gold_errors_and_corrected_questions",)),
    Mutation("ggc: the gate labels the generator's own training questions (the split's generator portion first)",
             "lib/sparqlab/methods/ggc/split.py::training_split",
             "[q for i, q in enumerate(questions) if i not in drawn], generator_share, seed)",
             "[q for i, q in enumerate(questions) if i in drawn], generator_share, seed)",
             ("tests/methods/ggc/test_ggc_data.py::test_by_default_the_gate_questions_and_the_generator_questions_are_disjoint",
              "tests/methods/ggc/test_ggc_method.py::test_prepare_train_data_and_train_gate_read_one_split_and_record_it")),
    Mutation("ggc: a gate question in the generator's training file is labelled silently",
             "lib/sparqlab/methods/ggc/split.py::gate_questions", "if generator_data and not allow_overlap:",
             "if False:",
             ("tests/methods/ggc/test_ggc_data.py::test_gate_questions_in_the_generator_s_training_data_are_refused_unless_allowed",)),
    Mutation("data: a published file scored silently as the paper's evaluation set",
             "lib/sparqlab/data/registry.py::evaluation_set_note", "if paper is None or paper == n_questions:",
             "if True:", ("tests/methods/agents/test_saga_datasets.py::test_a_run_on_a_published_file_says_it_is_not_the_paper_s_evaluation_set",)),
    Mutation("agents: type-blindness ignores the entities' declared types",
             "lib/sparqlab/experiments/agents.py::type_blind", 'state.add(subject, entity_types(kg, f"<{subject}>"))',
             "pass", (f"{CONTROLLER_TESTS}::test_type_blind_failures_are_counted_from_final_queries",)),
    Mutation("tautology: kg build reports one triple fewer than it stored", "lib/sparqlab/graphs/movies.py",
             '"triples": len(lines),', '"triples": len(lines) - 1,',
             ("tests/kg/test_kg_cli.py::test_kg_build_prints_counts",)),
    Mutation("tautology: bench speedup of each level against itself", "benchmarks/concurrency.py",
             'row["speedup"] = base["wall_s"] / row["wall_s"]', 'row["speedup"] = row["wall_s"] / row["wall_s"]',
             ("tests/benchmarks/test_concurrency_benchmark.py",)),
    Mutation("tautology: notebooks prepared but not executed", "lib/sparqlab/notebooks/execute.py::execute_notebook",
             "progress_bar=progress, log_output=False,", "progress_bar=progress, log_output=False, prepare_only=True,",
             ("tests/notebooks/test_notebooks.py::test_quickstart_reproduces_headless_then_replays_from_cache",)),
]


COPIED = {"lib", "tests", "scripts", "benchmarks"}
"""Copied into the private root (small, and the mutated code or tests import each other); the rest is linked."""
PRIVATE = {".git", ".venv", ".cache", "data", "runs", "figures", ".pytest_cache", ".ruff_cache"}


def _tree(mutation: Mutation | None) -> tempfile.TemporaryDirectory:
    """A private project root: code and tests copied, ``data/`` linked (the mutated file's folder copied), the
    built movie KG linked, everything else linked."""
    folder = tempfile.TemporaryDirectory(prefix="sparqlab-mutation-")
    root = Path(folder.name)
    for entry in ROOT.iterdir():
        if entry.name in COPIED:
            shutil.copytree(entry, root / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.name not in PRIVATE:
            (root / entry.name).symlink_to(entry)
    (root / "data").mkdir()
    copied = Path(mutation.file).parts[1] if mutation and mutation.file.startswith("data/") else None
    for entry in (ROOT / "data").iterdir():
        if entry.name == copied:
            shutil.copytree(entry, root / "data" / entry.name)
        else:
            (root / "data" / entry.name).symlink_to(entry)
    (root / ".cache").mkdir()
    rebuilds_kg = mutation is not None and mutation.file.startswith(("lib/sparqlab/kg/", "data/metaqa/"))
    for built in () if rebuilds_kg else ("kg", "search"):  # a changed builder builds its own store, privately
        if (ROOT / ".cache" / built).exists():
            (root / ".cache" / built).symlink_to(ROOT / ".cache" / built)
    if mutation:
        target = root / mutation.file
        try:
            target.write_text(mutation.apply(target.read_text(encoding="utf-8")), encoding="utf-8")
        except ValueError:
            folder.cleanup()
            raise
    return folder


def run_tests(mutation: Mutation | None, tests: tuple[str, ...]) -> subprocess.CompletedProcess:
    """pytest on ``tests`` in a private root holding the (mutated) copy."""
    with _tree(mutation) as root:
        env = {**os.environ, "PYTHONPATH": str(Path(root) / "lib"), "SPARQLAB_CACHE": str(Path(root) / ".cache"),
               "SPARQLAB_RUNS": str(Path(root) / "runs"), "SPARQLAB_FIGURES": str(Path(root) / "figures"),
               "HF_HUB_OFFLINE": "1"}
        env.pop("SPARQLAB_DATA", None)
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
        return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=900)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=None, help="run the mutations whose name contains a word")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or any(word in m.name for word in args.only)]
    if args.list:
        for mutation in chosen:
            print(f"{mutation.name}  [{mutation.path}; {' '.join(mutation.tests)}]")
        return 0
    baseline = run_tests(None, tuple(dict.fromkeys(t for m in chosen for t in m.tests)))
    if baseline.returncode != 0:
        print("the unmutated copy fails its tests; fix that first:\n" + baseline.stdout[-3000:])
        return 1
    missed = []
    for mutation in tqdm(chosen, desc="mutations", unit="mutation"):
        outcome = run_tests(mutation, mutation.tests)
        caught = outcome.returncode == 1
        summary = (outcome.stdout.strip().splitlines() or ["(no output)"])[-1]
        tqdm.write(f"{'caught' if caught else 'MISSED'}  {mutation.name}  ({summary})")
        if not caught:
            missed.append(mutation.name)
            if outcome.returncode != 0:
                tqdm.write(outcome.stdout[-2000:] + outcome.stderr[-2000:])
    print(f"{len(chosen) - len(missed)}/{len(chosen)} mutations caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
