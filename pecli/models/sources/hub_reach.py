"""Whether the HuggingFace Hub can be reached, asked before huggingface_hub is: its address and its host's answer.

huggingface_hub retries a request that fails to connect five times, waiting 1 + 2 + 4 + 8 + 8 s between them:
without a network, a download (``--model``) or a listing (``diff --gguf hf://ORG/REPO``) would take 24 s before
its one line. :func:`unreachable` looks the Hub's host up and connects to it first, within
:data:`REACH_SECONDS`.
"""

from __future__ import annotations

import os

#: Seconds to find and connect to the Hub's host before asking it anything.
REACH_SECONDS = 5.0
#: Variables naming a proxy: the Hub is then reached through it, and its host is not tried directly.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def hub_endpoint() -> str:
    """The Hub's address: ``HF_ENDPOINT`` as it is now, else huggingface_hub's default."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def unreachable(endpoint: str) -> str:
    """Why the Hub at ``endpoint`` cannot be reached (its name not found, its port not answering), or "".

    The host is looked up and connected to within :data:`REACH_SECONDS` in all, on a daemon thread
    (``getaddrinfo`` takes no timeout, and a thread still waiting on it must not hold the process at its exit).
    Behind a proxy (:data:`PROXY_VARIABLES`) nothing is tried here: the proxy reaches the Hub or says why not.
    """
    import socket
    import threading
    from urllib.parse import urlsplit

    if any(os.environ.get(name) for name in PROXY_VARIABLES):
        return ""
    seconds = REACH_SECONDS
    address = urlsplit(endpoint)
    try:
        host, port = address.hostname, address.port or (443 if address.scheme == "https" else 80)
    except ValueError as error:  # a port out of range
        return str(error)
    if not host:
        return f"{endpoint!r} names no host"
    outcome: list[str] = []

    def connect() -> None:  # every address the name has, as a client tries them (IPv6, then IPv4, …)
        try:
            with socket.create_connection((host, port), timeout=seconds):
                outcome.append("")
        except OSError as error:
            outcome.append(error.strerror or str(error))

    attempt = threading.Thread(target=connect, name="pecli-hub-reach", daemon=True)
    attempt.start()
    attempt.join(seconds)
    return outcome[0] if outcome else f"no answer within {seconds:g} s"


def quiet_hub(errors) -> None:
    """Silence huggingface_hub's retry warnings and download bars (``errors`` is ``huggingface_hub.utils``): they
    would break the one-line contract of stderr."""
    import warnings

    errors.logging.set_verbosity_error()
    with warnings.catch_warnings():  # HF_HUB_DISABLE_PROGRESS_BARS=0 wins, with a warning
        warnings.simplefilter("ignore")
        errors.disable_progress_bars()
