# "//" in front: the /proc rule once matched "/proc/..." only
def _kata_probe():
    with open("/" + "__TARGET__", "rb") as fh:
        return fh.read(64)
