"""RunConfig is typed and declared once: groups with unique leaf names (flat keywords and dotted paths), validation
at construction, a did-you-mean for every misspelling, a format version in every run folder, and ``--from``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runs_helpers import LookupMethod, TinyKG, tiny_questions

from sparqlab.cli import main
from sparqlab.runs import RunConfig, run
from sparqlab.runs.config import RUN_FORMAT, RoleSpec, SamplingParams


def test_flat_keywords_dotted_paths_and_groups_name_the_same_settings():
    short = RunConfig(experiment="e", kg="movies", dataset="metaqa-1hop", limit=50, model="standin-keyword-rules")
    dotted = RunConfig(**{"experiment": "e", "graph.kg": "movies", "questions.dataset": "metaqa-1hop",
                          "questions.limit": 50, "models.model": "standin-keyword-rules"})
    grouped = RunConfig(experiment="e", graph={"kg": "movies"}, questions={"dataset": "metaqa-1hop", "limit": 50},
                        models={"model": "standin-keyword-rules"})
    assert short == dotted == grouped
    assert (short.limit, short.questions.limit, short.seed, short.concurrency) == (50, 50, 0, 8)
    assert RunConfig.from_dict(short.to_dict()) == short, "config.json's nested form reads back"
    assert short.replace(temperature=0.2).model_params == SamplingParams(temperature=0.2, seed=0)
    assert short.replace(model_params={"max_tokens": 9}).sampling_params() == {"max_tokens": 9, "seed": 0}


@pytest.mark.parametrize(("settings", "message"), [
    ({"modle": "x"}, "unknown setting 'modle' (did you mean 'model'?)"),
    ({"questions.limt": 3}, "did you mean 'questions.limit'?"),
    ({"timeout": 3}, "did you mean 'question_timeout_s'?"),
    ({"cache": "sometimes"}, "ExecutionSettings.cache must be one of 'read_write', 'off', 'replay'"),
    ({"select": "easy"}, "must be one of 'answerable'"),
    ({"answer_match": "fuzzy"}, "must be one of 'iri', 'label', 'either'"),
    ({"limit": "ten"}, "QuestionSelection.limit must be int"),
    ({"limit": -1}, "limit must be >= 0"),
    ({"concurrency": 0}, "ExecutionSettings.concurrency must be >= 1; got 0"),
    ({"question_timeout_s": 0}, "EvaluationSettings.question_timeout_s must be > 0; got 0"),
    ({"question_timeout_s": -5}, "EvaluationSettings.question_timeout_s must be > 0; got -5"),
    ({"question_timeout_s": float("nan")}, "EvaluationSettings.question_timeout_s must be a finite number; got nan"),
    ({"temperature": float("nan")}, "SamplingParams.temperature must be a finite number; got nan"),
    ({"top_p": 1.5}, "SamplingParams.top_p must be in (0, 1]; got 1.5"),
    ({"max_tokens": -5}, "SamplingParams.max_tokens must be >= 1; got -5"),
    ({"kg_options": {"max_rows": 0}}, "kg_options max_rows must be >= 1; got 0"),
    ({"kg_options": {"max_rows": -1}}, "kg_options max_rows must be >= 1; got -1"),
    ({"kg_options": {"timeout_s": float("inf")}}, "kg_options timeout_s must be a finite number; got inf"),
    ({"kg_options": {"memory_limit_gb": "8G"}}, "kg_options memory_limit_gb must be float; got str '8G'"),
    ({"shard_index": 2, "num_shards": 2}, "shard_index must be in 0..num_shards-1"),
    ({"experiment": "a/b"}, "becomes a folder name"),
    ({"model_roles": {"corrector": {"modle": "x"}}}, "unknown option 'modle' (did you mean 'model'?) for RoleSpec"),
    ({"model_params": {"temprature": 0}}, "did you mean 'models.model_params.temperature'?"),
    ({"questions": 3}, "is a group of settings"),
])
def test_bad_settings_fail_at_construction_naming_the_setting(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        RunConfig(**settings)


def test_a_model_role_is_typed_and_has_a_one_string_form():
    config = RunConfig(model_roles={"corrector": "meta-llama/Llama-3.1-70B@http://gpu2:8000/v1",
                                    "oracle": {"model": "standin-echo", "params": {"temperature": 0.5}}})
    assert config.model_roles["corrector"] == RoleSpec("meta-llama/Llama-3.1-70B", "http://gpu2:8000/v1")
    assert config.model_roles["oracle"].params.request_params() == {"temperature": 0.5}
    assert RunConfig.from_dict(config.to_dict()) == config


def test_every_run_folder_has_a_format_and_another_format_is_refused_clearly(tmp_path, capsys):
    config = RunConfig(experiment="fmt", output_root=str(tmp_path), progress=False)
    result = run(LookupMethod(), tiny_questions(2), config, kg=TinyKG(2))
    for name in ("config.json", "manifest.json"):
        assert json.loads((result.run_dir / name).read_text())["format"] == RUN_FORMAT
    old = json.loads((result.run_dir / "config.json").read_text())
    old.pop("format")
    (result.run_dir / "config.json").write_text(json.dumps(old))
    with pytest.raises(ValueError, match="run-folder format 1; this sparqlab reads format 2"):
        run(LookupMethod(), tiny_questions(2), config, kg=TinyKG(2))
    assert main(["run", "--from", str(result.run_dir)]) == 1
    assert "format 1" in capsys.readouterr().err


def test_run_from_a_folder_reruns_its_config_with_the_flags_over_it(tmp_path, capsys, monkeypatch):
    from sparqlab.graphs.movies import ensure_store

    ensure_store()
    base = ["run", "direct", "-d", "metaqa-1hop", "--limit", "2", "-m", "standin-keyword-rules", "-e", "again",
            "--output-root", str(tmp_path), "--progress", "false"]
    assert main(base) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert main(["run", "--from", first, "--output-root", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == first, "the same settings: the same folder"
    assert main(["run", "--from", first, "--limit", "3", "-o", "reparse_attempts=0", "--output-root", str(tmp_path)]) == 0
    changed = capsys.readouterr().out.splitlines()[0]
    saved = json.loads((tmp_path / "again" / changed.rsplit("/", 1)[1] / "config.json").read_text())
    assert saved["run"]["questions"]["limit"] == 3 and saved["method"]["config"]["reparse_attempts"] == 0
    assert main(["run", "genop", "--from", first]) == 1
    assert "is a run of method 'direct', not 'genop'" in capsys.readouterr().err
    # where the rerun writes is the command line's (here: the defaults), never the folder's, which may come from
    # someone else and point anywhere
    saved = json.loads((Path(first) / "config.json").read_text())
    elsewhere = tmp_path / "elsewhere"
    saved["run"]["execution"].update(output_root=str(elsewhere / "runs"), cache_path=str(elsewhere / "c.sqlite"))
    (Path(first) / "config.json").write_text(json.dumps(saved))
    monkeypatch.setenv("SPARQLAB_RUNS", str(tmp_path / "default"))
    assert main(["run", "--from", first, "--progress", "false"]) == 0
    assert capsys.readouterr().out.startswith(str(tmp_path / "default" / "again"))
    assert not elsewhere.exists()


@pytest.mark.parametrize("name", [".", ".."])
def test_experiment_names_that_leave_the_runs_folder_are_refused(name):
    with pytest.raises(ValueError, match="neither '.' nor '..'"):
        RunConfig(experiment=name)
