"""Loss curves, and each run's decision boundary, as PNG files (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Sequence

from checker.base.i18n import Message

PALETTE = ((0.184, 0.427, 0.710), (0.878, 0.482, 0.102), (0.227, 0.608, 0.282), (0.659, 0.275, 0.627),
           (0.769, 0.227, 0.227), (0.353, 0.353, 0.353))
"""Class colours, the same as the page `kata explore` writes."""


def boundary_image(boundary):
    """The boundary's cells as an RGB image (rows from the top): the predicted class's colour, paler where the
    model is less sure, grey where its output was not a number."""
    import numpy as np

    from checker.runs.boundary import GRID, decode_cells

    image = np.ones((GRID * GRID, 3))
    for i, cell in enumerate(decode_cells(boundary.cells, boundary.classes)):
        if cell is None:
            image[i] = 0.75
            continue
        cls, top = cell
        sure = (top - 1.0 / boundary.classes) / (1.0 - 1.0 / boundary.classes)
        alpha = 0.12 + 0.68 * sure
        image[i] = 1.0 + (np.array(PALETTE[cls % len(PALETTE)]) - 1.0) * alpha
    return image.reshape(GRID, GRID, 3)


def _draw_boundary(ax, name: str, boundary) -> None:
    b = boundary.bounds
    if boundary.cells is not None:
        ax.imshow(boundary_image(boundary), extent=(b.x0, b.x1, b.y0, b.y1), origin="upper", aspect="auto",
                  interpolation="bilinear")
    else:
        ax.text(0.5, 0.5, "no boundary:\nthe model's output\nwas not one number per class", ha="center",
                va="center", transform=ax.transAxes, fontsize=8)
    points = boundary.points
    if points is not None:
        for xs, ys, ring in ((points.train_x, points.train_y, False), (points.val_x, points.val_y, True)):
            if not xs:
                continue
            colours = [PALETTE[max(c, 0) % len(PALETTE)] for c in ys]
            px, py = [p[0] for p in xs], [p[1] for p in xs]
            if ring:
                ax.scatter(px, py, s=22, facecolors="white", edgecolors=colours, linewidths=1.4)
            else:
                ax.scatter(px, py, s=12, c=colours, edgecolors="white", linewidths=0.4)
    ax.set_xlim(b.x0, b.x1)
    ax.set_ylim(b.y0, b.y1)
    ax.set_title(f"{name}: boundary after training", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def save_loss_plot(runs: Sequence[tuple[str, list[dict]]], path: str, boundaries: Sequence | None = None, *,
                   title: str | None = None, plane: str | None = None) -> None:
    """The loss curves of every run; with ``boundaries`` (one ``checker.runs.training.Boundary`` or None per run),
    a panel per run beside them with its decision boundary over the training (dots) and validation (rings)
    points. ``title``: the settings that made the runs, above everything; ``plane``: what the boundary panels are
    drawn on when the data has more than two features (e.g. its first two principal components), said under
    each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [(name, b) for (name, _), b in zip(runs, boundaries or [], strict=False) if b is not None]
    if shown:
        fig, axes = plt.subplots(1, 1 + len(shown), figsize=(7 + 4 * len(shown), 4),
                                 gridspec_kw={"width_ratios": [7] + [4] * len(shown)})
        ax = axes[0]
        for panel, (name, boundary) in zip(axes[1:], shown, strict=True):
            _draw_boundary(panel, name, boundary)
            if plane:
                panel.set_xlabel(f"on {plane}" if len(plane) < 60 else plane, fontsize=7)
    else:
        fig, ax = plt.subplots(figsize=(7, 4))
    for name, history in runs:
        epochs = [row["epoch"] for row in history]
        ax.plot(epochs, [row.get("train_loss") for row in history], label=f"{name} train")
        if all("val_loss" in row for row in history):
            ax.plot(epochs, [row["val_loss"] for row in history], "--", label=f"{name} val")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.legend()
    ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


PLOT_TITLE = Message(
    en="kata run, track {track}: {optimizer} lr {lr:g}, {epochs} epochs, batch size {batch}, scheduler {scheduler}"
       "{clip}, seed {seed}",
    es="kata run, recorrido {track}: {optimizer} lr {lr:g}, {epochs} épocas, lote de {batch}, planificador "
       "{scheduler}{clip}, semilla {seed}",
)


def plot_title(track: str, settings, lang: str) -> str:
    """The settings that made a plot, as its title (a saved PNG says how to make it again)."""
    clip = f", clip {settings.clip:g}" if getattr(settings, "clip", None) else ""
    return PLOT_TITLE.render(lang, track=track, optimizer=settings.optimizer, lr=settings.lr, epochs=settings.epochs,
                             batch=settings.batch_size, clip=clip, seed=settings.seed,
                             scheduler=settings.scheduler or ("ninguno" if lang == "es" else "none"))
