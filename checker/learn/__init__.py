"""The learner's side: the working folder and progress (session, progress), what the learner commands print
(learning, messages, tables, plots, diffs), practice katas (practice), `kata watch` (watching), the guide."""
