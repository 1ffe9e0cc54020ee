"""hdsp-agent on JupyterHub: the model gateway the hub runs as a service, and the hub config that wires users'
servers to it (``config.py``)."""
