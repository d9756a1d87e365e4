"""kata: learn to write correct PyTorch training loops by fixing broken ones."""

__version__ = "0.1.0"
