"""`scripts/bench texts [N] [sqlite|postgres]`: how fast one release yona-server drains N queued texts into a
local sink that answers as Plivo (or Twilio) does, against the sink's own capacity for the same request.

1. The server runs with the provider's URL pointing at a port where nothing listens yet, without its workers,
   and N accounts are created through the API (each queues its confirmation code; the request's immediate attempt
   finds no provider, so every text waits in the outbox).
2. The server stops; the sink (nginx answering Plivo's 202 or Twilio's 201, logging each request with its time)
   starts on that port; the server starts again with its workers and the `text-outbox` job drains.
3. Texts per second = N / (last request at the sink - first); every number must reach the sink exactly once.
   Peak and final RSS of the draining server show whether memory stays flat. The sink's capacity is wrk posting
   the same body to it (scripts/lib/common.sh's load shape).

Arguments: BIN WORK N STORE DATABASE_URL PROVIDER
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_api import free_port, server_env, start_server  # noqa: E402

bin_path, work, n, store, database_url, provider = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]

sink_port, port = free_port(), free_port()
base = f"http://127.0.0.1:{port}"
auth_id, sid, token = "MAZDQ1ZJIYMDZKMTIZZW", "AC" + "0123456789abcdef" * 2, "bench-auth-token"
env = server_env(database_url, port, YONA_SMS_PROVIDER=provider, YONA_SMS_FROM="+31850000000")
if provider == "plivo":
    env.update(YONA_PLIVO_AUTH_ID=auth_id, YONA_PLIVO_AUTH_TOKEN=token, YONA_PLIVO_API_URL=f"http://127.0.0.1:{sink_port}")
else:
    env.update(YONA_TWILIO_ACCOUNT_SID=sid, YONA_TWILIO_AUTH_TOKEN=token, YONA_TWILIO_API_URL=f"http://127.0.0.1:{sink_port}")


def start(*arguments):
    return start_server(bin_path, env, work, *arguments)


def create(i):
    body = json.dumps({"firstName": "Bench", "lastName": "Text", "nickname": "BT", "mobileNumber": f"+3161{i:07d}"}).encode()
    request = urllib.request.Request(base + "/users/", data=body, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.status


# 1. queue N texts with no provider listening
server = start("--no-workers")
queue_start = time.time()
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    statuses = list(pool.map(create, range(n)))
queued_in = time.time() - queue_start
assert statuses.count(201) == n, f"accounts made: {statuses.count(201)} of {n}"
server.terminate()
server.wait()
time.sleep(8)  # every text's first backoff (5 s, jittered up to 1.5x) has passed: all are due

# 2. the sink, then the server with its workers
sink = os.path.join(work, "sink")
os.makedirs(sink, exist_ok=True)
plivo = '{"api_id":"b","message":"message(s) queued","message_uuid":["0b0e6a4e-1c1f-4d7b-9d0c-1d2e3f405060"]}'
twilio = '{"sid":"SM0123456789abcdef0123456789abcdef","status":"queued"}'
answer_port = free_port()
# The front logs each request with its body (which nginx reads only for a proxied request) and hands it to the back,
# which answers as the provider does.
open(os.path.join(work, "sink.conf"), "w").write(f"""
worker_processes 1;
pid {sink}/nginx.pid;
error_log {sink}/error.log;
events {{ worker_connections 4096; }}
http {{
    log_format texts '$msec $request_body';
    client_body_temp_path {sink};
    client_body_buffer_size 16k;
    keepalive_requests 10000000;
    upstream answers {{ server 127.0.0.1:{answer_port}; keepalive 64; }}
    server {{
        listen 127.0.0.1:{sink_port};
        access_log {sink}/texts.log texts;
        location / {{ proxy_pass http://answers; proxy_http_version 1.1; proxy_set_header Connection ""; }}
    }}
    server {{
        listen 127.0.0.1:{answer_port};
        access_log off;
        default_type application/json;
        location /v1/Account/ {{ return 202 '{plivo}'; }}
        location /2010-04-01/ {{ return 201 '{twilio}'; }}
    }}
}}
""")
subprocess.run(["nginx", "-c", os.path.join(work, "sink.conf"), "-p", sink], check=True)
try:
    server = start()
    rss_start = int([line.split()[1] for line in open(f"/proc/{server.pid}/status") if line.startswith("VmRSS")][0])
    deadline = time.time() + 600
    while time.time() < deadline:
        lines = open(os.path.join(sink, "texts.log")).read().count("\n") if os.path.exists(os.path.join(sink, "texts.log")) else 0
        if lines >= n:
            break
        time.sleep(0.2)
    time.sleep(2)  # anything sent twice would arrive now
    status = {line.split()[0]: line.split()[1] for line in open(f"/proc/{server.pid}/status") if line.split()[0] in ("VmRSS:", "VmHWM:")}
    server.terminate()
    server.wait()
    lines = [line.split(" ", 1) for line in open(os.path.join(sink, "texts.log")).read().splitlines()]
    # 3. the sink's own capacity for the same POST
    body_file = os.path.join(work, "body.lua")
    path = f"/v1/Account/{auth_id}/Message/" if provider == "plivo" else f"/2010-04-01/Accounts/{sid}/Messages.json"
    open(body_file, "w").write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = \'{"src":"+31850000000","dst":"+31612345678","text":"Your Yona confirmation code: 1234"}\'\n')
    wrk = subprocess.run(["wrk", "-t2", "-c32", "-d5s", "-s", body_file, f"http://127.0.0.1:{sink_port}{path}"], capture_output=True, text=True).stdout
    sink_rate = float([line.split()[1] for line in wrk.splitlines() if line.startswith("Requests/sec")][0])
finally:
    subprocess.run(["nginx", "-c", os.path.join(work, "sink.conf"), "-p", sink, "-s", "stop"])

times = sorted(float(t) for t, _ in lines)
numbers = []
for _, body in lines:
    text = body.encode().decode("unicode_escape")
    if provider == "plivo":
        numbers.append(json.loads(text)["dst"])
    else:
        numbers.append(urllib.parse.unquote_plus(dict(p.split("=", 1) for p in text.split("&"))["To"]))
distinct = len(set(numbers))
seconds = times[-1] - times[0]
print(f"texts, {store}, {provider}, {os.cpu_count()} cores, {bin_path}")
print(f"queued {n} confirmation codes through POST /users/ in {queued_in:.1f} s ({n / queued_in:.0f} accounts/s, provider down)")
print(f"at the sink: {len(lines)} requests, {distinct} distinct numbers (goal: {n} and {n}: each text exactly once)")
print(f"drained in {seconds:.2f} s = {n / seconds:.0f} texts/s (goal: at least 1,000/s); the sink alone answers {sink_rate:.0f} POSTs/s (ratio {n / seconds / sink_rate:.3f})")
print(f"server RSS: {rss_start / 1024:.1f} MiB when the drain began, {int(status['VmRSS:']) / 1024:.1f} MiB after it, peak {int(status['VmHWM:']) / 1024:.1f} MiB")
