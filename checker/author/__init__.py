"""The author's and instructor's side: scaffolding a mutant and its kata, docs/katas.md (authoring), `kata
grade` and `kata new --check` (instructing), a story's quoted numbers measured (quotes), `kata mutants ...`
(actions)."""
