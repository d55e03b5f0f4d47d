"""--confirm test program: never finishes on its own; it also starts a child in its process group."""

import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(f"child pid {child.pid}", flush=True)
time.sleep(120)
