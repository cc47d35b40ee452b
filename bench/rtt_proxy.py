#!/usr/bin/env python3
"""A delaying loopback TCP proxy for bench/ (issue 27: cold resolves bound by round trips).

    bench/rtt_proxy.py --target HOST:PORT --rtt-ms MS --log FILE [--max-seconds S] [--port P]

Listens on 127.0.0.1 (--port, or a free port; printed as the first line of stdout: "PORT <n>";
the bench reuses one port per RTT so that caches keyed by URL stay warm across runs), forwards
every connection to HOST:PORT and delays each chunk by half the round-trip time in each
direction, so a request and its answer cost one added RTT, a new connection one more (its
handshake), as on a distant index. Bandwidth is not limited. Each HTTP request line seen from a
client is logged with its time (JSON lines: {"t": seconds, "line": "GET /simple/torch/ HTTP/1.1",
"conn": n}); bytes in each direction are counted in the last line written on exit.

Bounded and self-stopping: at most 512 connections at once, at most 64 MiB in flight per
direction of a connection (the reader waits), and the process exits after --max-seconds (default
900) or when its stdin closes (the bench holds it open), whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

MAX_CONNECTIONS = 512
MAX_IN_FLIGHT = 64 << 20
METHODS = (b"GET ", b"HEAD ", b"POST ", b"PUT ", b"OPTIONS ", b"PRI ")


class Stats:
    def __init__(self, log_path: str):
        self.log = open(log_path, "w", encoding="utf-8")
        self.t0 = time.monotonic()
        self.connections = 0
        self.up = 0
        self.down = 0
        self.requests = 0

    def request(self, conn: int, line: bytes) -> None:
        self.requests += 1
        text = line.decode("latin-1", "replace").strip()
        self.log.write(json.dumps({"t": round(time.monotonic() - self.t0, 6), "line": text,
                                   "conn": conn}) + "\n")

    def close(self) -> None:
        self.log.write(json.dumps({"summary": True, "connections": self.connections,
                                   "requests": self.requests, "bytes_up": self.up,
                                   "bytes_down": self.down}) + "\n")
        self.log.close()


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float,
               on_chunk) -> None:
    """Copies reader to writer, each chunk delivered `delay` seconds after it was read, in order."""
    queue: asyncio.Queue = asyncio.Queue()
    in_flight = 0
    room = asyncio.Event()
    room.set()

    async def deliver():
        nonlocal in_flight
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            in_flight -= len(data)
            if in_flight < MAX_IN_FLIGHT:
                room.set()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    task = asyncio.create_task(deliver())
    try:
        while True:
            await room.wait()
            data = await reader.read(1 << 16)
            if not data:
                break
            on_chunk(data)
            in_flight += len(data)
            if in_flight >= MAX_IN_FLIGHT:
                room.clear()
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0.0, None))
    try:
        await task
    except (ConnectionError, OSError):
        pass


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--rtt-ms", type=float, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--max-seconds", type=float, default=900)
    ap.add_argument("--port", type=int, default=0, help="listen here (0: a free port)")
    args = ap.parse_args()
    host, port = args.target.rsplit(":", 1)
    half = args.rtt_ms / 2000.0
    stats = Stats(args.log)
    active = 0

    async def handle(client_r, client_w):
        nonlocal active
        if active >= MAX_CONNECTIONS:
            client_w.close()
            return
        active += 1
        stats.connections += 1
        conn = stats.connections
        try:
            # The TCP handshake to a distant server: one round trip before the first byte.
            await asyncio.sleep(2 * half)
            server_r, server_w = await asyncio.open_connection(host, int(port))
        except OSError:
            client_w.close()
            active -= 1
            return

        def up(data: bytes) -> None:
            stats.up += len(data)
            # A request line at the start of a chunk (HTTP/1.1; clients send each request's
            # head in one write).
            for line in data.split(b"\r\n"):
                if line.startswith(METHODS):
                    stats.request(conn, line)

        def down(data: bytes) -> None:
            stats.down += len(data)

        try:
            await asyncio.gather(pump(client_r, server_w, half, up),
                                 pump(server_r, client_w, half, down))
        except asyncio.CancelledError:  # the proxy is stopping
            pass
        for w in (client_w, server_w):
            try:
                w.close()
            except OSError:
                pass
        active -= 1

    server = await asyncio.start_server(handle, "127.0.0.1", args.port, limit=1 << 16)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)

    loop = asyncio.get_running_loop()
    stop = loop.create_future()

    def stdin_closed():
        if not stop.done():
            stop.set_result(None)

    loop.add_reader(sys.stdin.fileno(), lambda: (os.read(sys.stdin.fileno(), 4096) or stdin_closed()))
    loop.call_later(args.max_seconds, stdin_closed)
    await stop
    server.close()
    stats.close()


if __name__ == "__main__":
    asyncio.run(main())
