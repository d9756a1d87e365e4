"""The checks' engine: grading one or many submissions in sandboxed children and judging what they report
(grading, in the parent; worker, in the child), checking one file for a command (checking, request), a
report in every format (formats), and the integrity note that holds a pass back for review (integrity)."""
