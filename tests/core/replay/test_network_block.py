"""``network_block.blocked``: the replay guard's rules in this process, against a real
listener: a connection is refused unless its host is allowed, on loopback and on an
address of this machine that is not loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from cassette_tui.core.replay.network_block import blocked
from support.listener import tcp_listener


def _outbound_address() -> str | None:
    """This machine's address toward the outside (a UDP connect sends nothing), when it
    is not loopback."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: a route is chosen, no packet leaves
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


@pytest.fixture
def listener() -> Iterator[int]:
    """A real TCP server on every IPv4 address of the machine, accepting in a thread."""
    with tcp_listener("0.0.0.0") as port:
        yield port


def reach(host: str, port: int) -> bytes:
    with socket.create_connection((host, port), timeout=10) as conn:
        return conn.recv(5)


def test_loopback_is_refused_unless_allowed(listener: int) -> None:
    assert reach("127.0.0.1", listener) == b"hello"  # the listener is real
    with blocked(), pytest.raises(ConnectionRefusedError, match="network guard.*allowed-hosts"):
        reach("127.0.0.1", listener)
    with blocked(["127.0.0.1"]):
        assert reach("127.0.0.1", listener) == b"hello"
    with blocked(["localhost"]):  # a name allows the addresses it resolves to
        assert reach("127.0.0.1", listener) == b"hello"
    assert reach("127.0.0.1", listener) == b"hello"  # after the block: the network is back


def test_an_allowed_address_does_not_allow_another(listener: int) -> None:
    """127.0.0.2 is this machine too (the listener answers it), but not the allowed one."""
    assert reach("127.0.0.2", listener) == b"hello"
    with blocked(["127.0.0.1"]):
        assert reach("127.0.0.1", listener) == b"hello"
        with pytest.raises(ConnectionRefusedError):
            reach("127.0.0.2", listener)


def test_an_address_of_this_machine_that_is_not_loopback(listener: int) -> None:
    address = _outbound_address()
    if address is None:
        pytest.skip("this machine has no address outside loopback")
    assert reach(address, listener) == b"hello"
    with blocked(["127.0.0.1"]), pytest.raises(ConnectionRefusedError):
        reach(address, listener)
    with blocked([address]):
        assert reach(address, listener) == b"hello"


def test_name_lookups_are_refused_and_threads_are_covered(listener: int) -> None:
    errors: list[BaseException] = []

    def in_thread() -> None:
        try:
            reach("127.0.0.1", listener)
        except BaseException as exc:  # noqa: BLE001 - carried to the test's thread
            errors.append(exc)

    with blocked():
        with pytest.raises(ConnectionRefusedError, match="name lookup"):
            socket.getaddrinfo("example.invalid", 80)
        thread = threading.Thread(target=in_thread)
        thread.start()
        thread.join()
    assert len(errors) == 1 and isinstance(errors[0], ConnectionRefusedError)
