"""Mutation testing of the checks: `kata mutants verify` (does each mutant's declared check kill it?),
`generate` (every single-edit mutant the operators can make, scored) and their reports. The mutants
themselves, as data, live in ``checker.catalogue.mutants``."""
