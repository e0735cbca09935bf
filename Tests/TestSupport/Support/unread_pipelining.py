"""The unread-pipelining attack on a server's download path: CONNECTIONS connections each send pipelined
`GET PATH` requests for SECONDS seconds, as fast as the server reads them, and never read an answer; then
they stay open, still unread, until the server has closed them all or HOLD seconds have passed. Meanwhile the server's resident memory is sampled from
/proc/PID/status. Prints one JSON object:
{"requests": sent in all, "peakRSSKiB": n, "idleRSSKiB": before, "closedByServer": connections the server
closed while unread, "connections": CONNECTIONS}.

usage: unread_pipelining.py PORT PID PATH CONNECTIONS SECONDS HOLD
"""
import json
import select
import socket
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def closed(sock):
    """Whether the server closed (or reset) the connection, read from the socket's TCP state (nothing is read:
    reading the answers would relieve the server)."""
    state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
    return state in (7, 8)  # TCP_CLOSE (reset), TCP_CLOSE_WAIT (the server's FIN)


def main():
    port, pid, path, count, seconds, hold = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    batch = request * 64
    idle = rss_kib(pid)
    peak = idle
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        sockets.append(sock)
    sent = 0
    pending = {sock: 0 for sock in sockets}
    deadline = time.monotonic() + seconds
    last_sample = 0.0
    while time.monotonic() < deadline:
        _, writable, _ = select.select([], sockets, [], 0.05)
        for sock in writable:
            try:
                n = sock.send(batch[pending[sock]:])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                sockets.remove(sock)
                continue
            done = pending[sock] + n
            sent += done // len(request) - pending[sock] // len(request)
            pending[sock] = done % len(batch)
        if time.monotonic() - last_sample > 0.1:
            peak = max(peak, rss_kib(pid))
            last_sample = time.monotonic()
    end = time.monotonic() + hold
    ended = 0
    while time.monotonic() < end and ended < count:
        peak = max(peak, rss_kib(pid))
        ended = sum(1 for sock in pending if closed(sock))
        time.sleep(0.2)
    print(json.dumps({"requests": sent, "peakRSSKiB": peak, "idleRSSKiB": idle, "closedByServer": ended, "connections": count}))


main()
