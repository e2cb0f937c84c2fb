"""A learner's single-user server that runs a start-up hook first, as Zero to
JupyterHub's ``lifecycleHooks.postStart`` does in a learner's container.

The hook (a JSON list in ``HUB_POST_START``) runs in ``HUB_IMAGE_WORKDIR``, the
image's working folder, with the learner's ``HOME``. A hook that fails stops the
server from starting, as a failed ``postStart`` kills the container. Then this
process becomes ``jupyterhub-singleuser`` with the arguments the spawner gave.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def main() -> None:
    """Run the hook, then exec the single-user server."""
    hook = json.loads(os.environ["HUB_POST_START"])
    done = subprocess.run(hook, cwd=os.environ["HUB_IMAGE_WORKDIR"], check=False)
    if done.returncode:
        sys.exit(f"postStart hook failed with exit code {done.returncode}")
    os.execv(sys.executable, [sys.executable, "-m", "jupyterhub.singleuser", *sys.argv[1:]])


if __name__ == "__main__":
    main()
