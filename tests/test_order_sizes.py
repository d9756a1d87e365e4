"""loader.order's contract at other set sizes (checker.checks.loader.size_orders), measured in this process on
hand-made loops: the same seed gives one order at every size; another seed and a second epoch must change it only
where an epoch gave enough rows for a coincidence to be out of reach (an epoch with no rows has no order)."""

from dataclasses import replace
from types import SimpleNamespace

import pytest

from checker.checks.loader import ORDER_ROWS, size_orders
from checker.setting.coverage import Case
from checker.setting.draws import Draw


def _loop(*, drop_last: bool = False, seeded_below: int | None = None):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    def make_loader(X, y, batch_size=32, seed=0):
        unseeded = seeded_below is not None and len(y) > seeded_below
        generator = None if unseeded else torch.Generator().manual_seed(seed)
        return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=generator,
                          drop_last=drop_last)

    return SimpleNamespace(make_loader=make_loader)


@pytest.fixture
def sized_lab(lab):
    """The session's lab with a draw whose only other set sizes are 25 rows in batches of 32 (under one batch)
    and 500 rows in batches of 50."""
    draw = Draw.fresh(lab.track)
    cases = (Case("loader.rows", 25, (("b", 32),)), Case("loader.rows", 500, (("b", 50),)))
    return SimpleNamespace(draw=replace(draw, coverage=replace(draw.coverage, loader_rows=cases)), data=lab.data)


def test_a_loader_that_drops_every_row_of_a_small_set_is_not_said_to_ignore_its_seed(sized_lab):
    small, big = size_orders(_loop(drop_last=True), sized_lab)
    assert small["same"] and small["seed_matters"] is None and small["reshuffles"] is None  # no rows: no order
    assert big["same"] and big["seed_matters"] and big["reshuffles"]
    assert 25 >= ORDER_ROWS  # the size alone would have asked for a new order


def test_an_unseeded_order_past_some_size_is_seen_at_that_size(sized_lab):
    small, big = size_orders(_loop(seeded_below=100), sized_lab)
    assert small["same"] and small["seed_matters"] and small["reshuffles"]
    assert not big["same"]
