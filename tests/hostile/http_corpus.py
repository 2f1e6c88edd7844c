"""The generated corpus of hostile HTTP requests for the API port, and of hostile replies a
fake peer gives to a session upgrade. Deterministic: hand-written cases plus mutations drawn
from random.Random(SEED). Every case is (name, bytes, Expect).

What each case must get (Expect) follows issue 25's "What must hold":
  - every limit holds for the whole request (headers, trailers, chunk extensions): a request
    whose header or trailer section passes the 16 KiB header limit, or that cannot be
    parsed, is refused with a 4xx (a reset is accepted where the daemon may refuse before
    all of a large input was sent: the kernel then resets instead of delivering the answer);
  - a request the daemon can read is answered, not dropped in silence, and a JSON answer is
    valid UTF-8 (text from outside is made valid UTF-8 before it enters JSON);
  - non-UTF-8 in the path or query, or in X-Meshperf-Protocol: 400.
Cases with Expect() only require the daemon to survive (the check after every case).
"""
import random
import ssl

from hostile_harness import SEED

HEADER_LIMIT = 16 * 1024


class Expect:
    def __init__(self, statuses=None, answer=False, allow_reset=False, sequence=None):
        self.statuses = set(statuses) if statuses is not None else None  # allowed status codes
        self.answer = answer or statuses is not None or sequence is not None  # must get an HTTP answer
        self.allow_reset = allow_reset  # the daemon may refuse before reading all of it
        self.sequence = sequence        # pipelining: the allowed statuses of each answer, in order


ANY = Expect()
ANSWERED = Expect(answer=True)
CLIENT_ERROR = set(range(400, 500))
REFUSED = Expect(statuses=CLIENT_ERROR)
REFUSED_BIG = Expect(statuses=CLIENT_ERROR, allow_reset=True)
BAD_REQUEST = Expect(statuses={400})


def request(method=b"GET", target=b"/healthz", version=b"HTTP/1.1", headers=(), body=b"", eol=b"\r\n", host=True):
    lines = [method + b" " + target + b" " + version]
    if host:
        lines.append(b"Host: 127.0.0.1")
    lines += list(headers)
    return eol.join(lines) + eol + eol + body


def chunked(chunks=(b"hello",), ext=b"", trailers=b"", target=b"/healthz", method=b"GET", size_text=None):
    """A chunked request: `chunks` each with extension `ext`, the last chunk, `trailers`
    (already CRLF-terminated field lines), the final CRLF."""
    body = b""
    for c in chunks:
        body += (size_text if size_text is not None else b"%x" % len(c)) + ext + b"\r\n" + c + b"\r\n"
    body += b"0" + ext + b"\r\n" + trailers + b"\r\n"
    return request(method, target, headers=[b"Transfer-Encoding: chunked"], body=body)


def post_json(body, target=b"/v1/runs", headers=()):
    return request(b"POST", target, headers=[b"Content-Type: application/json",
                                            b"Content-Length: %d" % len(body), *headers], body=body)


def trailer_of(value_size, name=b"X-Trailer"):
    return name + b": " + b"a" * value_size + b"\r\n"


