# A background process, like a logging service would start: it must neither hang kata nor survive it.
import subprocess

subprocess.Popen(["sleep", "301.7319"])  # an odd length: no other process on the machine has it
