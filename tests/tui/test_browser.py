"""The browser server in this process: when it says where to point the browser."""

from __future__ import annotations

import socket

from companion.tui.browser import TokenServer, free_port, new_token


def test_the_address_is_announced_once_the_port_listens() -> None:
    port = free_port()
    announced: list[str] = []

    def ready(url: str) -> None:
        # A browser opened on this address at once must find the server there.
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            announced.append(url)
        server.request_exit()

    server = TokenServer("exec true", port=port, token=new_token(), title="t", on_ready=ready)
    server.serve()
    assert announced == [server.url]
