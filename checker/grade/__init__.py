"""Grading: running the checks over submissions and judging them (grading, in the parent; worker, in the
child), checking one file for a command (checking), `kata run`'s training (runs), reports in every format
(formats), a class folder (gradebook), files to review by hand (integrity)."""
