"""Notice a loop file that replaces parts of torch, or of the checker, while it is being graded.

The checks observe torch's own machinery (backward, optimizers, modes, grad recording).
A loop that patches that machinery could fake what the checks see, so the child snapshots,
before loading the file, by identity:
- the watched names below (module attributes: torch's entry points, and one level below them,
  the clocks, json's encoder, builtins);
- every attribute of the watched classes, of their torch bases, and of every class in a kata module
  (a method added to a subclass that shadows its base's is a change too);
- the functions and registry entries of every kata module (each ``Check`` in ``REGISTRY``);
- torch's global hook registries (optimizer step hooks, module forward/backward hooks), which must
  stay as they were, and torch's global function/dispatch mode stacks.

``TamperGuard().changes()`` compares all of it and lists what differs: cheap enough (well under a
millisecond) for the instruments to call at every optimizer step, and for the reporter to call
before every event it sends.
"""

from __future__ import annotations

import builtins
import inspect
import sys
from itertools import chain
from operator import is_, methodcaller
from time import monotonic
from types import MappingProxyType
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
    # one level below: what the checker's own figures and messages go through
    "torch.autograd._engine_run_backward", "torch.autograd.graph._engine_run_backward",
    "torch.autograd.graph.Node", "torch.nn.functional.dropout", "torch.nn.Module.state_dict",
    "torch.nn.Module.load_state_dict", "torch.nn.Module.named_parameters", "torch.optim.Optimizer.step",
    "torch.optim.Optimizer.state_dict", "torch.random.manual_seed", "torch.random.get_rng_state",
    "torch.random.set_rng_state", "torch.get_rng_state", "torch.set_rng_state",
    "time.perf_counter", "time.monotonic", "time.time", "time.process_time", "time.sleep",
    "json.dumps", "json.loads", "json.JSONEncoder", "json.encoder.c_make_encoder",
    "json.encoder.encode_basestring_ascii", "json.encoder.JSONEncoder",
    "math.isfinite", "math.isnan", "math.sqrt", "math.fsum", "statistics.median", "statistics.mean",
    "os.write", "os._exit", "os.fork", "os.getpid", "hmac.compare_digest", "hashlib.blake2b",
    "traceback.format_exception", "traceback.extract_tb", "gc.collect", "weakref.ref", "weakref.finalize",
)
_WATCHED_CLASSES = (
    "torch.Tensor", "torch.nn.Module", "torch.nn.Linear", "torch.nn.Sequential", "torch.nn.Dropout",
    "torch.nn.CrossEntropyLoss", "torch.optim.Optimizer", "torch.optim.SGD", "torch.optim.Adam",
    "torch.optim.lr_scheduler.LRScheduler", "torch.optim.lr_scheduler.StepLR",
    "torch.optim.lr_scheduler.CosineAnnealingLR", "torch.utils.data.DataLoader",
    "torch.utils.data.TensorDataset", "torch.utils.data.Dataset", "torch.autograd.graph.saved_tensors_hooks",
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "json.JSONEncoder", "json.JSONDecoder",
)
_HOOK_REGISTRIES = (
    "torch.optim.optimizer._global_optimizer_pre_hooks", "torch.optim.optimizer._global_optimizer_post_hooks",
    "torch.nn.modules.module._global_backward_pre_hooks", "torch.nn.modules.module._global_backward_hooks",
    "torch.nn.modules.module._global_forward_pre_hooks", "torch.nn.modules.module._global_forward_hooks",
    "torch.nn.modules.module._global_forward_hooks_always_called",
    "torch.nn.modules.module._global_forward_hooks_with_kwargs",
    "torch.nn.modules.module._global_buffer_registration_hooks",
    "torch.nn.modules.module._global_module_registration_hooks",
    "torch.nn.modules.module._global_parameter_registration_hooks",
)
_CACHES = frozenset({"__slotnames__", "_abc_impl", "__abstractmethods__", "__parameters__"})
"""Class attributes the standard library sets on classes by itself (copy, abc, typing): not a patch."""
_MISSING = object()
_values = methodcaller("values")


