"""The corrector data-composition experiment of notebook 09 (GGC, section 4.3 and appendix A.4, Table 6): train
the generator, the gate and one corrector per training-data composition (W1.0, W1.0+C0.2, W1.0+C0.5, W1.0+C0.8)
on the same trainer stack, and tabulate their training sizes, times and losses in Table 6's layout.

The initial queries to label come from an ordinary generator-only GGC run over a training split (by default the
``standin-knn`` stand-in; on a GPU machine the fine-tuned generator served by vLLM). As in the paper (section
4.1), the generator's training data and the labelled questions are disjoint portions of the split, the one split
of :func:`sparqlab.methods.ggc.split.training_split` (``generator_share``): the first ``limit`` questions of the
generator's portion train the generator, the first ``limit`` of the gate's portion are labelled for the gate and
the corrector (:func:`sparqlab.methods.ggc.training_data.check_disjoint` checks it; ``table6.json`` records it). Without a ``base`` model
folder, a tiny random decoder (and encoder for the gate) is built from a config: the run then checks the
pipeline end to end and its losses and times say nothing about the paper's models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sparqlab.core.extras import require
from sparqlab.core.labels import note_model
from sparqlab.methods.ggc.split import GENERATOR_SHARE, SPLIT_SEED
from sparqlab.train.records import read_records, record_messages

GATE_LABELS = {"encoder": "Gate (encoder, RoBERTa in the paper)", "sbert": "Gate (SBERT)"}


@dataclass
class CompositionResult:
    """``table``: one row per trained module (Table 6 layout); ``histories``: each SFT module's loss log, with a
    ``module`` key, for :func:`sparqlab.plots.loss_curves`; ``skipped``: compositions that could not be built
    (name → reason); ``out``: the experiment folder; ``run_dir``: the generator run labelled."""

    table: pd.DataFrame
    histories: list[dict[str, Any]]
    skipped: dict[str, str]
    out: Path
    run_dir: Path
    pipeline_check: bool
    base: str
    gate_validation: dict[str, dict[str, float]] = field(default_factory=dict)

    def adapters(self) -> dict[str, Path]:
        """Composition name → its trained corrector adapter folder."""
        return {row["module"].removeprefix("Corrector "): self.out / "sft" / row["module"].split()[-1] / "adapter"
                for row in self.table.to_dict("records") if row["module"].startswith("Corrector ")}


def feasible_compositions(queries: Sequence[Any], compositions: Mapping[str, float]
                          ) -> tuple[dict[str, float], dict[str, str]]:
    """Split ``compositions`` into those the labelled queries can fill and the rest (with the reason), using
    GGC's own count rule (:func:`sparqlab.methods.ggc.data.correct_count`)."""
    from sparqlab.methods.ggc.data import correct_count

    wrong = sum(1 for q in queries if not q.correct and q.gold_sparql)
    correct = sum(1 for q in queries if q.correct and q.gold_sparql)
    ok, skipped = {}, {}
    for name, share in compositions.items():
        needed = correct_count(wrong, share)
        if wrong and needed <= correct:
            ok[name] = share
        else:
            skipped[name] = (f"needs {needed} correct and at least one wrong initial query; the generator run gave "
                             f"{correct} correct, {wrong} wrong (label more training questions)")
    return ok, skipped


def _texts(paths: Sequence[Path]) -> list[str]:
    texts = []
    for path in paths:
        for record in read_records(path):
            prompt, response = record_messages(record)
            texts += [m["content"] for m in prompt] + [response]
    return texts


