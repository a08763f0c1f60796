"""Liu et al. 2020, "A Study of Cross-Lingual Ability and Language-specific Information in
Multilingual BERT", as jobs of this pipeline: the data of each size (``sample``), the static
baselines on the same BPE text (``static_job``), word retrieval between the source language and
each other one (``retrieval_job``) and token translation by the mean difference shift
(``translation_job``). The maths lives where the Wu et al. stages find it too:
``xling.static``, ``xling.analysis.word_retrieval``, ``xling.analysis.language_shift``."""
