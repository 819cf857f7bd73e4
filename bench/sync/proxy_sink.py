#!/usr/bin/env python3
"""Stand-in for the Python SDK's HttpProxySink(mode="sync", on_error="raise").

The real sink needs the `openai` package, which this machine cannot install,
so this script does what the sync sink does per sandbox operation: it posts
the operation's start event, then its finish event, one JSON event per
request to the sandboxaudit receiver, each on a new TCP connection, and
raises unless the answer is 200. The bodies are the ones pydantic's
model_dump_json gives for an `exec` with an empty body. It times each
operation (both POSTs) and prints one duration in nanoseconds per line.

    proxy_sink.py URL OPS
"""
import http.client
import sys
import time
import urllib.parse
import uuid

START = ('{"version":1,"event_id":"%s","ts":"%s","session_id":"%s","seq":%d,'
         '"op":"exec","phase":"start","span_id":"%s","parent_span_id":null,'
         '"trace_id":null,"data":{"command":["true"],"timeout_s":null,'
         '"shell":false,"user":null}}')
FINISH = ('{"version":1,"event_id":"%s","ts":"%s","session_id":"%s","seq":%d,'
          '"op":"exec","phase":"finish","span_id":"%s","parent_span_id":null,'
          '"trace_id":null,"data":{"command":["true"],"timeout_s":null,'
          '"shell":false,"user":null,"exit_code":0},"ok":true,'
          '"duration_ms":0.01,"error_code":null,"error_type":null,'
          '"error_message":null,"error_retryable":null,"stdout":null,'
          '"stderr":null}')


def now():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def post(host, port, path, body):
    # A new connection per request, as the sync sink's client makes.
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("POST", path, body=body.encode(),
                     headers={"Content-Type": "application/json", "Connection": "close"})
        resp = conn.getresponse()
        msg = resp.read()
        if resp.status != 200:
            raise RuntimeError("POST %s: %d %s" % (path, resp.status, msg[:200]))
    finally:
        conn.close()


def main():
    url, ops = sys.argv[1], int(sys.argv[2])
    u = urllib.parse.urlsplit(url)
    session = str(uuid.uuid4())
    out = []
    seq = 0
    for _ in range(ops):
        began = time.perf_counter_ns()
        span = "sandbox_op_" + uuid.uuid4().hex
        seq += 1
        post(u.hostname, u.port, u.path, START % (uuid.uuid4(), now(), session, seq, span))
        seq += 1
        post(u.hostname, u.port, u.path, FINISH % (uuid.uuid4(), now(), session, seq, span))
        out.append(time.perf_counter_ns() - began)
    sys.stdout.write("".join("%d\n" % d for d in out))


if __name__ == "__main__":
    main()
