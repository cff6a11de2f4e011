"""The GGC gate: P(correction required | x_gate) with x_gate = [q; s(0)] (paper, section 3.4), optionally with
KG execution feedback (section 4.3), and the decision g = 1[P ≥ τ] (:func:`decide`).

Backends (``GateSettings.backend``):

* ``encoder`` (default) — the paper's gate (sections 4.1 and A.1–A.2): a Hugging Face encoder (RoBERTa-base in
  the paper) from a local folder, fine-tuned as a sentence-pair classifier with transformers (appendix A.2
  hyper-parameters by default);
* ``tfidf`` — offline substitute: TF-IDF word uni/bigrams of the question and the query, logistic regression;
* ``sbert`` — offline substitute for the paper's SBERT gate: the frozen all-MiniLM-L6-v2 encoder embeds question
  u and query v, and a trained logistic-regression head reads [u, v, |u−v|, u⊙v] (the paper fine-tunes it).

By default every backend reads the raw input x_gate = [q; s(0)] (section 3.4) and trains with unweighted
cross-entropy (the paper does not reweight its ~10 % positives). Two options are variants of ours, off by default:
``mask_entities`` (:func:`gate_inputs`: the question's bracketed topic entities become ``[E1]``, ``[E2]`` ...,
query literals naming them ``"E1"``, ``"E2"`` ..., PREFIX lines are dropped, so the gate learns from phrasing and
structure rather than from names) and ``class_weights`` (``balanced``: each class weighted by n / (2 n_class),
which raises the trigger rate and FPR at τ = 0.5). With feedback, the
:class:`~sparqlab.methods.ggc.feedback.KGFeedback` vector is appended to the features (``encoder``: its sentence to the
query segment). "Correction required" (the initial query is wrong) is the positive class, label 1.

A trained gate is saved as a folder (:meth:`Gate.save`) of JSON (and, for ``encoder``, the fine-tuned model in
safetensors) whose content digest (:func:`folder_digest`) identifies it in a run's config; :meth:`Gate.load`
gives the same probabilities.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from sparqlab.llm.embeddings import embed, one_torch_thread
from sparqlab.methods.ggc.feedback import FEATURES, KGFeedback
from sparqlab.methods.ggc.template_memory import BRACKET, LITERAL, bracketed, unescape_literal
from sparqlab.platform.config import MethodConfig

Backend = Literal["encoder", "tfidf", "sbert"]
ClassWeights = Literal["none", "balanced"]
BACKENDS: tuple[str, ...] = get_args(Backend)
CLASS_WEIGHTS: tuple[str, ...] = get_args(ClassWeights)
GATE_FILE = "gate.json"
FORMAT_VERSION = 3
FORMATS = (1, 2, FORMAT_VERSION)
FORMAT_1_SETTINGS = {"mask_entities": True, "class_weights": "balanced"}
"""Format 1 gates (saved before the paper's raw, unweighted gate became the default) always masked and reweighted.
Formats 1 and 2 kept ``kg_feedback`` among the settings; format 3 beside them (it is the method's setting)."""


GATE_LABELS = {"encoder": "fine-tuned encoder gate (the paper's)", "tfidf": "offline tf-idf gate (substitute)",
               "sbert": "offline MiniLM gate (substitute)"}
"""How figures and tables name a gate backend, so a substitute is never read as the paper's gate."""


def gate_label(backend: str) -> str:
    """:data:`GATE_LABELS` of a backend (an unknown one by its name)."""
    return GATE_LABELS.get(backend, f"{backend} gate")


def decide(probability: float, threshold: float) -> bool:
    """g = 1[P(g=1 | x_gate) ≥ τ] (paper, section 3.4): ≥, so τ = 0 triggers every query and τ > 1 none."""
    return probability >= threshold


@dataclass(frozen=True)
class GateExample:
    """One gate input: the question, the initial query s(0), optional KG feedback, and (for training) the label
    (1 = correction required, i.e. s(0) is wrong; ``None`` when unknown)."""

    question: str
    sparql: str
    label: int | None = None
    feedback: KGFeedback | None = None
    question_id: str = ""


def gate_inputs(question: str, sparql: str, mask_entities: bool = False) -> tuple[str, str]:
    """The (question, query) pair a backend reads: raw, as the paper's x_gate = [q; s(0)] (section 3.4), or with
    ``mask_entities`` the entity-masked, PREFIX-free pair (module docstring)."""
    if not mask_entities:
        return question, sparql
    entities = bracketed(question)
    numbers = {name: f"E{i + 1}" for i, name in reversed(list(enumerate(entities)))}
    counter = iter(range(1, len(entities) + 1))
    masked_question = BRACKET.sub(lambda m: f"[E{next(counter)}]", question)
    masked_query = LITERAL.sub(lambda m: f'"{numbers.get(unescape_literal(m.group(1)), m.group(1))}"', sparql)
    masked_query = re.sub(r"PREFIX\s+\S+\s*<[^>]*>\s*", "", masked_query, flags=re.IGNORECASE)
    return masked_question, " ".join(masked_query.split())


@dataclass(frozen=True)
class GateSettings(MethodConfig):
    """How a gate is built (paper, sections 3.4, 4.1 and appendix A.2); nested in
    :class:`~sparqlab.methods.ggc.method.GGCConfig` as its ``gate`` field (``-o gate.backend=tfidf``) and read by
    ``sparqlab train gate``'s generated flags. Whether the gate reads KG feedback is not a setting of its own: it
    is the method's ``kg_feedback`` (the gate and the corrector see the same feedback), passed to
    :meth:`Gate.train`.

    - ``backend``: ``encoder`` (the paper's fine-tuned encoder; needs ``encoder_path``) or the offline substitutes
      ``tfidf`` | ``sbert``.
    - ``mask_entities``: read entity-masked, PREFIX-free inputs instead of the raw [q; s(0)] (ours, off by default).
    - ``class_weights``: ``none`` (the paper) or ``balanced`` class weights in the training loss.
    - ``c``: inverse regularisation strength of the ``tfidf``/``sbert`` logistic-regression heads.
    - ``encoder_path``: local Hugging Face encoder folder to fine-tune (``backend=encoder``).
    - ``epochs``: fine-tuning epochs of the ``encoder`` gate (appendix A.2: 3).
    - ``learning_rate``: fine-tuning learning rate of the ``encoder`` gate (appendix A.2: 2e-5).
    - ``batch_size``: fine-tuning batch size of the ``encoder`` gate (appendix A.2: 8).
    - ``max_length``: tokens per (question, query) pair of the ``encoder`` gate (appendix A.2: 256).
    - ``seed``: training seed of the ``encoder`` gate and of the logistic-regression heads.
    """

    backend: Backend = "encoder"
    _: KW_ONLY  # every other setting by name
    mask_entities: bool = False
    class_weights: ClassWeights = "none"
    c: float = 1.0
    encoder_path: str | None = None
    epochs: int = 3
    learning_rate: float = 2e-5
    batch_size: int = 8
    max_length: int = 256
    seed: int = 42

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown gate backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        if self.class_weights not in CLASS_WEIGHTS:
            raise ValueError(f"unknown class_weights {self.class_weights!r}; use one of {', '.join(CLASS_WEIGHTS)}")
        if self.c <= 0 or self.epochs < 1 or self.batch_size < 1 or self.max_length < 8 or self.learning_rate <= 0:
            raise ValueError(f"invalid gate hyper-parameters: {self}")

    def check_trainable(self) -> None:
        """Raise unless a gate can be trained with these settings (the ``encoder`` backend needs its folder)."""
        if self.backend == "encoder" and not self.encoder_path:
            raise ValueError("the encoder gate needs encoder_path: a local Hugging Face encoder folder "
                             "(e.g. a downloaded roberta-base), or choose an offline substitute gate "
                             "(backend 'tfidf' or 'sbert')")


@dataclass
class Gate:
    """A trained gate: settings, whether it reads KG feedback, backend state and what it was trained on
    (``training``: question ids, sizes, the run folders the examples came from)."""

    settings: GateSettings
    kg_feedback: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    _encoder: Any = field(default=None, repr=False)

    # -- training ---------------------------------------------------------------------------------------------

    @classmethod
    def train(cls, examples: Sequence[GateExample], settings: GateSettings, sources: Sequence[str] = (), *,
              kg_feedback: bool = False) -> Gate:
        """Fit a gate on labelled examples (both classes needed). ``sources`` (run folders) are recorded;
        ``kg_feedback``: the gate also reads each example's KG feedback (section 4.3)."""
        settings.check_trainable()
        labels = np.array([e.label for e in examples])
        if len(examples) == 0 or any(label not in (0, 1) for label in labels):
            raise ValueError("gate training needs examples labelled 0 (initial query correct) or 1 (wrong)")
        if len(set(labels.tolist())) < 2:
            kind = "correct" if labels[0] == 0 else "wrong"
            raise ValueError(f"all {len(examples)} training examples are {kind}: a gate needs both classes "
                             "(use more training questions)")
        if kg_feedback and any(e.feedback is None for e in examples):
            raise ValueError("kg_feedback is on but some training examples have no KG feedback")
        gate = cls(settings, kg_feedback, training={
            "n": len(examples), "n_positive": int(labels.sum()), "sources": list(sources),
            "question_ids": sorted({e.question_id for e in examples if e.question_id})})
        if settings.backend == "encoder":
            with one_torch_thread():  # small CPU batches: see one_torch_thread (no effect on a GPU)
                gate._fit_encoder(examples, labels)
        else:
            gate._fit_linear(examples, labels)
        return gate

    def _fit_linear(self, examples: Sequence[GateExample], labels: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression

        if self.settings.backend == "tfidf":
            from sklearn.feature_extraction.text import TfidfVectorizer

            vectorizer = TfidfVectorizer(**TFIDF_OPTIONS)
            vectorizer.fit([self._joined(e) for e in examples])
            self.state = {"vocabulary": {t: int(i) for t, i in sorted(vectorizer.vocabulary_.items())},
                          "idf": vectorizer.idf_.tolist()}
        features = self._features(examples)
        weight = "balanced" if self.settings.class_weights == "balanced" else None
        head = LogisticRegression(C=self.settings.c, class_weight=weight, max_iter=5000,
                                  random_state=self.settings.seed)
        head.fit(features, labels)
        self.state["coef"] = head.coef_[0].tolist()
        self.state["intercept"] = float(head.intercept_[0])

    def _fit_encoder(self, examples: Sequence[GateExample], labels: np.ndarray) -> None:
        import torch

        tokenizer, model = _load_encoder(self.settings.encoder_path, num_labels=2)
        torch.manual_seed(self.settings.seed)
        order = torch.Generator().manual_seed(self.settings.seed)
        weights = None
        if self.settings.class_weights == "balanced":
            weights = torch.tensor(len(labels) / (2.0 * np.bincount(labels, minlength=2)), dtype=torch.float32)
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.settings.learning_rate)
        pairs = [self._pair(e) for e in examples]
        target = torch.tensor(labels, dtype=torch.long)
        model.train()
        from tqdm.auto import tqdm

        for _ in tqdm(range(self.settings.epochs), desc="encoder gate", unit="epoch", leave=False):
            for batch in torch.randperm(len(pairs), generator=order).split(self.settings.batch_size):
                encoded = self._tokenize(tokenizer, [pairs[i] for i in batch.tolist()])
                logits = model(**encoded).logits
                loss = torch.nn.functional.cross_entropy(logits, target[batch], weight=weights)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.eval()
        self._encoder = (tokenizer, model)

    # -- inference --------------------------------------------------------------------------------------------

    def probabilities(self, examples: Sequence[GateExample]) -> np.ndarray:
        """P(correction required) per example, in [0, 1]."""
        if not examples:
            return np.zeros(0)
        if self.kg_feedback and any(e.feedback is None for e in examples):
            raise ValueError("this gate reads KG feedback, but an example has none")
        if self.settings.backend == "encoder":
            with one_torch_thread():
                return self._encoder_probabilities(examples)
        scores = self._features(examples) @ np.asarray(self.state["coef"]) + self.state["intercept"]
        return 1.0 / (1.0 + np.exp(-np.asarray(scores).ravel()))

    def probability(self, example: GateExample) -> float:
        return float(self.probabilities([example])[0])

    def _features(self, examples: Sequence[GateExample]) -> Any:
        """The design matrix of the linear backends (sparse for ``tfidf``, dense for ``sbert``)."""
        if self.settings.backend == "tfidf":
            from scipy.sparse import csr_matrix, hstack
            from sklearn.feature_extraction.text import TfidfVectorizer

            vectorizer = TfidfVectorizer(**TFIDF_OPTIONS, vocabulary=self.state["vocabulary"])
            vectorizer.idf_ = np.asarray(self.state["idf"])
            matrix = vectorizer.transform([self._joined(e) for e in examples])
            if self.kg_feedback:
                matrix = hstack([matrix, csr_matrix(_feedback_matrix(examples))]).tocsr()
            return matrix
        questions, queries = zip(*(self._inputs(e) for e in examples), strict=True)
        u, v = embed(list(questions)), embed(list(queries))
        parts = [u, v, np.abs(u - v), u * v]
        if self.kg_feedback:
            parts.append(_feedback_matrix(examples))
        return np.hstack(parts).astype(np.float64)

    def _inputs(self, example: GateExample) -> tuple[str, str]:
        return gate_inputs(example.question, example.sparql, self.settings.mask_entities)

    def _pair(self, example: GateExample) -> tuple[str, str]:
        question, query = self._inputs(example)
        if self.kg_feedback:
            query = f"{query} [feedback] {example.feedback.describe()}"
        return question, query

    def _joined(self, example: GateExample) -> str:
        question, query = self._inputs(example)
        return f"{question} || {query}"

    def _tokenize(self, tokenizer: Any, pairs: list[tuple[str, str]]) -> Any:
        first, second = zip(*pairs, strict=True)
        return tokenizer(list(first), list(second), truncation=True, max_length=self.settings.max_length,
                         padding=True, return_tensors="pt")

    def _encoder_probabilities(self, examples: Sequence[GateExample]) -> np.ndarray:
        import torch

        tokenizer, model = self._encoder
        pairs = [self._pair(e) for e in examples]
        out = []
        with torch.no_grad():
            for start in range(0, len(pairs), 32):
                logits = model(**self._tokenize(tokenizer, pairs[start:start + 32])).logits
                out.append(torch.softmax(logits.float(), dim=-1)[:, 1].numpy())
        return np.concatenate(out).astype(np.float64)

    # -- persistence ------------------------------------------------------------------------------------------

    def save(self, folder: str | Path) -> str:
        """Write the gate to ``folder`` (created; files replaced) and return its content digest."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        document = {"format": FORMAT_VERSION, "settings": self.settings.to_dict(), "kg_feedback": self.kg_feedback,
                    "training": self.training,
                    "feedback_features": list(FEATURES) if self.kg_feedback else []}
        if self.settings.backend == "sbert":
            from sparqlab.llm.embeddings import MODEL_NAME

            document["embedder"] = MODEL_NAME
        if self.settings.backend == "encoder":
            tokenizer, model = self._encoder
            model.save_pretrained(folder / "encoder")
            tokenizer.save_pretrained(folder / "encoder")
        else:
            (folder / "weights.json").write_text(json.dumps(self.state, sort_keys=True), encoding="utf-8")
        (folder / GATE_FILE).write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return folder_digest(folder)

    @classmethod
    def load(cls, folder: str | Path) -> Gate:
        """A gate saved by :meth:`save`; a clear error when the folder holds none."""
        folder = Path(folder)
        path = folder / GATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{folder} holds no trained gate ({GATE_FILE} missing); train one with "
                                    "`sparqlab train gate`")
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("format") not in FORMATS:
            raise ValueError(f"{path} has gate format {document.get('format')!r}; this version reads "
                             f"{', '.join(map(str, FORMATS))}")
        saved = dict(document["settings"])
        if document["format"] == 1:
            saved = {**FORMAT_1_SETTINGS, **saved}
        kg_feedback = bool(document.get("kg_feedback", saved.pop("kg_feedback", False)))
        settings = GateSettings.from_dict(saved)
        gate = cls(settings, kg_feedback, training=document.get("training", {}))
        if settings.backend == "encoder":
            gate._encoder = _load_encoder(folder / "encoder")
            gate._encoder[1].eval()
        else:
            gate.state = json.loads((folder / "weights.json").read_text(encoding="utf-8"))
        return gate


TFIDF_OPTIONS = {"ngram_range": (1, 2), "sublinear_tf": True, "lowercase": True,
                 "token_pattern": r"\[E\d+\]|\"E\d+\"|[A-Za-z_][A-Za-z0-9_]*|[{}.;=!<>()]"}
"""Word uni/bigrams; entity placeholders, identifiers (relation labels such as ``starred_actors``) and SPARQL
punctuation are tokens."""


def _feedback_matrix(examples: Sequence[GateExample]) -> np.ndarray:
    return np.array([e.feedback.vector() for e in examples], dtype=np.float64)


def _load_encoder(path: str | Path, num_labels: int | None = None) -> tuple[Any, Any]:
    """Tokenizer and sequence-classification model from a local folder (nothing is downloaded)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    if not Path(path).is_dir():
        raise FileNotFoundError(f"encoder folder {path} does not exist (the encoder gate reads a local "
                                "Hugging Face model folder; nothing is downloaded)")
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # "newly initialized classifier" is expected when fine-tuning
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        options = {"num_labels": num_labels} if num_labels else {}
        model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True, **options)
    finally:
        transformers_logging.set_verbosity(verbosity)
    return tokenizer, model


def folder_digest(folder: str | Path) -> str:
    """sha256 (16 hex digits) over the relative paths and bytes of every file in ``folder`` (hidden files such as
    the artifact's ``.complete`` marker excluded): a trained gate's identity in a run config."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