def composition_experiment(out: str | Path, *, kg_name: str = "movies", dataset: str = "mcqa-movies",
                           split: str = "train", limit: int = 60, generator: str = "standin-knn",
                           generator_url: str | None = None, generator_options: Mapping[str, Any] | None = None,
                           compositions: Mapping[str, float] | None = None, base: str | None = None,
                           encoder: str | None = None, sft: Mapping[str, Any] | None = None,
                           gate: Mapping[str, Any] | None = None, gate_backends: Sequence[str] = ("encoder", "sbert"),
                           train_generator: bool = True, generator_share: float = GENERATOR_SHARE,
                           split_seed: int = SPLIT_SEED, seed: int = 0,
                           progress: bool = True) -> CompositionResult:
    """Label a generator run, build the GGC training files and train every module; see the module docstring.

    ``out``: experiment folder. ``kg_name``/``dataset``/``split``/``limit``: the training split and how many of
    its gate questions are labelled (and of its generator questions trained on). ``generator``/``generator_url``/``generator_options``: the model of the generator-only run
    (a stand-in name, or a served model with its URL) and its factory options. ``compositions``: name → share of
    correct samples (default GGC's four). ``base``: local base chat model folder (``None``: tiny random decoder);
    ``encoder``: gate encoder folder (``None``: tiny random encoder). ``sft``: :class:`~sparqlab.train.sft.SFTConfig`
    fields for every SFT module; ``gate``: :class:`~sparqlab.methods.ggc.gate.GateSettings` fields. ``gate_backends``:
    gates to train (``encoder``, ``sbert``). ``train_generator``: also fine-tune the generator (Table 6's first
    row). ``generator_share`` / ``split_seed``: the share of the split that is the generator's and the seed of its draw (module docstring). ``seed``: composition seed. ``progress``: progress bars.
    """
    require("train", what="the corrector data composition experiment (notebook 09)")
    from sparqlab.data.registry import load
    from sparqlab.experiments.ggc import every_question_failed, with_standin_memory
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc.data import COMPOSITIONS, labelled_queries
    from sparqlab.methods.ggc.gate import GateSettings
    from sparqlab.methods.ggc.gate_training import train_gate
    from sparqlab.methods.ggc.method import GGC
    from sparqlab.methods.ggc.split import gate_questions
    from sparqlab.methods.ggc.training_data import build_corrector_data, check_disjoint
    from sparqlab.runs import RunConfig, run
    from sparqlab.train.data import build_from_dataset
    from sparqlab.train.sft import SFTConfig, train_sft
    from sparqlab.train.tiny import build_tiny_decoder, build_tiny_encoder

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    compositions = dict(compositions or COMPOSITIONS)
    questions = load(dataset, split)
    labelled, data_split = gate_questions(questions, limit, generator_share, seed=split_seed)
    if train_generator and not data_split.generator:
        raise ValueError("generator_share=0 leaves no questions to train the generator on; raise it or pass "
                         "train_generator=False")
    model_spec = {"model": generator, **({"model_url": generator_url} if generator_url else {})}
    config = RunConfig(experiment="train-composition-generator", kg=kg_name, dataset=dataset, split=split,
                       model_options=dict(generator_options or {}), progress=progress, **model_spec)
    config = with_standin_memory(config, {"dataset": str(dataset), "split": split,
                                          "generator_share": generator_share, "split_seed": split_seed})
    kg = open_kg(kg_name)
    try:
        result = run(GGC(mode="none"), labelled, config=config, kg=kg)
        failure = every_question_failed(result.run_dir)
        if failure:
            raise ValueError(f"the generator answered none of the {len(labelled)} labelled questions: {failure}")
        queries = labelled_queries([result.run_dir], kg)
        feasible, skipped = feasible_compositions(queries, compositions)
        if not feasible:
            raise ValueError("no corrector composition can be built: " + "; ".join(
                f"{name} {reason}" for name, reason in skipped.items()))
        data_dir = out / "data"
        manifest = build_corrector_data([result.run_dir], data_dir, kg, compositions=feasible, seed=seed,
                                        queries=queries)
        files = {f"Corrector {name}": data_dir / f"{name}.jsonl" for name in feasible}
        if train_generator:
            build_from_dataset("ggc-generator", dataset, split, data_dir / "generator.jsonl", limit=limit,
                               kg=kg, progress=progress, generator_share=generator_share, split_seed=split_seed)
            check_disjoint(queries, data_dir / "generator.jsonl")
            files = {"Generator": data_dir / "generator.jsonl", **files}
    finally:
        kg.close()
    pipeline_check = base is None
    if base is None:  # what its tables and figures are made from: a stand-in, as the banner says
        note_model("standin-tiny-random (trained)", True)
        base = str(build_tiny_decoder(out / "tiny-decoder", _texts(list(files.values())), vocab_size=2048,
                                      seed=seed))
    rows, histories = [], []
    for module, path in files.items():
        name = module.split()[-1]
        trained = train_sft(SFTConfig(base=base, data=str(path), out=str(out / "sft" / name), progress=progress,
                                      **dict(sft or {})), figure=False)
        s = trained.summary
        size = manifest["sizes"].get(name, {}) if module.startswith("Corrector") else {}
        rows.append({"module": module, "samples": s["data"]["records"], "wrong (W)": size.get("wrong"),
                     "correct (C)": size.get("correct"), "steps": s["steps"],
                     "train time (s)": round(s["train_runtime_s"] or 0.0, 1), "first loss": s["first_train_loss"],
                     "last loss": s["last_train_loss"], "held-out loss before": s["initial_eval_loss"],
                     "held-out loss after": s["final_eval_loss"]})
        histories += [{**entry, "module": module} for entry in s["history"]]
    gate_validation = {}
    examples = [q.gate_example() for q in queries]
    for backend in gate_backends:
        settings = dict(gate or {})
        if backend == "encoder":
            if encoder is None:
                encoder = str(build_tiny_encoder(out / "tiny-encoder", [e.question for e in examples]
                                                 + [e.sparql for e in examples], seed=seed))
            settings["encoder_path"] = encoder
        else:
            settings = {k: v for k, v in settings.items() if k in ("c", "seed")}
        summary = train_gate(examples, GateSettings(backend=backend, **settings), out / f"gate-{backend}")
        gate_validation[GATE_LABELS[backend]] = summary["validation"]
        data = summary["data"]
        wrong = data["train_positive"] + data["validation_positive"]
        rows.append({"module": GATE_LABELS[backend], "samples": data["examples"], "wrong (W)": wrong,
                     "correct (C)": data["examples"] - wrong, "train time (s)": summary["wall_s"]})
    table = pd.DataFrame(rows)
    split_note = {**data_split.record(labelled), "limit": limit}
    (out / "table6.json").write_text(json.dumps({"rows": rows, "skipped": skipped, "pipeline_check": pipeline_check,
                                                 "gate_validation": gate_validation, "data_split": split_note},
                                                indent=2, default=str) + "\n",
                                     encoding="utf-8")
    return CompositionResult(table, histories, skipped, out, Path(result.run_dir), pipeline_check, base,
                             gate_validation)


