"""The catalogue as data: katas (katas), mutants and the operators that apply them (mutants, operators),
proofs of kills and drafts (proofs, drafts)."""
