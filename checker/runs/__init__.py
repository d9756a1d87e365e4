"""Training runs a learner watches: `kata run`'s lesson runs (training), `kata explore`'s sweeps (explore),
and the decision-boundary frames both draw (boundary). Each run goes through the engine's sandboxed worker."""
