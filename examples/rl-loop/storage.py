"""The storage host of the RL loop: a file server over HTTP (``PUT /name`` writes a file
whole, visible only once complete; ``GET /name`` reads it), as a cluster's shared storage
is reached over the network.

    python storage.py --host 198.18.150.5 --port 8100 --dir /tmp/store
"""

from __future__ import annotations

import argparse
import os
import shutil
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHUNK = 1 << 20


def handler(root: Path) -> type[BaseHTTPRequestHandler]:
    class Files(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _path(self) -> Path | None:
            name = self.path.strip("/")
            return root / name if name and "/" not in name and not name.startswith(".") else None

        def do_PUT(self) -> None:  # noqa: N802 - http.server's name
            path = self._path()
            length = int(self.headers.get("Content-Length", "-1"))
            if path is None or length < 0:
                self.send_error(400, "PUT /name with a Content-Length")
                return
            part = path.with_name(path.name + ".part")
            with open(part, "wb") as out:
                left = length
                while left:
                    data = self.rfile.read(min(CHUNK, left))
                    if not data:
                        break
                    out.write(data)
                    left -= len(data)
            if left:
                part.unlink()
                self.send_error(400, f"{left} bytes missing")
                return
            os.replace(part, path)
            self.send_response(201)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            path = self._path()
            if path is None or not path.is_file():
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(path.stat().st_size))
            self.end_headers()
            with open(path, "rb") as source:
                shutil.copyfileobj(source, self.wfile, CHUNK)

        def log_message(self, *args: object) -> None:
            pass

    return Files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    ThreadingHTTPServer((args.host, args.port), handler(root)).serve_forever()


if __name__ == "__main__":
    main()
