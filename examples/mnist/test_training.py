from argparse import Namespace

import torch.optim as optim
from mnist import Net, SyntheticDigits, train
from mnist import test as evaluate  # a function named test would be collected by pytest


def kata_pieces():
    """The project's pieces, as kata's checks take them (also read by `kata project test_training.py`)."""
    return dict(
        model=Net,
        data=SyntheticDigits(600, seed=0),
        eval_data=SyntheticDigits(200, seed=1),
        optimizer=lambda model: optim.Adadelta(model.parameters(), lr=1.0),
        train=train,
        evaluate=evaluate,
        bind={"args": Namespace(log_interval=10, dry_run=False)},
    )


def test_training_loop(kata_loop):
    kata_loop(**kata_pieces())
