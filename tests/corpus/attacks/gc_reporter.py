# Find the child's reporter among every live object, and send forged measurements through it.
import gc
import os

MEASURED = __MEASURED__
for obj in gc.get_objects():
    send = getattr(obj, "send", None)
    if callable(send) and hasattr(obj, "start") and hasattr(obj, "_fd"):
        for cid, measured in MEASURED.items():
            obj.start(cid)
            send({"event": "measured", "check": cid, "measured": measured, "seconds": 0.1})
        send({"event": "done"})
        os._exit(0)
