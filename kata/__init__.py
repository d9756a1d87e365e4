"""kata's checks on your own PyTorch training loop.

    import kata

    report = kata.check_loop(
        model=Net,                                   # an nn.Module, or a function returning one
        data=train_set,                              # a Dataset, or a tuple of tensors
        optimizer=lambda model: torch.optim.SGD(model.parameters(), lr=0.1),
        train=train,                                 # your per-epoch training function
        evaluate=test,                               # optional: your evaluation function
    )
    report.assert_ok()                               # raises with each fault at its file:line

kata calls your functions by binding their parameters by name (``model``, ``loader``/``train_loader``,
``optimizer``/``opt``, ``loss_fn``/``criterion``, ``device``, ``scheduler``, ``epoch``, ``clip_norm``...; pass
anything else as ``bind={"args": args}``), watches them through the model, the optimizer and the data it hands
in, and runs every check that needs no reference: one step per batch, fresh gradients, a few examples
overfit, training and eval modes, no graph outliving its batch, the scheduler's place, clipping between
backward and step, batches moved to the device, the epoch loss as a mean over examples, same seeds same run,
every example once per epoch in a seeded order. Checks that need a piece you did not pass are listed as not
run, saying what to pass. With pytest, the ``kata_loop`` fixture does the same and fails the test with kata's
message; without it, ``kata project FILE``. See docs/own-loop.md.
"""

from checker import __version__
from checker.project.frames import Place
from checker.project.report import LoopCheckFailed, ProjectInputError, Report, Result, Status
from checker.project.runner import check_loop

__all__ = ["check_loop", "Report", "Result", "Status", "Place", "LoopCheckFailed", "ProjectInputError",
           "__version__"]
