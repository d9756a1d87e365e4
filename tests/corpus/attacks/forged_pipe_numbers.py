# The same forgery without /proc: write into every descriptor number, then exit.
import json
import os

MEASURED = __MEASURED__
events = [{"event": "loaded"}]
for cid, measured in MEASURED.items():
    events += [{"event": "start", "step": cid, "timeout": 30},
               {"event": "measured", "check": cid, "measured": measured, "seconds": 0.1}]
events.append({"event": "done"})
data = "".join(json.dumps(e) + "\n" for e in events).encode()
for fd in range(3, 256):
    try:
        os.write(fd, data)
    except OSError:
        pass
os._exit(0)