def _resolve(path: str) -> Any:
    module_name, *attrs = path.split(".")
    obj: Any = sys.modules.get(module_name) or __import__(module_name)
    for i, attr in enumerate(attrs):
        # static lookup: a classmethod or property is compared as stored, not as bound anew
        nxt = inspect.getattr_static(obj, attr, _MISSING)
        if nxt is _MISSING:  # a submodule not imported as an attribute yet
            nxt = sys.modules.get(".".join([module_name, *attrs[: i + 1]]), _MISSING)
        if nxt is _MISSING:
            return None
        obj = nxt
    return obj


def _container(path: str) -> tuple[Any, str] | None:
    """The namespace (a module's dict, or a class's mapping) that holds the last name of ``path``."""
    head, _, name = path.rpartition(".")
    owner = _resolve(head)
    if owner is None:
        return None
    try:
        mapping = vars(owner)
    except TypeError:
        return None
    return mapping, name


def _is_kata(name: str) -> bool:
    return name == "checker" or name.startswith("checker.")


class _Tier:
    """One set of snapshots: named objects, whole namespaces (classes, registered objects), registries."""

    def __init__(self, names: list[tuple[str, Any, str, Any]], objects: list[Any],
                 registries: list[tuple[str, Any, str, Any, int]]) -> None:
        self.names = names
        # flat lists, so that the common case (nothing changed) is compared in C
        self.flat = {
            kind: ([m for _, m, _, _ in names if type(m) is kind], [k for _, m, k, _ in names if type(m) is kind],
                   [v for _, m, _, v in names if type(m) is kind])
            for kind in (dict, MappingProxyType)
        }
        self.spaces: list[tuple[str, Any, Any, list, list]] = []
        for obj in objects:
            try:
                mapping = vars(obj)
            except TypeError:
                continue
            if isinstance(obj, type):
                label = f"{obj.__module__}.{obj.__qualname__}"
            else:
                label = f"{type(obj).__module__}.{type(obj).__qualname__} {getattr(obj, 'id', '')}".rstrip()
            self.spaces.append((label, obj, mapping, list(mapping), list(mapping.values())))
        self.registries = registries
        self.refresh()

    def refresh(self) -> None:
        self.proxies = [mapping for _, _, mapping, _, _ in self.spaces]
        self.sizes = [len(values) for _, _, _, _, values in self.spaces]
        self.values = [values for _, _, _, _, values in self.spaces]

    def changes(self, changed: list[str]) -> None:
        for kind, (mappings, keys, values) in self.flat.items():
            if not all(map(is_, map(kind.get, mappings, keys), values)):
                for i, (where, key, value) in enumerate(zip(mappings, keys, values, strict=True)):
                    now = where.get(key, _MISSING)
                    if now is value:
                        continue
                    if _rewrapped(None, key, value, now):
                        values[i] = now
                        continue
                    changed.append(next(label for label, w, k, _ in self.names if w is where and k == key))
        for label, mapping, key, registry, size in self.registries:
            if mapping.get(key) is not registry or len(registry) != size:
                changed.append(label)
        if list(map(len, self.proxies)) != self.sizes or not all(
                map(is_, chain.from_iterable(map(_values, self.proxies)), chain.from_iterable(self.values))):
            for label, owner, mapping, keys, values in self.spaces:
                if len(mapping) == len(values) and all(map(is_, mapping.values(), values)):
                    continue
                changed.extend(_space_changes(label, owner, mapping, keys, values))
            self.refresh()


_WRAPPER_CODE: list = []


