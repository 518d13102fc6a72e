"""FAKE emulator executable for EmulatorPool tests (the test copies it into tmp_path).

Mimics the parts of ``emulator -avd NAME -port N [flags] [-snapshot S]`` that digirl uses:

* a console on port N (banner, ``auth <token>`` with the token file, ``avd snapshot load <name>``,
  ``kill``, ``ping``), like the real emulator console;
* an "adbd" on port N+1 answering JSON-line shell requests, announced to the adb server at
  ``ANDROID_ADB_SERVER_PORT`` with ``host:emulator:<N+1>`` as a real emulator does;
* ``sys.boot_completed`` becomes 1 after ``boot_delay`` seconds (or never).

Behaviour comes from the JSON file named by ``FAKE_EMU_CONFIG``: ``{"default": {...}, "<port>": {...}}``
with keys ``boot_delay``, ``never_boot``, ``die_after``, ``snapshots``, ``token_file``. It appends
its argv to ``<config dir>/argv-<port>.jsonl`` and exits by itself after 120 s (no orphans).
"""

import base64
import io
import json
import os
import socket
import sys
import threading
import time

from PIL import Image


def main() -> None:
    argv = sys.argv[1:]
    port = int(argv[argv.index("-port") + 1])
    avd = argv[argv.index("-avd") + 1]
    cfg_path = os.environ["FAKE_EMU_CONFIG"]
    with open(cfg_path) as f:
        allcfg = json.load(f)
    cfg = {**allcfg.get("default", {}), **allcfg.get(str(port), {})}
    with open(os.path.join(os.path.dirname(cfg_path), f"argv-{port}.jsonl"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    t0 = time.monotonic()
    state = {"snapshot_loads": 0, "screen": 0}
    snapshots = set(cfg.get("snapshots", ["digirl_clean"]))
    token = open(cfg["token_file"]).read().strip() if cfg.get("token_file") else None

    def booted() -> bool:
        return not cfg.get("never_boot") and time.monotonic() - t0 >= float(cfg.get("boot_delay", 0.2))

    def shell(cmd: str) -> dict[str, object]:
        parts = cmd.split()
        out, rc = b"", 0
        if cmd == "__state__":
            return {"out": "device"}
        if parts[:1] == ["getprop"] and len(parts) == 2:
            vals = {
                "sys.boot_completed": "1" if booted() else "",
                "digirl.snapshot_loads": str(state["snapshot_loads"]),
                "ro.kernel.qemu.avd_name": avd,
            }
            out = (vals.get(parts[1], "") + "\n").encode()
        elif parts[:1] == ["echo"]:
            out = (" ".join(parts[1:]) + "\n").encode()
        elif parts[:1] == ["screencap"]:
            buf = io.BytesIO()
            Image.new("RGB", (36, 80), (state["screen"] * 40 % 256, 90, 200)).save(buf, "PNG")
            out = buf.getvalue()
        elif parts[:1] == ["input"]:
            state["screen"] += 1
        elif parts[:2] == ["wm", "size"]:
            out = b"Physical size: 36x80\n"
        else:
            out, rc = f"/system/bin/sh: {parts[0] if parts else ''}: not found\n".encode(), 127
        return {"out": base64.b64encode(out).decode(), "err": "", "rc": rc}

    def serve_adbd(srv: socket.socket) -> None:
        while True:
            conn, _ = srv.accept()
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data:
                    conn.sendall(json.dumps(shell(json.loads(data)["cmd"])).encode() + b"\n")

    def console_session(conn: socket.socket) -> None:
        f = conn.makefile("rwb", buffering=0)
        if token is not None:
            f.write(
                b"Android Console: Authentication required\r\nAndroid Console: type 'auth <auth_token>' to authenticate\r\nOK\r\n"
            )
        else:
            f.write(b"Android Console: type 'help' for a list of commands\r\nOK\r\n")
        authed = token is None
        for raw in f:
            line = raw.decode().strip()
            if line.startswith("auth "):
                authed = line[5:] == token
                f.write(
                    b"Android Console: type 'help' for a list of commands\r\nOK\r\n"
                    if authed
                    else b"KO: authentication token does not match\r\n"
                )
            elif not authed:
                f.write(b"KO: authentication required\r\n")
            elif line.startswith("avd snapshot load "):
                name = line[len("avd snapshot load ") :]
                if name in snapshots:
                    state["snapshot_loads"] += 1
                    state["screen"] = 0
                    f.write(b"OK\r\n")
                else:
                    f.write(f"KO: snapshot '{name}' does not exist\r\n".encode())
            elif line == "kill":
                f.write(b"OK: killing emulator, bye bye\r\n")
                conn.close()
                os._exit(0)
            elif line == "ping":
                f.write(b"I am alive!\r\nOK\r\n")
            else:
                f.write(b"KO: unknown command, try 'help'\r\n")

    def serve_console(srv: socket.socket) -> None:
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=console_session, args=(conn,), daemon=True).start()

    console = socket.socket()
    console.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    console.bind(("127.0.0.1", port))
    console.listen(8)
    adbd = socket.socket()
    adbd.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    adbd.bind(("127.0.0.1", port + 1))
    adbd.listen(8)
    threading.Thread(target=serve_console, args=(console,), daemon=True).start()
    threading.Thread(target=serve_adbd, args=(adbd,), daemon=True).start()
    # Announce ourselves to the adb server, as the real emulator does.
    adb_port = int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
    with socket.create_connection(("127.0.0.1", adb_port), timeout=5) as s:
        msg = f"host:emulator:{port + 1}".encode()
        s.sendall(f"{len(msg):04x}".encode() + msg)
    die_after = cfg.get("die_after")
    deadline = t0 + (float(die_after) if die_after is not None else 120.0)
    while time.monotonic() < deadline:
        time.sleep(0.05)
    os._exit(3 if die_after is not None else 0)


if __name__ == "__main__":
    main()
