"""Section 5 analyses: how similar the representations of two (monolingual or bilingual) models are.

- ``align``: iterative normalisation (also fitted, to apply to new vectors), Procrustes, cosine
  k-NN (faiss), CSLS word translation, precision@1 and Tatoeba-style sentence retrieval.
- ``cka``: linear centred kernel alignment (Section 5.2).
- ``words`` and ``vec``: Figure 4's word vectors (whole-word embeddings, contextual averages) and
  fastText's text format; ``fastalign``: Figure 5's word alignment; ``transfer``: Figure 5's maps
  and task models above frozen layers.

``align`` and ``cka`` are pure numpy/faiss maths on (n x d) arrays whose rows are examples; ``run``
and ``transfer`` hold the jobs that read encoders and write results.
"""
