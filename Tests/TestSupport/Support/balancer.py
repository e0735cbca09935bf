#!/usr/bin/env python3
"""A round-robin TCP load balancer for the scale-out tests, on 127.0.0.1: each new client connection
goes to the next backend in turn; a backend that refuses the connection (killed) is skipped for the
next one, as HAProxy's redispatch does. It knows nothing of HTTP: a client's keep-alive connection
stays on one backend, and the client does not choose.

  balancer.py LISTEN_PORT BACKEND_PORT... [--hold-after BYTES --resume-file FILE] [--stats FILE]

--hold-after  once BYTES have come from clients (all connections together), nothing more is forwarded
         upstream until FILE exists (what was read is counted and held): a test acts half-way through an
         upload knowing the client's bytes since are not at any backend, however slow the machine
--stats  write {"connections": {port: count}, "open": {port: count}, "bytes_up": {port: count}}
         whenever a connection opens or closes and every 64 KiB forwarded upstream
"""
import argparse
import asyncio
import os
import threading

import stats_file  # beside this script

lock = threading.Lock()
stats = {"connections": {}, "open": {}, "bytes_up": {}}
args = None
turn = 0


def save():
    stats_file.save(args.stats, stats, lock)


def count(name, port, delta):
    stats[name][str(port)] = stats[name].get(str(port), 0) + delta


async def pipe(reader, writer, port=None):
    """Copies until EOF; upstream (`port` given) counted and, with --hold-after, held."""
    since_save = 0
    try:
        while True:
            data = await reader.read(16384)
            if not data:
                break
            if port is not None:
                count("bytes_up", port, len(data))
                since_save += len(data)
                if since_save >= 65536:
                    since_save = 0
                    save()
                if args.hold_after and sum(stats["bytes_up"].values()) >= args.hold_after:
                    save()
                    while not os.path.exists(args.resume_file):
                        await asyncio.sleep(0.01)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def handle(client_reader, client_writer):
    global turn
    backend = None
    for _ in range(len(args.backends)):
        port = args.backends[turn % len(args.backends)]
        turn += 1
        try:
            backend = await asyncio.open_connection("127.0.0.1", port)
            break
        except OSError:
            continue
    if backend is None:
        client_writer.close()
        return
    backend_reader, backend_writer = backend
    count("connections", port, 1)
    count("open", port, 1)
    save()
    up = asyncio.ensure_future(pipe(client_reader, backend_writer, port))
    down = asyncio.ensure_future(pipe(backend_reader, client_writer))
    # Either side closing ends both (a killed backend resets the client's connection).
    await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
    for task in (up, down):
        task.cancel()
    for writer in (backend_writer, client_writer):
        try:
            writer.close()
        except Exception:
            pass
    count("open", port, -1)
    save()


async def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("backends", type=int, nargs="+")
    parser.add_argument("--hold-after", type=int, default=0)
    parser.add_argument("--resume-file")
    parser.add_argument("--stats")
    args = parser.parse_args()
    save()
    server = await asyncio.start_server(handle, "127.0.0.1", args.port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