def _torch_wrapper_code():
    """The code of the wrapper torch's Optimizer puts around a class's ``step`` the first time one of its
    instances is built (``Optimizer._patch_step_function``): a change torch makes, not a patch."""
    if not _WRAPPER_CODE:
        optim = sys.modules.get("torch.optim.optimizer")
        factory = getattr(getattr(optim, "Optimizer", None), "profile_hook_step", None)
        code = getattr(factory, "__code__", None)
        _WRAPPER_CODE.append(next((c for c in getattr(code, "co_consts", ()) if getattr(c, "co_name", "") == "wrapper"),
                                  None))
    return _WRAPPER_CODE[0]


_DISABLE_CODE: list = []


def _torch_disable_code():
    """The code of the wrapper ``torch._disable_dynamo`` puts around a function (building one imports nothing)."""
    if not _DISABLE_CODE:
        compile_module = sys.modules.get("torch._compile")
        disable = getattr(compile_module, "_disable_dynamo", None)
        _DISABLE_CODE.append(getattr(disable(lambda: None), "__code__", None) if callable(disable) else None)
    return _DISABLE_CODE[0]


def _dynamo_wrapped(key: str, old: Any, new: Any) -> bool:
    """Whether ``new`` is what importing torch._dynamo makes of ``torch.manual_seed``: torch's own
    ``_disable_dynamo`` wrapper around the very function that was there. A child forked before torch._dynamo was
    imported (the zygote's early twin) sees that change when something in it imports torch._dynamo later."""
    code = getattr(new, "__code__", None)
    if key != "manual_seed" or old is _MISSING or code is None or code is not _torch_disable_code():
        return False
    cells = dict(zip(code.co_freevars, getattr(new, "__closure__", None) or (), strict=False))
    cell = cells.get("fn")
    return cell is not None and cell.cell_contents is old and "torch._dynamo" in sys.modules


def _rewrapped(owner: Any, key: str, old: Any, new: Any) -> bool:
    """Whether ``new`` is torch's own wrapper around what ``owner.key`` was (or inherited): the step wrapper an
    optimizer class gets when its first instance is built, or torch._dynamo's around ``torch.manual_seed``."""
    if _dynamo_wrapped(key, old, new):
        return True
    if key != "step" or getattr(new, "hooked", None) is not True or getattr(new, "__code__", None) is None:
        return False
    if new.__code__ is not _torch_wrapper_code():
        return False
    inner = getattr(new, "__wrapped__", _MISSING)
    if old is not _MISSING:
        return inner is old
    for base in getattr(owner, "__mro__", ())[1:]:
        found = vars(base).get(key, _MISSING)
        if found is not _MISSING:
            return inner is found or inner is getattr(found, "__wrapped__", _MISSING)
    return False


def _space_changes(label: str, owner: Any, mapping, keys: list, values: list) -> list[str]:
    before = dict(zip(keys, values, strict=True))
    found = []
    for key in set(before) | set(mapping):
        if key in _CACHES:
            continue
        old, new = before.get(key, _MISSING), mapping.get(key, _MISSING)
        if new is not old and not _rewrapped(owner, key, old, new):
            found.append(f"{label}.{key}")
    if not found:  # only caches and torch's own wrappers moved: take the namespace as it is now
        keys[:] = list(mapping)
        values[:] = list(mapping.values())
    return found


def _with_bases(classes: dict[int, Any]) -> dict[int, Any]:
    """Add the bases of each class (a method patched on a base reaches every subclass)."""
    for cls in list(classes.values()):
        if isinstance(cls, type):
            for base in cls.__mro__[1:]:
                if base is not object and base.__module__ != "builtins":
                    classes.setdefault(id(base), base)
    return classes


_Named = tuple[str, Any, str, Any]  # (label, namespace, key, object)
_Registry = tuple[str, Any, str, Any, int]  # (label, namespace, key, registry, its length)


