"""Offline sentence embeddings from the bundled all-MiniLM-L6-v2 weights."""

import numpy as np
import pytest

from sparqlab.llm.embeddings import embed, embed_onnx, onnx_model_file


def test_embeddings_are_unit_vectors_that_rank_by_meaning():
    vectors = embed(["film director", "movie director", "banana"], batch_size=2)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2
    assert np.allclose(embed("film director")[0], vectors[0], atol=1e-5), "one string is one row, same vector"


def test_onnx_runtime_encoders_reproduce_the_torch_vectors(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARQLAB_CACHE", str(tmp_path))
    texts = ["The Matrix: film (1999) directed by Lana Wachowski", "Ridley Scott: person", "banana",
             "a much longer description of a film that has several words in it and pads the batch"]
    reference = embed(texts)
    exported = embed_onnx(texts, "float", batch_size=3)
    assert exported.shape == (4, 384) and exported.dtype == np.float32
    assert np.allclose(exported, reference, atol=1e-4), "the exported float graph is the same model"
    quantised = embed_onnx(texts, "int8")
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    assert (np.sum(quantised * reference, axis=1) > 0.97).all(), "per-channel int8 weights stay close to the float"
    assert onnx_model_file("int8").parent == tmp_path / "models", "exported into the project cache"
    with pytest.raises(ValueError, match="ONNX variant"):
        onnx_model_file("int4")
