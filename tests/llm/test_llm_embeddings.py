"""Offline sentence embeddings from the bundled all-MiniLM-L6-v2 weights."""

import numpy as np

from sparqlab.llm.embeddings import embed


def test_embeddings_are_unit_vectors_that_rank_by_meaning():
    vectors = embed(["film director", "movie director", "banana"], batch_size=2)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2
    assert np.allclose(embed("film director")[0], vectors[0], atol=1e-5), "one string is one row, same vector"
