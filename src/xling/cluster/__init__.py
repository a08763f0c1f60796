"""Cluster execution helpers: a throw-away one-machine SLURM for tests and CI, and a runner
that submits (a slice of) the workflow through the project's SLURM profile."""
