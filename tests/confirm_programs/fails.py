"""--confirm test program: fails after printing a few lines."""

import warp as wp  # noqa: F401 - imported for the recorder to see, then the program fails

for i in range(30):
    print(f"step {i}")
raise RuntimeError("boom from the program")
