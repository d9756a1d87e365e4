"""Data-pipeline track: Dataset, workers, BatchNorm and seeding, observed on the CPU."""