def small_trailers(total, field=100):
    """Trailer fields of `field` value bytes each, `total` bytes in all."""
    line = b"X-T: " + b"b" * field + b"\r\n"
    return line * max(1, total // len(line))


def client_hello():
    """The bytes of a TLS ClientHello, as Python's ssl makes it (random parts differ per run;
    the daemon's answer does not depend on them)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


# Invalid UTF-8 of several kinds: a lone Latin-1 byte, a lone continuation byte, an overlong
# '/', a surrogate, beyond U+10FFFF, a truncated sequence, 0xFF.
BAD_UTF8 = [b"\xe9t\xe9", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xff\xfe"]


def chunked_allowing_reset(cases):
    """A daemon may refuse a chunked request (411) after its head, before reading the body;
    closing with the body unread sends a reset, and the client's kernel then drops the
    answer it had not read yet. So a reset counts as a refusal for these cases."""
    return [(n, b, Expect(e.statuses, e.answer, True, e.sequence)) for n, b, e in cases]


def trailer_cases():
    """Attack 1 and its neighbours: the trailer section against the header limit."""
    return chunked_allowing_reset([
        ("trailer_field_1KiB", chunked(trailers=trailer_of(1024)), ANSWERED),
        ("trailer_field_16KiB_plus_1", chunked(trailers=trailer_of(HEADER_LIMIT + 1)), REFUSED_BIG),
        ("trailer_field_65533", chunked(trailers=trailer_of(65533)), REFUSED_BIG),
        ("trailer_field_65534", chunked(trailers=trailer_of(65534)), REFUSED_BIG),
        ("trailer_field_65535", chunked(trailers=trailer_of(65535)), REFUSED_BIG),
        ("trailer_field_70000", chunked(trailers=trailer_of(70000)), REFUSED_BIG),
        ("trailer_field_1MiB", chunked(trailers=trailer_of(1 << 20)), REFUSED_BIG),
        ("trailer_name_65534", chunked(trailers=b"X" * 65534 + b": v\r\n"), REFUSED_BIG),
        ("trailer_field_65534_on_post_runs", chunked(trailers=trailer_of(65534), target=b"/v1/runs", method=b"POST",
                                                    chunks=(b'{"peer":"127.0.0.1:1"}',)), REFUSED_BIG),
        ("trailer_field_65534_on_404_path", chunked(trailers=trailer_of(65534), target=b"/nowhere"), REFUSED_BIG),
        ("trailer_200_fields_20KiB", chunked(trailers=small_trailers(20 * 1024)), REFUSED_BIG),
        ("trailer_2MiB_small_fields", chunked(trailers=small_trailers(2 << 20)), REFUSED_BIG),
        ("trailer_non_utf8_value", chunked(trailers=b"X-T: \xe9t\xe9\xff\r\n"), ANSWERED),
        ("trailer_nul_in_value", chunked(trailers=b"X-T: a\x00b\r\n"), ANSWERED),
        ("trailer_obs_fold", chunked(trailers=b"X-T: a\r\n folded\r\n"), ANSWERED),
        ("trailer_without_colon", chunked(trailers=b"no colon here\r\n"), ANSWERED),
        ("trailer_content_length", chunked(trailers=b"Content-Length: 99999999999\r\n"), ANSWERED),
    ])


def chunk_cases():
    big_ext = b";e=" + b"x" * (1 << 20)
    return chunked_allowing_reset([
        ("chunk_ext_small", chunked(ext=b";a=b"), ANSWERED),
        ("chunk_ext_quoted", chunked(ext=b';a="q\\"uoted"'), ANSWERED),
        ("chunk_ext_unterminated_quote", chunked(ext=b';a="open'), REFUSED),
        ("chunk_ext_non_utf8", chunked(ext=b";a=\xe9\xff"), ANSWERED),
        ("chunk_ext_nul", chunked(ext=b";a=\x00"), ANSWERED),
        ("chunk_ext_20KiB", chunked(ext=b";e=" + b"x" * (20 * 1024)), REFUSED_BIG),
        ("chunk_ext_1MiB", chunked(ext=big_ext), REFUSED_BIG),
        ("chunk_ext_5000_small", chunked(ext=b";a=b" * 5000), REFUSED_BIG),
        ("chunk_ext_on_every_of_2000_chunks", chunked(chunks=[b"x"] * 2000, ext=b";k=v" * 4), ANSWERED),
        ("chunk_size_negative", chunked(size_text=b"-1"), REFUSED),
        ("chunk_size_overflow", chunked(size_text=b"ffffffffffffffffff"), REFUSED),
        ("chunk_size_16_hex_digits", chunked(size_text=b"ffffffffffffffff"), REFUSED_BIG),
        ("chunk_size_0x_prefix", chunked(size_text=b"0x5"), REFUSED),
        ("chunk_size_leading_zeros_1000", chunked(size_text=b"0" * 1000 + b"5"), ANSWERED),
        ("chunk_size_space", chunked(size_text=b"5 "), ANSWERED),
        ("chunk_size_non_utf8", chunked(size_text=b"\xe9"), REFUSED),
        ("chunk_data_longer_than_size", request(headers=[b"Transfer-Encoding: chunked"],
                                                body=b"2\r\nhello\r\n0\r\n\r\n"), REFUSED),
        ("chunk_body_over_64KiB", chunked(chunks=[b"y" * 40000, b"y" * 40000], target=b"/v1/runs", method=b"POST"),
         Expect(statuses={411, 413}, allow_reset=True)),
        ("chunked_no_last_chunk", request(headers=[b"Transfer-Encoding: chunked"], body=b"5\r\nhello\r\n"), ANY),
        ("transfer_encoding_gzip_chunked", request(headers=[b"Transfer-Encoding: gzip, chunked"],
                                                   body=b"0\r\n\r\n"), ANSWERED),
        ("transfer_encoding_chunked_twice", request(headers=[b"Transfer-Encoding: chunked",
                                                             b"Transfer-Encoding: chunked"], body=b"0\r\n\r\n"), ANSWERED),
        ("content_length_and_chunked", request(headers=[b"Content-Length: 5", b"Transfer-Encoding: chunked"],
                                               body=b"0\r\n\r\n"), ANSWERED),
    ])


def framing_cases():
    many_headers = [b"X-H%d: v" % i for i in range(3000)]
    return [
        ("obs_fold_header", request(headers=[b"X-A: a", b" folded", b"\tagain"]), ANSWERED),
        ("obs_fold_first_line", request(headers=[b" X-A: a"]), ANSWERED),
        ("bare_cr_line_ends", request(eol=b"\r"), ANY),
        ("bare_lf_line_ends", request(eol=b"\n"), ANSWERED),
        ("bare_cr_inside_header_value", request(headers=[b"X-A: a\rb"]), REFUSED),
        ("bare_lf_inside_header_value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\nb: c\r\n\r\n", ANSWERED),
        ("mixed_line_ends", b"GET /healthz HTTP/1.1\nHost: x\r\nX: y\n\r\n", ANSWERED),
        ("header_16KiB_plus", request(headers=[b"X-Big: " + b"h" * (HEADER_LIMIT + 10)]), REFUSED_BIG),
        ("header_65534_value", request(headers=[b"X-Big: " + b"h" * 65534]), REFUSED_BIG),
        ("header_1MiB", request(headers=[b"X-Big: " + b"h" * (1 << 20)]), REFUSED_BIG),
        ("headers_3000", request(headers=many_headers), REFUSED_BIG),
        ("headers_200_small", request(headers=many_headers[:200]), ANSWERED),
        ("header_no_colon", request(headers=[b"NoColonHere"]), REFUSED),
        ("header_empty_name", request(headers=[b": value"]), REFUSED),
        ("header_space_before_colon", request(headers=[b"X-A : v"]), REFUSED),
        ("request_line_8KiB_target", request(target=b"/" + b"p" * 8192), ANSWERED),
        ("request_line_20KiB_target", request(target=b"/" + b"p" * 20000), REFUSED_BIG),
        ("pipelined_100_healthz", request(headers=[]) * 100, Expect(sequence=[{200}] * 100)),
        ("pipelined_100_info", request(target=b"/v1/info") * 100, Expect(sequence=[{200}] * 100)),
        ("pipelined_50_then_garbage", request() * 50 + b"GARBAGE\x00\xff\r\n\r\n",
         Expect(sequence=[{200}] * 50 + [CLIENT_ERROR])),
        ("http09_get", b"GET /\r\n", ANY),
        ("http09_get_healthz", b"GET /healthz\r\n\r\n", ANY),
        ("http10_no_host", request(version=b"HTTP/1.0", host=False), ANSWERED),
        ("http2_preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", ANY),
        ("http2_preface_then_settings", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00", ANY),
        ("http2_version_in_request_line", request(version=b"HTTP/2.0"), ANY),
        ("h2c_upgrade", request(headers=[b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c",
                                         b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"]), ANSWERED),
        ("http_version_9_9", request(version=b"HTTP/9.9"), ANY),
        ("tls_client_hello_on_plain_port", client_hello(), ANY),
        ("tls_record_header_only", b"\x16\x03\x01\x00\x05", ANY),
        ("content_length_absurd", request(headers=[b"Content-Length: 99999999999999999999"]), REFUSED_BIG),
        ("content_length_1e9", request(method=b"POST", target=b"/v1/runs", headers=[b"Content-Length: 1000000000"]),
         REFUSED_BIG),
        ("content_length_negative", request(headers=[b"Content-Length: -1"]), REFUSED),
        ("content_length_two_values", request(headers=[b"Content-Length: 5", b"Content-Length: 7"], body=b"12345"),
         REFUSED),
        ("content_length_list", request(headers=[b"Content-Length: 1, 2"], body=b"12"), REFUSED),
        ("content_length_hex", request(headers=[b"Content-Length: 0x10"]), REFUSED),
        ("content_length_body_short", request(method=b"POST", target=b"/v1/runs", headers=[b"Content-Length: 100"],
                                              body=b"{}"), ANY),
        ("method_lowercase", request(method=b"get"), ANSWERED),
        ("method_unknown_long", request(method=b"X" * 1000), ANSWERED),
        ("target_asterisk", request(target=b"*"), ANSWERED),
        ("target_absolute_uri", request(target=b"http://127.0.0.1/healthz"), ANSWERED),
        ("target_percent_bad", request(target=b"/v1/runs/%zz%00%ff"), ANSWERED),
        ("only_crlf", b"\r\n\r\n\r\n", ANY),
        ("empty", b"", ANY),
        ("nul_request", b"\x00" * 64, ANY),
    ]


def utf8_and_nul_cases():
    """Non-UTF-8 (several kinds) and NUL in every field of a request."""
    cases = []
    for k, bad in enumerate(BAD_UTF8):
        tag = f"{k}_{bad.hex()}"
        cases += [
            (f"non_utf8_path_runs_id_{tag}", request(target=b"/v1/runs/r-" + bad), BAD_REQUEST),
            (f"non_utf8_path_unknown_{tag}", request(target=b"/" + bad), BAD_REQUEST),
            (f"non_utf8_query_peer_{tag}", request(target=b"/v1/runs?peer=" + bad), BAD_REQUEST),
            (f"non_utf8_query_limit_{tag}", request(target=b"/v1/runs?limit=" + bad), BAD_REQUEST),
            (f"non_utf8_protocol_header_{tag}",
             request(target=b"/v1/session", headers=[b"Connection: Upgrade", b"Upgrade: meshperf-session/1",
                                                     b"X-Meshperf-Protocol: " + bad]), BAD_REQUEST),
        ]
    bad = BAD_UTF8[0]
    cases += [
        ("non_utf8_query_baselines_peer", request(target=b"/v1/baselines?peer=" + bad), BAD_REQUEST),
        ("non_utf8_query_key", request(target=b"/v1/runs?" + bad + b"=1"), BAD_REQUEST),
        ("non_utf8_stream_token", request(target=b"/v1/stream?token=" + bad + b"&index=0",
                                          headers=[b"Connection: Upgrade", b"Upgrade: meshperf-data/1",
                                                   b"X-Meshperf-Protocol: 3"]), BAD_REQUEST),
        ("non_utf8_method", request(method=b"G" + bad), REFUSED),
        ("non_utf8_version", request(version=b"HTTP/1." + bad), REFUSED),
        ("non_utf8_header_name", request(headers=[b"X-" + bad + b": v"]), REFUSED),
        ("non_utf8_header_value_info", request(target=b"/v1/info", headers=[b"X-Any: " + bad]), ANSWERED),
        ("non_utf8_user_agent", request(target=b"/v1/runs", headers=[b"User-Agent: " + bad]), ANSWERED),
        ("non_utf8_host", request(target=b"/v1/info", host=False, headers=[b"Host: " + bad]), ANSWERED),
        ("non_utf8_authorization", request(target=b"/v1/info", headers=[b"Authorization: Bearer " + bad]), ANSWERED),
        ("non_utf8_content_type", request(method=b"POST", target=b"/v1/runs",
                                          headers=[b"Content-Type: " + bad, b"Content-Length: 2"], body=b"{}"),
         ANSWERED),
        ("non_utf8_upgrade_header", request(target=b"/v1/session",
                                            headers=[b"Connection: Upgrade", b"Upgrade: " + bad,
                                                     b"X-Meshperf-Protocol: 3"]), ANSWERED),
        ("non_utf8_instance_header", request(target=b"/v1/session",
                                             headers=[b"Connection: Upgrade", b"Upgrade: meshperf-session/1",
                                                      b"X-Meshperf-Protocol: 0", b"X-Meshperf-Instance: " + bad]),
         ANSWERED),
        ("non_utf8_connection_header", request(headers=[b"Connection: " + bad]), ANSWERED),
        ("non_utf8_json_body_peer", post_json(b'{"peer":"' + bad + b'"}'), Expect(statuses={400})),
        ("non_utf8_json_body_key", post_json(b'{"peer":"127.0.0.1:1","' + bad + b'":1}'), Expect(statuses={400})),
        ("json_lone_surrogate_escape", post_json(b'{"peer":"\\ud800"}'), Expect(statuses={400})),
        ("json_body_nested_30000_deep", post_json(b"[" * 30000 + b"]" * 30000), Expect(statuses={400})),
        ("json_body_object_nested_7000_deep", post_json(b'{"peer":' * 7000 + b'"x"' + b"}" * 7000),
         Expect(statuses={400})),
        ("nul_inside_peer", post_json(b'{"peer":"127.0.0.1\\u0000:1"}'), Expect(statuses={400})),
        ("nul_inside_peer_after_port", post_json(b'{"peer":"127.0.0.1:1\\u0000x"}'), Expect(statuses={400})),
        ("nul_in_path", request(target=b"/v1/runs/\x00"), REFUSED),
        ("nul_in_query", request(target=b"/v1/runs?peer=a\x00b"), REFUSED),
        ("nul_in_header_value", request(headers=[b"X-A: a\x00b"]), REFUSED),
        ("nul_in_header_name", request(headers=[b"X\x00A: v"]), REFUSED),
        ("nul_in_method", request(method=b"GE\x00T"), REFUSED),
        ("nul_raw_in_json_body", post_json(b'{"peer":"a\x00b"}'), Expect(statuses={400})),
        # POST /v1/inspect's body (expect, loopback): each refused with what is wrong; a
        # well-formed loopback request is answered (UNKNOWN on a host without RDMA).
        ("inspect_loopback_non_utf8", post_json(b'{"loopback":"' + bad + b'"}', target=b"/v1/inspect"),
         Expect(statuses={400})),
        ("inspect_loopback_number", post_json(b'{"loopback":1}', target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_loopback_nested_5000_deep", post_json(b'{"loopback":' + b"[" * 5000 + b"]" * 5000 + b"}",
                                                        target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_loopback_twice", post_json(b'{"loopback":false,"loopback":true}', target=b"/v1/inspect"),
         Expect(statuses={200})),
        # gpu_copies: the same rules; a well-formed request is answered (UNKNOWN without a GPU).
        ("inspect_gpu_copies_string", post_json(b'{"gpu_copies":"' + bad + b'"}', target=b"/v1/inspect"),
         Expect(statuses={400})),
        ("inspect_gpu_copies_with_floors", post_json(b'{"gpu_copies":true,"expect":{"h2d_floor_gb_per_s":50,'
                                                     b'"d2h_floor_gb_per_s":5}}', target=b"/v1/inspect"),
         Expect(statuses={200})),
        ("inspect_h2d_floor_1e308", post_json(b'{"gpu_copies":true,"expect":{"h2d_floor_gb_per_s":1e308}}',
                                              target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_h2d_floor_nan", post_json(b'{"gpu_copies":true,"expect":{"h2d_floor_gb_per_s":NaN}}',
                                            target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_floor_non_utf8", post_json(b'{"expect":{"loopback_floor_gbit":"' + bad + b'"}}', target=b"/v1/inspect"),
         Expect(statuses={400})),
        ("inspect_floor_negative", post_json(b'{"expect":{"loopback_floor_gbit":-1e308}}', target=b"/v1/inspect"),
         Expect(statuses={400})),
        # The manifest's nic_driver, "NAME VERSION": one word, three, a non-UTF-8 or 60 kB
        # version refused; the well-formed one answered.
        ("inspect_nic_driver_one_word", post_json(b'{"expect":{"nic_driver":"24.10-1.1.4"}}', target=b"/v1/inspect"),
         Expect(statuses={400})),
        ("inspect_nic_driver_three_words", post_json(b'{"expect":{"nic_driver":"mlx5_core 24.10 x"}}',
                                                     target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_nic_driver_non_utf8", post_json(b'{"expect":{"nic_driver":"mlx5_core ' + bad + b'"}}',
                                                  target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_nic_driver_60k_word", post_json(b'{"expect":{"nic_driver":"' + b"x" * 60000 + b'"}}',
                                                  target=b"/v1/inspect"), Expect(statuses={400})),
        ("inspect_nic_driver_well_formed", post_json(b'{"expect":{"nic_driver":"mlx5_core 24.10-1.1.4"}}',
                                                     target=b"/v1/inspect"), Expect(statuses={200})),
    ]
    return cases


def mutations(count=80):
    """Seeded mutations of valid requests: bytes replaced, inserted (invalid UTF-8, NUL,
    CR, LF, ':'), deleted, or the request cut short."""
    rng = random.Random(SEED)
    templates = [
        request(target=b"/v1/info"),
        request(method=b"POST", target=b"/v1/runs", headers=[b"Content-Type: application/json",
                                                             b"Content-Length: 22"], body=b'{"peer":"127.0.0.1:1"}'),
        chunked(chunks=[b'{"peer":', b'"127.0.0.1:1"}'], target=b"/v1/runs", method=b"POST", ext=b";a=b",
                trailers=b"X-T: v\r\n"),
        request(target=b"/v1/session", headers=[b"Connection: Upgrade", b"Upgrade: meshperf-session/1",
                                                b"X-Meshperf-Protocol: 3"]),
        request(target=b"/v1/runs?limit=3&peer=127.0.0.1:1"),
    ]
    inserts = [b"\xe9", b"\xff", b"\x80", b"\xc0\xaf", b"\x00", b"\r", b"\n", b":", b"\r\n", b";", b" "]
    out = []
    for i in range(count):
        b = bytearray(templates[i % len(templates)])
        for _ in range(rng.randint(1, 6)):
            op = rng.randrange(4)
            at = rng.randrange(len(b))
            if op == 0:
                b[at] = rng.getrandbits(8)
            elif op == 1:
                b[at:at] = rng.choice(inserts)
            elif op == 2 and len(b) > 2:
                del b[at]
            else:
                b[at:at] = rng.choice(inserts) * rng.randint(1, 64)
        if rng.random() < 0.15:
            b = b[:rng.randint(1, len(b))]
        out.append((f"mutation_{i:03d}", bytes(b), ANY))
    return out


def request_corpus():
    return trailer_cases() + chunk_cases() + framing_cases() + utf8_and_nul_cases() + mutations()


# ---- what a fake peer answers to the session upgrade --------------------------------------------

def reply(status_line, headers=(), body=b"", eol=b"\r\n"):
    return eol.join([status_line, *headers]) + eol + eol + body


UPGRADE_OK = [b"Upgrade: meshperf-session/1", b"Connection: Upgrade"]


def frame(ftype, payload):
    """A session frame (core/frame.hpp): magic MPF1, type, reserved 0, length, payload."""
    return b"MPF1" + ftype.to_bytes(2, "big") + b"\x00\x00" + len(payload).to_bytes(4, "big") + payload


def peer_reply_corpus(count=24):
    cases = [
        ("status_reason_ete_404", reply(b"HTTP/1.1 404 \xe9t\xe9", [b"Content-Length: 0"])),
        ("status_reason_ete_no_length", reply(b"HTTP/1.1 404 \xe9t\xe9")),
        ("status_reason_overlong_500", reply(b"HTTP/1.1 500 \xc0\xaf\xc0\xaf", [b"Content-Length: 0"])),
        ("status_reason_surrogate_403", reply(b"HTTP/1.1 403 \xed\xa0\x80", [b"Content-Length: 0"])),
        ("status_reason_ff_426", reply(b"HTTP/1.1 426 \xff\xfe", [b"Content-Length: 0"])),
        ("status_reason_truncated_utf8_200", reply(b"HTTP/1.1 200 OK\xe2\x82", [b"Content-Length: 0"])),
        ("status_reason_nul", reply(b"HTTP/1.1 404 Not\x00Found", [b"Content-Length: 0"])),
        ("status_reason_64KiB", reply(b"HTTP/1.1 404 " + b"r" * 60000, [b"Content-Length: 0"])),
        ("status_code_non_digit", reply(b"HTTP/1.1 4\xe94 x")),
        ("status_code_999", reply(b"HTTP/1.1 999 \xe9", [b"Content-Length: 0"])),
        ("status_code_000", reply(b"HTTP/1.1 000 \xe9", [b"Content-Length: 0"])),
        ("status_code_503_non_utf8_error_body", reply(b"HTTP/1.1 503 \xe9", [b"Content-Length: 15"],
                                                      b'{"error":"\xe9t\xe9"}')),
        ("status_403_error_body_lone_surrogate", reply(b"HTTP/1.1 403 Forbidden", [b"Content-Length: 18"],
                                                       b'{"error":"\\ud800"}')),
        ("status_403_error_body_200KiB", reply(b"HTTP/1.1 403 Forbidden", [b"Content-Length: 204812"],
                                               b'{"error":"' + b"e" * 204800 + b'"}')),
        ("status_403_error_body_nested_deep", reply(b"HTTP/1.1 403 Forbidden", [b"Content-Length: 1000000"],
                                                    b"[" * 500000 + b"]" * 500000)),
        ("status_404_body_5MiB", reply(b"HTTP/1.1 404 \xe9", [b"Content-Length: 5242880"], b"z" * (5 << 20))),
        ("status_101_upgrade_header_non_utf8", reply(b"HTTP/1.1 101 Switching Protocols",
                                                     [b"Upgrade: \xe9t\xe9\xff", b"Connection: Upgrade"])),
        ("status_101_no_upgrade_header", reply(b"HTTP/1.1 101 \xe9")),
        ("status_101_then_garbage", reply(b"HTTP/1.1 101 Switching Protocols", UPGRADE_OK, b"\xe9\xff" * 64)),
        ("status_101_then_error_frame_non_utf8",
         reply(b"HTTP/1.1 101 Switching Protocols", UPGRADE_OK, frame(8, b'{"message":"\xe9t\xe9"}'))),
        ("status_101_then_hello_ok_non_utf8_host",
         reply(b"HTTP/1.1 101 Switching Protocols", UPGRADE_OK,
               frame(2, b'{"host":{"hostname":"\xe9t\xe9","address":"\xff"}}'))),
        ("header_non_utf8_name_and_value", reply(b"HTTP/1.1 404 Not Found",
                                                 [b"X-\xe9: \xff\xfe", b"Content-Length: 0"])),
        ("header_obs_fold", reply(b"HTTP/1.1 404 Not Found", [b"X-A: a", b" \xe9folded", b"Content-Length: 0"])),
        ("header_70KiB", reply(b"HTTP/1.1 404 Not Found", [b"X-Big: " + b"h" * 70000])),
        ("headers_5000", reply(b"HTTP/1.1 404 Not Found", [b"X-H%d: \xe9" % i for i in range(5000)])),
        ("bare_lf", reply(b"HTTP/1.1 404 \xe9", eol=b"\n")),
        ("bare_cr", reply(b"HTTP/1.1 404 \xe9", eol=b"\r")),
        ("http09_body_only", b"<html>\xe9t\xe9</html>"),
        ("http2_preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        ("http2_settings_frame", b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"),
        ("tls_alert", b"\x15\x03\x03\x00\x02\x02\x28"),
        ("tls_server_hello_prefix", b"\x16\x03\x03\x00\x4a\x02\x00\x00\x46\x03\x03" + b"\xe9" * 32),
        ("nul_bytes", b"\x00" * 128),
        ("nothing_then_close", b""),
        ("chunked_size_overflow", reply(b"HTTP/1.1 404 \xe9", [b"Transfer-Encoding: chunked"],
                                        b"ffffffffffffffffff\r\nx\r\n0\r\n\r\n")),
        ("chunked_negative_size", reply(b"HTTP/1.1 404 \xe9", [b"Transfer-Encoding: chunked"], b"-1\r\nx\r\n0\r\n\r\n")),
        ("chunked_huge_extension", reply(b"HTTP/1.1 404 \xe9", [b"Transfer-Encoding: chunked"],
                                         b"1;e=" + b"x" * 100000 + b"\r\nx\r\n0\r\n\r\n")),
        ("chunked_huge_trailer", reply(b"HTTP/1.1 404 \xe9", [b"Transfer-Encoding: chunked"],
                                       b"1\r\nx\r\n0\r\nX: " + b"t" * 70000 + b"\r\n\r\n")),
        ("chunked_error_body_non_utf8", reply(b"HTTP/1.1 403 Forbidden", [b"Transfer-Encoding: chunked"],
                                              b"f\r\n{\"error\":\"\xe9t\xe9\"}\r\n0\r\n\r\n")),
        ("content_length_absurd", reply(b"HTTP/1.1 404 \xe9", [b"Content-Length: 99999999999999999999"], b"x")),
        ("content_length_negative", reply(b"HTTP/1.1 404 \xe9", [b"Content-Length: -1"], b"x")),
        ("content_length_longer_than_body", reply(b"HTTP/1.1 404 \xe9", [b"Content-Length: 1000"], b"short")),
        ("http10_status", reply(b"HTTP/1.0 404 \xe9", [b"Content-Length: 0"])),
        ("http_version_2", reply(b"HTTP/2 404 \xe9", [b"Content-Length: 0"])),
    ]
    rng = random.Random(SEED + 1)
    templates = [reply(b"HTTP/1.1 404 Not Found", [b"Content-Type: application/json", b"Content-Length: 23"],
                       b'{"error":"not here at"}'),
                 reply(b"HTTP/1.1 101 Switching Protocols", UPGRADE_OK),
                 reply(b"HTTP/1.1 426 Upgrade Required", [b"Content-Length: 26"], b'{"error":"protocol x y z"}')]
    for i in range(count):
        b = bytearray(templates[i % len(templates)])
        for _ in range(rng.randint(1, 5)):
            at = rng.randrange(len(b))
            b[at:at] = rng.choice(BAD_UTF8 + [b"\x00", b"\r", b"\n", b"\r\n"])
        cases.append((f"mutation_{i:02d}", bytes(b)))
    return cases
