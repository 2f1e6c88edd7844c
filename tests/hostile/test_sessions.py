"""A frozen initiator must not lock its peer out (issue 25, attack 8).

"A peer whose initiator has made no progress for a bounded time (heartbeats on the session;
default <= 15 s, configurable) releases its gate and ends the session." Cases:
  - real daemons A and B: a bandwidth run from A to B, A frozen with SIGSTOP mid-point; B's
    measurement gate (GET /v1/info queue.measuring) must be free within RELEASE_S, and a
    run from a third daemon C to B must then complete;
  - a session opened by hand (the upgrade answered 101) that then sends nothing at all;
  - fake initiators (HostileInitiatorTests): a session opened by hand, hostile frames, close.
The gate is polled every 0.25 s; POLL_SLACK_S covers the poll interval and scheduling.
Stopped processes get SIGCONT before they are killed.
"""
import json
import os
import re
import signal
import socket
import time
import unittest

from hostile_harness import (Daemon, api_get, api_post_json, check_daemon, daemon_dead_reason, save_found, strict_json,
                             wait_run_end)
from http_corpus import frame

GATE_AFTER_CLOSE_S = 3.0  # a session whose initiator closed its connection frees the gate at once
RELEASE_S = float(os.environ.get("MESHPERF_HOSTILE_RELEASE_S", "15"))
POLL_SLACK_S = 1.0


def measuring(tc, d):
    status, raw = api_get(d, "/v1/info", timeout=3)
    if status != 200:
        return None
    return strict_json(tc, raw, "GET /v1/info")["queue"]["measuring"]


def protocol_version(tc, d):
    """The session protocol version `d` speaks, from the 426 it answers an upgrade without one."""
    with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
        s.sendall(b"GET /v1/session HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: meshperf-session/1\r\n\r\n")
        refusal = s.recv(4096)
    version = re.search(rb"speaks version (\d+)", refusal)
    tc.assertIsNotNone(version, refusal)
    return version.group(1)


