# A background process, like a logging service would start: it must neither hang kata nor survive it.
import subprocess

subprocess.Popen(["sleep", "300"])