def evaluate_correctors(result: CompositionResult, *, kg_name: str = "movies", dataset: str = "mcqa-movies",
                        split: str = "test", limit: int | None = 20, generator: str = "standin-knn",
                        generator_url: str | None = None, generator_options: Mapping[str, Any] | None = None,
                        gate: str = "encoder", threshold: float = 0.5, device: str = "cpu", max_tokens: int = 256,
                        progress: bool = True) -> pd.DataFrame:
    """Table 5c: one gated GGC run (Algorithm 1, τ = ``threshold``) per trained corrector, the corrector role
    served in process from its adapter (:mod:`sparqlab.llm.local_transformers`, ``device`` cpu or cuda, at most
    ``max_tokens`` per correction) and the gate ``gate-<gate>`` the experiment trained; rows give query-level
    accuracy, item-level P/R/F1 and corrector calls on ``dataset``/``split`` (first ``limit`` questions), from
    :func:`sparqlab.methods.ggc.metrics.pipeline_metrics`, and the accuracy on Table 12's three subsets
    (:func:`~sparqlab.methods.ggc.metrics.subset_analysis`; :func:`table12` lays them out). The generator is
    configured as in :func:`composition_experiment`."""
    from sparqlab.kg import open_kg
    from sparqlab.methods.ggc.method import GGC
    from sparqlab.methods.ggc.metrics import pipeline_metrics, stage_frame, subset_analysis
    from sparqlab.runs import RunConfig, run

    gate_path = result.out / f"gate-{gate}" / "gate"
    if not gate_path.is_dir():
        raise FileNotFoundError(f"{gate_path} does not exist: the experiment trained no {gate!r} gate")
    rows = []
    with open_kg(kg_name) as kg:
        for name, adapter in result.adapters().items():
            role = {"model": f"local:{result.base}", "params": {"max_tokens": max_tokens},
                    "options": {"adapter": str(adapter), "served_name": f"corrector-{name}", "device": device}}
            config = RunConfig(experiment="train-composition-eval", kg=kg_name, dataset=dataset, split=split,
                               limit=limit, model=generator, model_url=generator_url,
                               model_options=dict(generator_options or {}), model_roles={"corrector": role},
                               concurrency=2, progress=progress)
            run_result = run(GGC(mode="gated", gate_path=str(gate_path), threshold=threshold), config=config, kg=kg)
            frame = stage_frame(run_result.run_dir, kg)
            metrics = pipeline_metrics(frame)
            rows.append({"composition": name, **{k: metrics[k] for k in (
                "n", "accuracy", "item_precision", "item_recall", "item_f1", "corrector_calls")},
                **subset_analysis(frame)["accuracy"].to_dict()})
    return pd.DataFrame(rows)


def table12(evaluated: pd.DataFrame) -> pd.DataFrame:
    """GGC Table 12's layout from :func:`evaluate_correctors`: one row per corrector composition, the query-level
    accuracy on the triggered ("correction required"), originally wrong and originally correct questions."""
    from sparqlab.methods.ggc.published import COLUMNS

    return evaluated.set_index("composition")[list(COLUMNS["table12"])]
