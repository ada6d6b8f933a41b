"""Loaded by every Python process started with this folder on PYTHONPATH (tests/test_privacy.py):
an audit hook that records, one line of JSON each, into $HEARTH_AUDIT_LOG:

- a fork without exec (`os.fork`; multiprocessing's fork and forkserver start that way; subprocess
  forks and execs in C and raises no such event),
- a connection, datagram or name lookup for anything but loopback (`socket.connect`,
  `socket.sendto`, `socket.getaddrinfo`): on a machine without network a sender fails at the name
  lookup, before it connects, so lookups count too.

A test that asks for multicast DNS on purpose (`hearth wyoming --zeroconf`) sets
HEARTH_AUDIT_ALLOW_MDNS=1 for itself: datagrams to the mDNS group (224.0.0.251 or ff02::fb, port
5353, which no router forwards) are then not recorded. The log is opened once here and written with
os.write, which raises no audit event of its own; each record names the test running (pytest's
PYTEST_CURRENT_TEST), if any.
"""

import contextlib
import ipaddress
import json
import os
import socket
import sys

_PATH = os.environ.get("HEARTH_AUDIT_LOG")
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_MDNS = {("224.0.0.251", 5353), ("ff02::fb", 5353)}


def _is_local(host):
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).strip("[]").split("%")[0]
    if host.lower() in _LOCAL_NAMES or host == "":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name other than localhost: a lookup that may leave the machine
    return address.is_loopback or address.is_unspecified


def _hook(event, args):
    if event == "os.fork":
        _record({"event": event})
    elif event in ("socket.connect", "socket.sendto"):
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) not in (socket.AF_INET, socket.AF_INET6) or _is_local(address[0]):
            return
        if os.environ.get("HEARTH_AUDIT_ALLOW_MDNS") and (str(address[0]).split("%")[0], address[1]) in _MDNS:
            return
        _record({"event": event, "address": [str(a) for a in address[:2]]})
    elif event == "socket.getaddrinfo" and not _is_local(args[0]):
        _record({"event": event, "host": str(args[0]), "port": str(args[1])})


def _record(what):
    what.update(pid=os.getpid(), argv=sys.argv[:3], test=os.environ.get("PYTEST_CURRENT_TEST"))
    with contextlib.suppress(OSError):
        os.write(_FD, (json.dumps(what) + "\n").encode())


if _PATH:
    _FD = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sys.addaudithook(_hook)


# A process started with HEARTH_TEST_WITHOUT="torch,onnx,..." runs as where those packages are not
# installed (the runtime-only `pip install hearth-tts`): importing one fails, and its package
# metadata is absent, which is how Hearth asks whether a converter is there.
_WITHOUT = frozenset(filter(None, os.environ.get("HEARTH_TEST_WITHOUT", "").split(",")))


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _WITHOUT:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by HEARTH_TEST_WITHOUT)", name=name)
        return None


def _hide_distributions():
    import importlib.metadata as metadata

    real_distribution = metadata.distribution

    def distribution(name):
        if name.lower().replace("_", "-") in _WITHOUT:
            raise metadata.PackageNotFoundError(name)
        return real_distribution(name)

    def version(name):
        return distribution(name).version

    metadata.distribution, metadata.version = distribution, version


if _WITHOUT:
    sys.meta_path.insert(0, _NotInstalled())
    _hide_distributions()