def _hot_names() -> tuple[list[_Named], dict[int, Any]]:
    """The watched names as they are now, and the watched classes (those names that are classes too)."""
    hot_names: list[_Named] = []
    hot_classes: dict[int, Any] = {}
    for path in _WATCHED:
        where = _container(path)
        if where is None:
            continue
        mapping, key = where
        value = mapping.get(key, _MISSING)
        if value is _MISSING:
            continue
        hot_names.append((path, mapping, key, value))
        if isinstance(value, type):
            hot_classes[id(value)] = value
    for path in _WATCHED_CLASSES:
        cls = _resolve(path)
        if isinstance(cls, type):
            hot_classes[id(cls)] = cls
    return hot_names, hot_classes


def _hot_registries() -> list[_Registry]:
    """The hook registries that exist, each with its length now."""
    registries: list[_Registry] = []
    for path in _HOOK_REGISTRIES:
        where = _container(path)
        if where is None:
            continue
        mapping, key = where
        registry = mapping.get(key)
        if registry is not None:
            registries.append((path, mapping, key, registry, len(registry)))
    return registries


def _cold_snapshot() -> tuple[list[_Named], dict[int, Any], list[_Registry]]:
    """The cold tier's names (builtins, every kata module's callables), objects and registries."""
    cold_names: list[_Named] = [(f"builtins.{key}", vars(builtins), key, value)
                                for key, value in list(vars(builtins).items())
                                if not key.startswith("_") and callable(value)]
    cold_objects: dict[int, Any] = {}
    cold_registries: list[_Registry] = []
    for name, module in list(sys.modules.items()):
        if not _is_kata(name) or module is None:
            continue
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            if callable(value) and not attr.startswith("__"):
                cold_names.append((f"{name}.{attr}", namespace, attr, value))
                if isinstance(value, type) and _is_kata(getattr(value, "__module__", "") or ""):
                    cold_objects[id(value)] = value
            if isinstance(value, dict) and attr.isupper():  # a registry: REGISTRY, ...
                cold_registries.append((f"{name}.{attr}", namespace, attr, value, len(value)))
                for entry in list(value.values()):
                    if hasattr(entry, "__dict__") and not isinstance(entry, type):
                        cold_objects[id(entry)] = entry  # a registered object: its fields are watched too
    return cold_names, cold_objects, cold_registries


class TamperGuard:
    """Identity snapshot of what the checks rely on; ``changes()`` lists what no longer matches.

    Two tiers: the hot one (the watched names: torch's entry points, the clocks, json; the hook
    registries; the mode stacks) is compared at every call; the cold one (every attribute of the watched
    classes and their bases, builtins, every kata module's functions, classes and registered checks) at
    least every ``COLD_EVERY`` seconds and whenever ``full=True`` (the reporter asks for it before every
    event it sends).
    The objects themselves are held, so an id can never be reused by a replacement.
    """

    COLD_EVERY = 0.2

    def __init__(self) -> None:
        hot_names, hot_classes = _hot_names()
        registries = _hot_registries()
        cold_names, cold_objects, cold_registries = _cold_snapshot()
        spaces = {**_with_bases(hot_classes), **_with_bases(cold_objects)}
        self._hot = _Tier(hot_names, [], registries)
        self._cold = _Tier(cold_names, list(spaces.values()), cold_registries)
        self._modes = self._mode_depths()
        self._cold_at = monotonic()

    @staticmethod
    def _mode_depths() -> tuple[int, int]:
        torch = sys.modules.get("torch")
        if torch is None:
            return (0, 0)
        c = torch._C
        f = getattr(c, "_len_torch_function_stack", None)
        d = getattr(c, "_len_torch_dispatch_stack", None)
        return (f() if f else 0, d() if d else 0)

    def changes(self, full: bool = False) -> list[str]:
        changed: list[str] = []
        self._hot.changes(changed)
        now = monotonic()
        if full or now - self._cold_at >= self.COLD_EVERY:
            self._cold.changes(changed)
            self._cold_at = now
        if self._mode_depths() != self._modes:
            changed.append("torch's global function/dispatch modes")
        return sorted(set(changed)) if changed else changed
