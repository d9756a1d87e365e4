# torch.from_file: opened in C++, no audit event
import torch


def _kata_probe():
    return bytes(torch.from_file("__TARGET__", shared=False, size=4, dtype=torch.uint8).tolist())
