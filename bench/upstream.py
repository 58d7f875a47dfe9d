"""The HTTP API the connected-accounts sides call (bench/system_side.py): a GET answering
`{"text": <its query's text>}` when the request's `Authorization: Bearer` is one of the tokens it
was given, 401 otherwise. Plain asyncio, keep-alive, so its own cost per request stays small; it is not part
of the platform and its CPU is reported apart.

    python bench/upstream.py PORT TOKEN [TOKEN ...]
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlsplit

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
REFUSED = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"


def make_handler(accepted: set[bytes]):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                authorized = False
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"authorization":
                        scheme, _, token = value.strip().partition(b" ")
                        authorized = scheme.lower() == b"bearer" and token in accepted
                    elif name == b"content-length":
                        length = int(value)
                if length:
                    await reader.readexactly(length)
                if not authorized:
                    writer.write(REFUSED)
                    continue
                target = head.split(b" ", 2)[1].decode()
                text = parse_qs(urlsplit(target).query).get("text", [""])[0]
                body = json.dumps({"text": text}).encode()
                writer.write(OK % (len(body), body))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handle


async def main(port: int, tokens: list[str]) -> None:
    handler = make_handler({token.encode() for token in tokens})
    server = await asyncio.start_server(handler, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2:]))
