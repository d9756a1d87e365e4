# torch.save writes in C++ (no audit event): files outside the private folder, and a classmate overwritten
import torch

for _path in ("__OUT__/kata_leftover.pt", "/tmp/kata_leftover___MARK__.pt", "/var/tmp/kata_leftover___MARK__.pt",
              "/dev/shm/kata_leftover___MARK__.pt", "__CLASSMATE__"):
    try:
        torch.save(torch.zeros(3), _path)
    except BaseException:
        pass