def open_session(tc, d, version):
    """A socket upgraded to a session with `d` (101 read)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
    s.sendall(b"GET /v1/session HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: meshperf-session/1\r\n"
              b"X-Meshperf-Protocol: " + version + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    tc.assertIn(b" 101 ", head.split(b"\r\n", 1)[0])
    return s


def hostile_frames():
    """What a fake initiator sends after the 101 (core/frame.hpp: hello = 1, point_stop = 6,
    bye = 9)."""
    spec = b'{"peer":"127.0.0.1:1","tests":["latency"],"sizes":[64]}'
    ofi_hello = frame(1, b'{"spec":{"peer":"127.0.0.1:1","transport":"ofi","tests":["latency"],"sizes":[64],'
                         b'"ofi_provider":"tcp","ofi_op":"tagged"}}')
    ofi_offer = b'{"ofi_providers":["tcp"],"ofi_provider":"tcp"}'
    return [
        ("garbage", b"\xe9t\xe9" * 40),
        ("bad_magic", b"XPF1" + frame(1, b"{}")[4:]),
        ("reserved_nonzero", frame(1, b"{}")[:6] + b"\x00\x01" + frame(1, b"{}")[8:]),
        ("length_over_max", b"MPF1\x00\x01\x00\x00" + (1 << 20 | 1).to_bytes(4, "big")),
        ("length_max_then_cut", b"MPF1\x00\x01\x00\x00" + (1 << 20).to_bytes(4, "big") + b"{" * 1000),
        ("hello_not_json", frame(1, b"not json \xe9t\xe9")),
        ("hello_non_utf8_string", frame(1, b'{"spec":{"peer":"\xe9t\xe9"}}')),
        ("hello_lone_surrogate_escape", frame(1, b'{"spec":{"peer":"\\ud800"}}')),
        ("hello_nested_500000_deep", frame(1, b"[" * 500000 + b"]" * 500000)),
        ("hello_spec_nested_deep", frame(1, b'{"spec":' + b'{"a":' * 100000 + b"1" + b"}" * 100001)),
        ("hello_1MiB_string", frame(1, b'{"spec":{"peer":"' + b"p" * ((1 << 20) - 40) + b'"}}')),
        ("hello_wrong_types", frame(1, b'{"spec":{"peer":5,"sizes":"x","tests":{}},"run_id":7}')),
        ("hello_run_id_not_a_string", frame(1, b'{"spec":' + spec + b',"run_id":{"x":[1]}}')),
        ("hello_spec_not_an_object", frame(1, b'{"spec":[1,2,3]}')),
        ("hello_nul_in_peer", frame(1, b'{"spec":{"peer":"127.0.0.1\\u0000:1","tests":["latency"],"sizes":[64]}}')),
        ("unknown_type_77", frame(77, b"{}")),
        ("point_stop_first", frame(6, b"{}")),
        ("bye_first", frame(9, b"{}")),
        ("error_frame_first", frame(8, b'{"message":"\xe9"}')),
        ("hello_twice", frame(1, b'{"spec":' + spec + b'}') * 2),
        # The libfabric transport's endpoint frames (type 10) after an ofi hello: its offer and addresses
        # (daemon/transports/ofi/ofi_wire.hpp), refused with an error frame, every endpoint closed.
        ("ofi_offer_not_a_list", ofi_hello + frame(10, b'{"ofi_providers":"tcp"}')),
        ("ofi_offer_100000_providers", ofi_hello + frame(10, b'{"ofi_providers":[' + b'"tcp",' * 100000 + b'"tcp"]}')),
        ("ofi_offer_bad_name", ofi_hello + frame(10, b'{"ofi_providers":["tcp"],"ofi_provider":"../../\u0000"}')),
        ("ofi_addresses_not_hex", ofi_hello + frame(10, ofi_offer) + frame(10, b'{"addresses":["zz"]}')),
        ("ofi_addresses_none", ofi_hello + frame(10, ofi_offer) + frame(10, b'{"addresses":[]}')),
        ("ofi_address_1MiB", ofi_hello + frame(10, ofi_offer) + frame(10, b'{"addresses":["' + b"ab" * 400000 + b'"]}')),
        ("ofi_address_wrong_bytes", ofi_hello + frame(10, ofi_offer) + frame(10, b'{"addresses":["0000"]}')),
    ]


def wait_until(pred, limit_s, step=0.25):
    """Polls pred() until it is true or limit_s passes; returns the seconds it took or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if pred():
            return time.monotonic() - t0
        time.sleep(step)
    return None


