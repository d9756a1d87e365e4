# mmap over a descriptor from os.open
import mmap
import os


def _kata_probe():
    fd = os.open("__TARGET__", os.O_RDONLY)
    size = os.fstat(fd).st_size or 64
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as view:
        return view[:64]
