# numpy.fromfile
import numpy


def _kata_probe():
    return numpy.fromfile("__TARGET__", dtype=numpy.uint8, count=64).tobytes()
