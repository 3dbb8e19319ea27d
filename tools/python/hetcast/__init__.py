"""hetcast in a Python program: a cluster member in this process, and jobs that disseminate
buffers (bytes, NumPy arrays, any buffer) and files to many hosts (docs/embedding.md)."""
from ._hetcast import (ClusterCa, Delivery, Error, Identity, InputError, Job, Network, Node,
                       __version__)

__all__ = ["ClusterCa", "Delivery", "Error", "Identity", "InputError", "Job", "Network", "Node",
           "__version__"]


def _blocking(start):
    def run(self, *args, **kwargs):
        return start(self, *args, **kwargs).wait()
    run.__doc__ = f"{start.__name__}(...).wait(): the job's report (a dict, docs/json.md)."
    return run


Node.broadcast = _blocking(Node.start_broadcast)
Node.multicast = _blocking(Node.start_multicast)
Node.push = _blocking(Node.start_push)
Node.exchange = _blocking(Node.start_exchange)
