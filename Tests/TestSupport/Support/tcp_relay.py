"""A plain TCP relay on 127.0.0.1: `tcp_relay.py PORT UPSTREAM_PORT`. Every connection to PORT is joined to
one to UPSTREAM_PORT, bytes copied both ways as they come. Tests stop it with SIGSTOP to make what is behind
it stop answering without closing a connection (a database that hangs), and let it go on with SIGCONT."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main(port, upstream):
    async def joined(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    server = await asyncio.start_server(joined, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
