"""Matplotlib set-up and saving shared by the report's figures."""

from __future__ import annotations

from pathlib import Path

from xling.io import atomic_path


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend: there is no display on cluster nodes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_and_close(plt, fig, out_png: Path, out_pdf: Path) -> None:
    """Lay ``fig`` out, write it (``save_figure``) and free it."""
    fig.tight_layout()
    save_figure(fig, out_png, out_pdf)
    plt.close(fig)


def save_figure(fig, out_png: Path, out_pdf: Path) -> None:
    """Write ``fig`` as PNG and PDF, each atomically (temp file + rename)."""
    for path, fmt in ((out_png, "png"), (out_pdf, "pdf")):
        with atomic_path(path) as tmp:
            # metadata without dates keeps the files byte-identical across reruns
            meta = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            fig.savefig(tmp, format=fmt, dpi=150, metadata=meta)
