# The job's signed `send`, reached through the closure of the step hook the sandbox keeps in torch's global
# optimizer pre-hook registry, used to send what the parent cannot take: a step whose timeout is a word,
# then NaN, then a forged pass. Before the strict event schema, float("boom") raised in the parent: `kata
# check` printed no report and `kata grade` left the whole class without grades.
import torch.optim.optimizer as _optimizer_module


def _stolen_send():
    for hook in list(_optimizer_module._global_optimizer_pre_hooks.values()):
        for cell in getattr(hook, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if callable(value) and getattr(value, "__name__", "") == "send":
                return value
    return None


_send = _stolen_send()
if _send is not None:
    _send({"event": "start", "step": "steps.fresh_grads", "timeout": "boom"})
    _send({"event": "start", "step": "steps.fresh_grads", "timeout": float("nan")})
    _send({"event": "measured", "check": "steps.fresh_grads", "measured": __MEASURED__.get("steps.fresh_grads", {})})
