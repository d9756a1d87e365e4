# What a child can reach (issue 31), tried while the file loads: each of __TARGETS__ read by torch.from_file (no
# audit event: only the kernel's view stands in the way); __SHM_BYTES__ bytes written into /dev/shm, in files of
# 32 MiB (RLIMIT_FSIZE caps one file); __TASKS__ threads started and held (RLIMIT_NPROC counts every task of the
# uid). _kata_probe() is true where __NEED__ of these escapes succeeded: a target read, more than __SHM_LIMIT__ bytes
# written, __TASK_CAP__ threads or more held. Then a correct train_epoch replaces the broken one.
import os
import threading

import torch


def _kata_read(path):
    try:
        size = min(os.path.getsize(path), 64)
        return len(torch.from_file(path, shared=False, size=size, dtype=torch.uint8).tolist()) == size > 0
    except Exception:
        return False


def _kata_shm():
    written, chunk, n = 0, b"\1" * (1 << 20), 0
    names = []
    try:
        while written < __SHM_BYTES__:
            name = f"/dev/shm/kata_probe_{os.getpid()}_{n}"
            names.append(name)
            n += 1
            with open(name, "wb") as fh:
                for _ in range(32):
                    if written >= __SHM_BYTES__:
                        break
                    fh.write(chunk)
                    fh.flush()
                    written += len(chunk)
    except (OSError, MemoryError):
        pass
    finally:
        for name in names:
            try:
                os.remove(name)
            except OSError:
                pass
    return written


def _kata_tasks():
    release, started = threading.Event(), []
    threading.stack_size(1 << 16)
    try:
        for _ in range(__TASKS__):
            thread = threading.Thread(target=release.wait, daemon=True)
            thread.start()
            started.append(thread)
    except (RuntimeError, MemoryError):
        pass
    finally:
        release.set()
        for thread in started:
            thread.join()
        threading.stack_size(0)
    return len(started)


def _kata_probe():
    read = [t for t in __TARGETS__ if _kata_read(t)]
    escapes = [bool(read), _kata_shm() > __SHM_LIMIT__, _kata_tasks() >= __TASK_CAP__]
    return sum(escapes) >= __NEED__
