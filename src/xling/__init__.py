"""Reproduction of Wu, Conneau et al. 2020 and Liu et al. 2020 as a Snakemake pipeline."""

__version__ = "0.1.0"
