# Forged result events written straight into the result pipe, found through /proc/self/fd; then exit.
import json
import os

MEASURED = __MEASURED__
events = [{"event": "loaded"}]
for cid, measured in MEASURED.items():
    events += [{"event": "start", "step": cid, "timeout": 30},
               {"event": "measured", "check": cid, "measured": measured, "seconds": 0.1}]
events.append({"event": "done"})
data = "".join(json.dumps(e) + "\n" for e in events).encode()
for name in os.listdir("/proc/self/fd"):
    if int(name) > 2:
        try:
            os.write(int(name), data)
        except OSError:
            pass
os._exit(0)
