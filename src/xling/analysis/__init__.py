"""Section 5 analyses: how similar the representations of two (monolingual or bilingual) models are.

- ``align``: iterative normalisation, Procrustes, cosine k-NN (faiss), CSLS word translation,
  precision@1 and Tatoeba-style sentence retrieval (Sections 5.1.1-5.1.3).
- ``cka``: linear centred kernel alignment (Section 5.2).

Everything here is pure numpy/faiss maths on (n x d) arrays whose rows are examples; reading
encoders and writing results live elsewhere.
"""
