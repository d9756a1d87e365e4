"""Loss curves as PNG files (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Sequence


def save_loss_plot(runs: Sequence[tuple[str, list[dict]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