class FrozenInitiatorTests(unittest.TestCase):
    def setUp(self):
        self.daemons = []
        self.socks = []

    def tearDown(self):
        for s in self.socks:
            s.close()
        for d in self.daemons:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # before the kill: a stopped process is killed only once it runs
            d.cleanup()

    def daemon(self):
        d = Daemon()
        self.daemons.append(d)
        return d

    def assert_gate_released_and_usable(self, b, since, what):
        released = wait_until(lambda: measuring(self, b) == "", RELEASE_S + POLL_SLACK_S)
        print(f"\nhostile: {what}: peer's gate {'free after %.1f s' % (time.monotonic() - since) if released is not None else 'still held after %.0f s' % (RELEASE_S + POLL_SLACK_S)} "
              f"(holder now {measuring(self, b)!r})", flush=True)
        check_daemon(self, b, what)
        self.assertIsNotNone(released, f"{what}: the peer still holds its measurement gate "
                                       f"{RELEASE_S + POLL_SLACK_S:.0f} s later ({measuring(self, b)!r})")
        c = self.daemon()
        spec = json.dumps({"peer": b.address, "tests": ["latency"], "sizes": [64], "max_point_s": 0.1,
                           "warmup_s": 0.01}).encode()
        status, raw = api_post_json(c, "/v1/runs", spec)
        self.assertEqual(status, 202, raw)
        status, raw = wait_run_end(c, strict_json(self, raw, "POST /v1/runs")["id"], 60)
        doc = strict_json(self, raw, "the run from C")
        self.assertEqual(doc["state"], "completed", f"{what}: a run from another daemon to the peer: {doc.get('error')}")
        check_daemon(self, b, f"{what}: after a run from another daemon")

    def test_initiator_frozen_mid_point(self):
        a, b = self.daemon(), self.daemon()
        spec = json.dumps({"peer": b.address, "tests": ["bandwidth"], "sizes": [65536], "duration_s": 30,
                           "warmup_s": 0.1}).encode()
        status, raw = api_post_json(a, "/v1/runs", spec)
        self.assertEqual(status, 202, raw)
        held = wait_until(lambda: (measuring(self, b) or "").startswith("session from"), 20, step=0.1)
        self.assertIsNotNone(held, f"the peer never took the session: {measuring(self, b)!r}")
        time.sleep(1.0)  # inside the 30 s point: its end must not be what frees the gate
        a.proc.send_signal(signal.SIGSTOP)
        frozen_at = time.monotonic()
        self.assert_gate_released_and_usable(b, frozen_at, "initiator frozen (SIGSTOP) mid-point")

    def test_session_opened_then_silent(self):
        b = self.daemon()
        s = open_session(self, b, protocol_version(self, b))
        self.socks.append(s)
        opened_at = time.monotonic()
        self.assertTrue((measuring(self, b) or "").startswith("session from"))
        self.assert_gate_released_and_usable(b, opened_at, "session opened by hand, then silent")



class HostileInitiatorTests(unittest.TestCase):
    """A fake initiator opens a session (101) and sends hostile frames, then closes: the peer
    must stay up, answer (if it does) with a frame of valid UTF-8 JSON, and free its gate
    within GATE_AFTER_CLOSE_S of the close."""

    def test_hostile_frames(self):
        b = Daemon()
        try:
            version = protocol_version(self, b)
            for name, data in hostile_frames():
                with self.subTest(frames=name):
                    s = open_session(self, b, version)
                    answer = b""
                    try:
                        s.sendall(data)
                        s.settimeout(1.0)
                        while len(answer) < 65536:
                            chunk = s.recv(65536)
                            if not chunk:
                                break
                            answer += chunk
                    except OSError:
                        pass  # the peer closed first, or is still waiting for more: we close now
                    finally:
                        s.close()
                    closed_at = time.monotonic()
                    if daemon_dead_reason(b):
                        save_found("session-frames", name, data)
                        dead = daemon_dead_reason(b)
                        b.cleanup()
                        b = Daemon()
                        self.fail(f"{name}: meshperfd died: {dead}")
                    freed = wait_until(lambda: measuring(self, b) == "", GATE_AFTER_CLOSE_S, step=0.05)
                    kind = answer[4:6] if answer.startswith(b"MPF1") else None
                    print(f"hostile: session frames {name}: the peer answered "
                          f"{'a frame of type %d' % int.from_bytes(kind, 'big') if kind else repr(answer[:40])}; "
                          f"gate {'free %.2f s after the close' % freed if freed is not None else 'still held'}",
                          flush=True)
                    check_daemon(self, b, f"session frames {name}")
                    if kind:  # what the peer answers is itself a frame whose JSON must be valid UTF-8
                        length = int.from_bytes(answer[8:12], "big")
                        if len(answer) >= 12 + length:
                            strict_json(self, answer[12:12 + length], f"{name}: the peer's {kind.hex()} frame")
                    self.assertIsNotNone(freed, f"{name}: the gate is still held {GATE_AFTER_CLOSE_S} s after the "
                                                f"initiator closed ({measuring(self, b)!r})")
        finally:
            b.cleanup()


if __name__ == "__main__":
    unittest.main()
