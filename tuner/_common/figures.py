"""A figure made without pyplot, and saved: what every plot of the tuner starts from.

Figures are matplotlib :class:`~matplotlib.figure.Figure` objects made directly, so no backend
or other global state is touched; :func:`save_figure` writes one as PNG, and the tracker logs
one to MLflow as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

DPI = 110


def figure(**kwargs: Any) -> tuple[Figure, Any]:
    """A figure with one axes (``Figure.subplots``), laid out tightly when saved."""
    fig = Figure(layout="tight", dpi=DPI, **kwargs)
    return fig, fig.subplots()


def save_figure(fig: Figure, path: Path) -> Path:
    """``fig`` written to ``path`` as PNG (at :data:`DPI`)."""
    fig.savefig(path, dpi=DPI)
    return path


