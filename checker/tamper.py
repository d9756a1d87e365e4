"""Notice a loop file that replaces parts of torch, or of the checker, while it is being graded.

The checks observe torch's own machinery (backward, optimizers, modes, grad recording).
A loop that patches that machinery could fake what the checks see, so the child snapshots
the objects below before loading the file and compares them after every check; any change
makes the file ungradable.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

_WATCHED = (
    "torch.Tensor.backward", "torch.Tensor.item", "torch.Tensor.to", "torch.Tensor.detach",
    "torch.Tensor.__torch_function__", "torch.autograd.backward", "torch.autograd.grad",
    "torch.optim.Optimizer.zero_grad", "torch.optim.Optimizer.add_param_group",
    "torch.optim.SGD.step", "torch.optim.Adam.step", "torch.optim.SGD", "torch.optim.Adam",
    "torch.optim.lr_scheduler.LRScheduler.step", "torch.optim.lr_scheduler.StepLR.get_lr",
    "torch.optim.lr_scheduler.CosineAnnealingLR.get_lr",
    "torch.nn.Module.__call__", "torch.nn.Module._call_impl", "torch.nn.Module.train",
    "torch.nn.Module.eval", "torch.nn.Module.parameters", "torch.nn.Module.zero_grad",
    "torch.nn.CrossEntropyLoss.forward", "torch.nn.functional.cross_entropy",
    "torch.nn.utils.clip_grad_norm_", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
    "torch.is_grad_enabled", "torch.set_grad_enabled", "torch.manual_seed", "torch.Generator",
    "torch.utils.data.DataLoader", "torch.utils.data.DataLoader.__iter__", "torch.utils.data.TensorDataset",
    "torch.autograd.graph.saved_tensors_hooks", "torch.cuda.memory_allocated",
    "os.write", "os._exit", "os.fork", "json.dumps", "builtins.float", "builtins.isinstance",
)


def _resolve(path: str) -> Any:
    module_name, *attrs = path.split(".")
    obj: Any = sys.modules.get(module_name) or __import__(module_name)
    for attr in attrs:
        # static lookup: a classmethod or property is compared as stored, not as bound anew
        obj = inspect.getattr_static(obj, attr, None)
        if obj is None:
            return None
    return obj


class TamperGuard:
    """Identity snapshot of the watched torch objects and of every kata module's functions.

    The objects themselves are held, so an id can never be reused by a replacement.
    """

    def __init__(self) -> None:
        self._snapshot = self._take()

    @staticmethod
    def _take() -> dict[str, Any]:
        snap = {path: _resolve(path) for path in _WATCHED}
        for name, module in list(sys.modules.items()):
            if name == "checker" or name.startswith("checker."):
                for attr, value in list(vars(module).items()):
                    if callable(value):
                        snap[f"{name}.{attr}"] = value
        return snap

    def changes(self) -> list[str]:
        now = self._take()
        return sorted(k for k, v in self._snapshot.items() if now.get(k) is not v)
