"""The trusted runner: kata's reference-free checks on a project's own training loop, in the project's process.

A project hands over its pieces (a model factory, its data, an optimizer factory, its per-epoch training
function and, optionally, its evaluation function, a loader factory, a scheduler factory, a clip norm and a
device); :func:`checker.project.runner.check_loop` calls the project's functions by binding their parameters by
name, observes them through the model, the optimizer and the data it hands in (hooks, step hooks, a wrapped
loader, a watched ``backward()``), and returns a :class:`checker.project.report.Report` whose failures name the
file and line of the project's code where each fault was observed. No sandbox: the owner trusts their code.
"""
