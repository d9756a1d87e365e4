# builtin open()
def _kata_probe():
    with open("__TARGET__", "rb") as fh:
        return fh.read(64)
