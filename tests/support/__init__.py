"""Code that only the tests, the benchmark and scripts/slurm_cluster.sh use, kept out of the
shipped package ``xling``. Imported as ``support.<module>`` with ``tests/`` on sys.path
(tests/conftest.py, bench/bench_pretrain.py and scripts/slurm_cluster.sh put it there).

* ``toy_data``: tiny binarised corpora and the ``TINY_MODEL``/``TINY_PRETRAIN`` configs;
* ``inprocess``: fairseq's task/model/criterion/trainer built inside this process;
* ``local_slurm``: a throw-away one-machine SLURM (``python -m support.local_slurm``);
* ``slurm_run``: runs Snakemake through the SLURM profile and reads back the jobs it submitted;
* ``slice``: the demo's slice run once per session for the end-to-end tests, and hard-link copies of it;
* ``archive``: a bundle's members read and written back, to tamper with it in a test;
* ``xdist_groups``: pytest-xdist's workers get whole groups of tests (tests/conftest.py assigns them);
* ``repo_module``: a checkout's script (``bench/``, ``scripts/``) imported by its path;
* ``shared_data``: where ``../shared/data`` (real ELTeC, FreeDict...) is, and a skip when it is absent.
"""
