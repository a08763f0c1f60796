"""Cluster planning for the workflow: rule resources for the SLURM profile (``resources``) and
the compute budget of the paper run (``budget``). The throw-away one-machine SLURM and the runner
that submits a workflow slice through the profile, used only by the tests, live in
``tests/support/`` (``local_slurm``, ``slurm_run``)."""
