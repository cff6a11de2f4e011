"""Agreement of sparqlab's TEXT2SPARQL scoring with every shipped published file (data/text2sparql/published/).

1. Result-set route (no KG): each team's system result set scored against the true result set, compared per qname
   and per average with the team's published evaluation; files that cannot be a system's output are named.
2. Means: each evaluation file's published averages recomputed from its own per-qname rows.
3. Answers route (CK25 only: the bundled store): each team's answers executed on our store, scored, compared per
   qname with the published evaluation; every differing qname with the cause :func:`explain_difference` finds in the
   query (the organisers' result is known where the team's system result set is shipped, and where the published
   P = R = 1 pins it to the true set; otherwise their result is unknown and only the query's shape is used).

    .venv/bin/python scripts/check_text2sparql_published.py
"""

from __future__ import annotations

from sparqlab.text2sparql.editions import load_edition
from sparqlab.text2sparql.engine_report import explain_difference
from sparqlab.text2sparql.leaderboard import EVALUATION_PATTERNS, RESULT_SET_PATTERNS, published_folder
from sparqlab.text2sparql.metric import gold_relevance, summarise_official
from sparqlab.text2sparql.result_sets import (
    NotGenuine,
    compare_with_published,
    read_published_scores,
    read_result_set,
    score_result_set,
)


def _files(folder, patterns):
    return sorted(p for pattern in patterns for p in folder.glob(pattern))


def result_set_route() -> None:
    print("== result-set route: system result set scored without a KG, against the published evaluation")
    for dataset in ("ck25", "db25", "ck26", "db26"):
        questions = load_edition(dataset)
        for team in sorted(p for p in published_folder(dataset).iterdir() if p.is_dir()):
            for result_set in _files(team, RESULT_SET_PATTERNS):
                evaluation = next(iter(_files(team, EVALUATION_PATTERNS)), None)
                try:
                    ours = score_result_set(result_set, questions)
                except NotGenuine as error:
                    print(f"{dataset}/{team.name}: {result_set.name} refused: {'; '.join(error.reasons)}")
                    continue
                if evaluation is None:
                    print(f"{dataset}/{team.name}: no evaluation file to compare with")
                    continue
                agreement = compare_with_published(ours, read_published_scores(evaluation))
                exact = sum(p == o for p, o in agreement.averages.values())
                print(f"{dataset}/{team.name}: {agreement.counts}; {exact}/{len(agreement.averages)} published "
                      f"averages equal to the last bit")


def means() -> None:
    print("== means: every evaluation file's averages from its own rows")
    for dataset in ("ck25", "db25", "ck26", "db26"):
        year = 2025 if dataset.endswith("25") else 2026
        for team in sorted(p for p in published_folder(dataset).iterdir() if p.is_dir()):
            for evaluation in _files(team, EVALUATION_PATTERNS):
                published = read_published_scores(evaluation)
                ours = summarise_official(published.questions, edition=year)
                flat = [(v, ours.get(k)) for k, v in published.averages.items() if k != "languages"]
                flat += [(v, ours["languages"][lang].get(k)) for lang, block in
                         published.averages.get("languages", {}).items() for k, v in block.items()]
                print(f"{dataset}/{team.name}: {sum(p == o for p, o in flat)}/{len(flat)} averages equal "
                      f"({len(published.questions)} qnames)")


def answers_route() -> None:
    from sparqlab.kg import open_kg
    from sparqlab.text2sparql.answers import execute_flat, read_answers, score_answers

    print("== answers route: the team's queries on our store (CK25), against the published evaluation")
    questions = {q.id: q for q in load_edition("ck25")}
    total = agree = 0
    with open_kg("ck25", cache=False) as kg:
        for team in sorted(p for p in published_folder("ck25").iterdir() if p.is_dir()):
            answers_file, evaluation = team / "ck25_answers.json", team / "ck25_eval.json"
            if not answers_file.exists() or not evaluation.exists():
                continue
            answers = {a["qname"]: a for a in read_answers(answers_file)}
            system = next(iter(_files(team, RESULT_SET_PATTERNS)), None)
            theirs_known = read_result_set(system).values if system else {}
            table = score_answers(list(answers.values()), questions.values(), kg)
            published = read_published_scores(evaluation)
            agreement = compare_with_published(table, published)
            total += len(agreement.agree) + len(agreement.differ)
            agree += len(agreement.agree)
            print(f"ck25/{team.name}: {agreement.counts}")
            for qname in sorted(agreement.differ):
                query = (answers.get(qname) or {}).get("query")
                ours = execute_flat(kg, query)
                score = published.questions[qname]
                if qname in theirs_known:
                    theirs, known = theirs_known[qname], "their result set"
                elif score.set_P == score.set_recall == 1.0:
                    theirs, known = gold_relevance(questions[qname].gold_answers, "select"), "P = R = 1"
                else:
                    theirs, known = {}, "their result unknown"
                cause, why = explain_difference(query, ours["run"], theirs, ours["error"])
                print(f"  {qname}: ours set_F {table['questions'][qname]['set_F']:.3f}, published "
                      f"{score.set_F:.3f} -> {cause} ({why}; {known})")
    print(f"answers route on CK25: {agree}/{total} qnames equal to the published scores")


if __name__ == "__main__":
    result_set_route()
    means()
    answers_route()
