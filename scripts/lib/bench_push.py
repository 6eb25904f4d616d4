"""`scripts/bench push [N] [--instances K[,K...]] [sqlite|postgres]`: how fast the push outbox drains into a local sink
that answers the OAuth grant and `messages:send` as FCM does, against the sink's own capacity (wrk, same body, same
run) and against the official Firebase Admin SDK's `send_each` (Python, batches of 500) sending to the same sink.

Called by scripts/bench, which installs the tools, starts PostgreSQL and nginx (two sinks: `fast` answers from memory
and logs nothing; `logged` writes every request body to an access log, for the exactly-once check), writes a service
account whose token_uri is the sink, and builds (or names, YONA_BENCH_BIN) the release binary.

Scenarios, each on a fresh store, N pushes over 2,000 devices queued in one transaction while the servers run:
- one instance, fresh store, fast sink (the headline ratio), and the same after HISTORY pushes were sent (flatness);
- 1, 2 and 4 instances on one PostgreSQL, logged sink: total rate, every push exactly once (from the sink's log),
  each instance's share (from its /metrics);
- the Admin SDK's send_each against the fast sink.
Per scenario: the drain time (queue commit to empty outbox), the peak RSS of each instance, and the CPU seconds of
the server, PostgreSQL and nginx with the machine's idle time (what limited it).
"""
import argparse
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import cpu_share  # noqa: E402

DEVICES = 2000
INTERNAL_TOKEN = "bench-internal-token-0123"


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("n", type=int)
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--pg", help="PostgreSQL admin URL (database postgres)")
    p.add_argument("--stores", default="postgres sqlite")
    p.add_argument("--instances", default="1,2,4")
    p.add_argument("--history", type=int, default=1_000_000)
    p.add_argument("--fast", required=True, help="base URL of the sink that logs nothing")
    p.add_argument("--logged", required=True, help="base URL of the sink that logs every body")
    p.add_argument("--log", required=True, help="the logged sink's access log")
    p.add_argument("--sa", required=True, help="service-account JSON (token_uri at the fast sink)")
    p.add_argument("--sa-logged", required=True, help="service-account JSON (token_uri at the logged sink)")
    p.add_argument("--tls", default="", help="base URL of the sink that speaks HTTP/2 over TLS ('' skips it)")
    p.add_argument("--tls-ca", default="", help="the TLS sink's certificate (the server trusts it through YONA_FCM_CA_FILE)")
    p.add_argument("--sa-tls", default="", help="service-account JSON (token_uri at the TLS sink)")
    p.add_argument("--sdk-python", default="", help="a Python with firebase-admin installed ('' skips the SDK run)")
    p.add_argument("--perf", default="")
    p.add_argument("--limit", type=int, default=120, help="seconds a drain may take before its rate is taken as it stands")
    # `scripts/bench push-direct`: APNs and Web Push instead of FCM
    p.add_argument("--direct", action="store_true", help="drain to the APNs and Web Push sinks instead of FCM's")
    p.add_argument("--apns", default="", help="base URL of the APNs sink (HTTP/2 over TLS)")
    p.add_argument("--apns-ca", default="", help="the APNs sink's certificate")
    p.add_argument("--apns-key", default="", help="a .p8 (PEM P-256) key for the provider token")
    p.add_argument("--apns-log", default="", help="the APNs sink's access log (body and path per push)")
    p.add_argument("--webpush", default="", help="base URL of the Web Push sink")
    p.add_argument("--webpush-log", default="", help="the Web Push sink's access log (one line per push)")
    p.add_argument("--p256dh", default="", help="the subscriptions' public key (base64url)")
    p.add_argument("--auth", default="", help="the subscriptions' auth secret (base64url)")
    return p.parse_args()


ARGS = parse()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def body_json():
    return json.dumps({"message": {"token": "bench-1", "data": {"messageId": "1", "url": "http://127.0.0.1/messages/1"},
                                   "android": {"priority": "high", "ttl": "86400s", "collapse_key": "inbox"},
                                   "apns": {"headers": {"apns-priority": "5", "apns-push-type": "background",
                                                        "apns-collapse-id": "inbox"},
                                            "payload": {"aps": {"content-available": 1}}}}})


def wrk(url):
    body = body_json()
    script = os.path.join(ARGS.work, "post.lua")
    with open(script, "w") as f:
        f.write(f"wrk.method = 'POST'\nwrk.body = [[{body}]]\nwrk.headers['Content-Type'] = 'application/json'\n"
                "wrk.headers['Authorization'] = 'Bearer bench-token'\n")
    out = subprocess.run(["wrk", "-t2", "-c64", "-d5s", "-s", script, f"{url}/v1/projects/bench/messages:send"],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def h2load(url):
    """The TLS sink's capacity over HTTP/2 (h2load: 4 connections, 100 streams each, as FCM allows)."""
    path = os.path.join(ARGS.work, "body.json")
    with open(path, "w") as f:
        f.write(body_json())
    out = subprocess.run(["h2load", "-n", "200000", "-c", "4", "-m", "100", "-t", "2", "-d", path,
                          "-H", "content-type: application/json", "-H", "authorization: Bearer bench-token",
                          f"{url}/v1/projects/bench/messages:send"], check=True, capture_output=True, text=True).stdout
    assert "200000 succeeded" in out, out
    return float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))


class Store:
    """A fresh database per scenario: a PostgreSQL database, or a SQLite file."""

    def __init__(self, kind, name):
        self.kind = kind
        if kind == "postgres":
            self.admin = ARGS.pg
            self.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", self.admin)
            self.psql(f"CREATE DATABASE {name}", self.admin)
            self.url = ARGS.pg.rsplit("/", 1)[0] + "/" + name
        else:
            self.path = os.path.join(ARGS.work, name + ".sqlite")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self.path + suffix):
                    os.remove(self.path + suffix)
            self.url = "sqlite://" + self.path

    @staticmethod
    def psql(statement, url):
        return subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", "-tAq", url, "-c", statement], check=True,
                              capture_output=True, text=True).stdout.strip()

    def sql(self, statement):
        if self.kind == "postgres":
            return self.psql(statement, self.url)
        connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            if statement.lstrip().startswith("BEGIN"):
                connection.executescript(statement)
                return ""
            row = connection.execute(statement).fetchone()
            return "" if row is None else str(row[0])
        finally:
            connection.close()

    def open_rows(self):
        # 'claimed' and kept 'sent' rows are how builds before the reshaped outbox left them (before/after runs)
        return int(self.sql("SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'claimed')"))

    def seed(self, count, history=0, address="fcm"):
        """One anonymized user with DEVICES phones and `history` finished pushes as this build leaves them; returns
        the statement that queues `count` pushes in one transaction (timed from its commit). `address`: the phones'
        push address, a Firebase Instance ID, an APNs token (hex) or a Web Push subscription at the sink."""
        if self.kind == "postgres":
            uid, new_id, now, series = "'00000000-0000-4000-8000-000000000001'", "gen_random_uuid()", "now()", "generate_series(1, {n}) AS s(k)"
            ago = "now() - interval '1 second' + s.k * interval '1 microsecond'"
            old = "now() - interval '10 minutes' + s.k * interval '1 microsecond'"
            true = "true"
            hex_token = "lpad(to_hex(s.k), 64, '0')"
        else:
            blob = self.sql("SELECT typeof(id) FROM activity_categories LIMIT 1") == "blob"
            uid = "X'00000000000040008000000000000001'" if blob else "'00000000-0000-4000-8000-000000000001'"
            new_id = "randomblob(16)" if blob else ("upper(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || "
                                                    "substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2)"
                                                    " || '-' || hex(randomblob(6)))")
            now = "((julianday('now') - 2440587.5) * 86400.0)"  # seconds since 1970, as SQLiteNIO stores dates
            series = "(WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c WHERE k < {n}) SELECT k FROM c) AS s"
            ago = f"{now} - 1 + s.k * 0.000001"
            old = f"{now} - 600 + s.k * 0.000001"
            true = "1"
            hex_token = "printf('%064x', s.k)"
        column, value = {
            "fcm": ("firebase_instance_id", "'bench-' || s.k"),
            "apns": ("apns_token", hex_token),
            "webpush": ("web_push_subscription",
                        f"""'{{"endpoint":"{ARGS.webpush}/push/bench-' || s.k || '","keys":{{"auth":"{ARGS.auth}","p256dh":"{ARGS.p256dh}"}}}}'"""),
        }[address]
        self.sql(f"""BEGIN;
INSERT INTO users_anonymized (id) VALUES ({uid});
INSERT INTO devices_anonymized (id, user_anonymized_id, device_index, operating_system, {column},
                                notifications_enabled, firebase_instance_id_updated_at)
  SELECT {new_id}, {uid}, s.k, 'ANDROID', {value}, {true}, {now} FROM {series.format(n=DEVICES)};
COMMIT;""")
        pushes = """INSERT INTO push_outbox (id, device_anonymized_id, message_id, state, attempts, next_attempt_at, created_at)
  SELECT {new_id}, d.id, {base} + s.k, '{state}', {attempts}, {when}, {when}
  FROM {series} JOIN (SELECT id, device_index - 1 AS slot FROM devices_anonymized) d ON d.slot = s.k % {devices}"""
        if history:
            self.sql("BEGIN;\n" + pushes.format(new_id=new_id, base=10_000_000, state="sent", attempts=1, when=old,
                                                series=series.format(n=history), devices=DEVICES) + ";\nCOMMIT;")
            reshaped = self.sql("SELECT count(*) FROM " + ("pg_indexes WHERE indexname" if self.kind == "postgres"
                                                            else "sqlite_master WHERE name") + " = 'push_outbox_due'")
            if reshaped == "1":
                # this build deletes a row when it is sent: its history is a table that had the rows and lost them
                self.sql("DELETE FROM push_outbox WHERE state = 'sent'")
            self.sql("VACUUM ANALYZE push_outbox" if self.kind == "postgres" else "ANALYZE")
        return "BEGIN;\n" + pushes.format(new_id=new_id, base=1_000_000, state="pending", attempts=0, when=ago,
                                          series=series.format(n=count), devices=DEVICES) + ";\nCOMMIT;"


class Servers:
    def __init__(self, store, count, sink, service_account, extra_env=None):
        self.procs = []
        for index in range(count):
            port = free_port()
            env = dict(os.environ, YONA_DATABASE_URL=store.url, YONA_PORT=str(port), YONA_INTERNAL_TOKEN=INTERNAL_TOKEN,
                       YONA_LOG_LEVEL="warning", YONA_RECOVERY_KEY="YmVuY2gtcmVjb3Zlcnkta2V5LTAxMjM0NTY3ODlhYmM",
                       YONA_FCM_SERVICE_ACCOUNT=service_account, YONA_FCM_ENDPOINT=sink, **(extra_env or {}))
            command = [ARGS.bin, "serve"]
            if ARGS.perf and index == 0:
                command = ["perf", "record", "-F", "999", "-g", "-o", ARGS.perf, "--"] + command
            log = open(os.path.join(ARGS.work, f"server-{index}.log"), "w")
            proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=1)
                    break
                except Exception:
                    time.sleep(0.1)
            else:
                raise SystemExit(f"instance {index} did not start: " + open(log.name).read()[-2000:])
            pid = proc.pid
            if ARGS.perf and index == 0:
                pid = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()[0])
            self.procs.append((proc, port, pid))

    def rss_mib(self):
        out = []
        for _, _, pid in self.procs:
            with open(f"/proc/{pid}/status") as f:
                out.append(int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024)
        return out

    def sent_per_instance(self):
        shares = []
        for _, port, _ in self.procs:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {INTERNAL_TOKEN}"})
            try:
                text = urllib.request.urlopen(request, timeout=60).read().decode()
            except OSError:
                shares.append("?")  # the scrape counts the outbox; an old build on a large one may not answer in time
                continue
            shares.append(int(sum(float(v) for v in re.findall(r'yona_pushes_total\{[^}]*outcome="sent"[^}]*\} ([\d.e+]+)', text))))
        return shares

    def stop(self):
        for proc, _, _ in self.procs:
            proc.send_signal(2)
        for proc, _, _ in self.procs:
            proc.wait(timeout=60)


def drain(store, instances, sink, service_account, history=0, logged=False, extra_env=None, address="fcm", sink_log=None):
    servers = Servers(store, instances, sink, service_account, extra_env)
    try:
        if logged:
            open(ARGS.log, "w").close()  # nginx appends (O_APPEND): truncating starts the count afresh
        if sink_log:
            open(sink_log, "w").close()
        queue = store.seed(ARGS.n, history, address)
        store.sql(queue)
        start = time.monotonic()
        cpu_before = cpu_share.snapshot()
        left = store.open_rows()
        while left > 0 and time.monotonic() - start < ARGS.limit:
            time.sleep(0.05 if store.kind == "sqlite" else 0.2)
            left = store.open_rows()
        seconds = time.monotonic() - start
        cpu = cpu_share.diff(cpu_before, cpu_share.snapshot())
        shares = servers.sent_per_instance()
        rss = servers.rss_mib()
    finally:
        servers.stop()
    result = {"seconds": seconds, "rate": (ARGS.n - left) / seconds, "rss": rss, "cpu": cpu, "shares": shares,
              "unfinished": left}
    if logged:
        time.sleep(1.5)  # the access log is flushed every second
        seen = {}
        with open(ARGS.log) as f:
            for line in f:
                # each key on its own: an encoder may write the body's keys in any order
                token = re.search(r'"token\\?":\\?"(bench-\d+)\\?"', line)
                message = re.search(r'"messageId\\?":\\?"(\d+)', line)
                if token and message:
                    key = (token.group(1), int(message.group(1)))
                    seen[key] = seen.get(key, 0) + 1
        result["distinct"] = len(seen)
        result["twice"] = sum(1 for v in seen.values() if v > 1)
    if sink_log:
        time.sleep(1.5)
        with open(sink_log) as f:
            lines = [line.strip() for line in f if line.strip()]
        # APNs lines are (body, device path): the body names the message, so a repeat is a push sent twice. Web Push bodies are encrypted, so
        # its lines are the device path only: the count is what can be checked (N, none lost and none sent twice).
        result["at_sink"] = len(lines)
        result["twice"] = len(lines) - len(set(lines)) if address == "apns" else None
    return result


def sdk_run(count):
    """The official Admin SDK: send_each in batches of 500 to the fast sink (its own adapter, as for FCM's host)."""
    script = f"""
import time, firebase_admin, requests
from firebase_admin import credentials, messaging
messaging._MessagingService.FCM_URL = '{ARGS.fast}/v1/projects/{{0}}/messages:send'
app = firebase_admin.initialize_app(credentials.Certificate('{ARGS.sa}'))
service = messaging._get_messaging_service(app)
service._client.session.mount('{ARGS.fast}', requests.adapters.HTTPAdapter(pool_connections=100, pool_maxsize=100))
def message(i):
    return messaging.Message(token=f'bench-{{i}}', data={{'messageId': str(i), 'url': f'http://127.0.0.1/messages/{{i}}'}},
        android=messaging.AndroidConfig(priority='high', ttl=86400, collapse_key='inbox'),
        apns=messaging.APNSConfig(headers={{'apns-priority': '5', 'apns-push-type': 'background', 'apns-collapse-id': 'inbox'}},
                                  payload=messaging.APNSPayload(aps=messaging.Aps(content_available=True))))
messaging.send_each([message(0)])  # the OAuth grant, outside the timing
start = time.monotonic()
ok = 0
for batch in range(0, {count}, 500):
    ok += messaging.send_each([message(i) for i in range(batch, min(batch + 500, {count}))]).success_count
print(ok, time.monotonic() - start)
"""
    out = subprocess.run([ARGS.sdk_python, "-c", script], check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1])


def direct_capacity():
    """The sinks' own capacity with a request like the server's: APNs over HTTP/2 (h2load), Web Push over HTTP/1.1
    (wrk, a body of an encrypted push's size)."""
    payload = os.path.join(ARGS.work, "apns.json")
    with open(payload, "w") as f:
        f.write('{"aps":{"content-available":1},"messageId":"1000001","url":"http://127.0.0.1/messages/1000001"}')
    out = subprocess.run(["h2load", "-n", "200000", "-c", "4", "-m", "100", "-t", "2", "-d", payload,
                          "-H", "apns-push-type: background", "-H", "apns-priority: 5", "-H", "apns-topic: bench",
                          "-H", "authorization: bearer x", "-H", "apns-collapse-id: capacity",
                          f"{ARGS.apns}/3/device/{'0' * 64}"], check=True, capture_output=True, text=True).stdout
    assert "200000 succeeded" in out, out
    apns = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))
    script = os.path.join(ARGS.work, "webpush.lua")
    with open(script, "w") as f:
        f.write("wrk.method = 'POST'\nwrk.body = string.rep('x', 160)\nwrk.headers['Content-Encoding'] = 'aes128gcm'\n"
                "wrk.headers['TTL'] = '86400'\n")
    out = subprocess.run(["wrk", "-t2", "-c64", "-d5s", "-s", script, f"{ARGS.webpush}/push/capacity"], check=True,
                         capture_output=True, text=True).stdout
    return apns, float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def main_direct():
    print(f"direct push drain, {os.cpu_count()} cores, {ARGS.bin}, {ARGS.n} pushes over {DEVICES} devices per run")
    apns_capacity, webpush_capacity = direct_capacity()
    print(f"sink capacity: APNs (HTTP/2 over TLS, h2load -c4 -m100) {apns_capacity:,.0f}/s, "
          f"Web Push (HTTP/1.1, wrk -t2 -c64) {webpush_capacity:,.0f}/s")
    apns_env = {"YONA_APNS_KEY_FILE": ARGS.apns_key, "YONA_APNS_KEY_ID": "BENCHKEY01", "YONA_APNS_TEAM_ID": "BENCHTEAM1",
                "YONA_APNS_TOPIC": "bench", "YONA_APNS_URL": ARGS.apns, "YONA_APNS_CA_FILE": ARGS.apns_ca}
    webpush_env = {"YONA_WEBPUSH_ALLOW_PRIVATE_ENDPOINTS": "true"}
    for kind in ARGS.stores.split():
        for name, address, env, capacity, log in (("APNs", "apns", apns_env, apns_capacity, ARGS.apns_log),
                                                  ("Web Push (encrypted, VAPID)", "webpush", webpush_env, webpush_capacity, ARGS.webpush_log)):
            result = drain(Store(kind, "bench_push"), 1, ARGS.fast, ARGS.sa, extra_env=env, address=address, sink_log=log)
            stopped = f" (stopped after {ARGS.limit} s with {result['unfinished']} left)" if result["unfinished"] else ""
            print(f"{kind}, {name}: {result['seconds']:.2f} s{stopped} = {result['rate']:,.0f}/s = {result['rate'] / capacity:.1%} of "
                  f"the sink; RSS {', '.join(f'{r:.0f}' for r in result['rss'])} MiB; at the sink {result['at_sink']} of {ARGS.n}"
                  + (f", {result['twice']} twice; " if result["twice"] is not None else "; ") + result["cpu"])
            sys.stdout.flush()


def main():
    if ARGS.direct:
        return main_direct()
    print(f"push drain, {os.cpu_count()} cores, {ARGS.bin}, {ARGS.n} pushes over {DEVICES} devices per run")
    capacity = wrk(ARGS.fast)
    capacity_logged = wrk(ARGS.logged)
    print(f"sink capacity (wrk -t2 -c64 -d5s, same body): fast {capacity:,.0f}/s, logged {capacity_logged:,.0f}/s")
    capacity_tls = h2load(ARGS.tls) if ARGS.tls else 0
    if ARGS.tls:
        print(f"TLS sink capacity over HTTP/2 (h2load -c4 -m100, same body): {capacity_tls:,.0f}/s")
    sdk = None
    if ARGS.sdk_python:
        sdk_count = min(ARGS.n, 10_000)
        ok, seconds = sdk_run(sdk_count)
        sdk = sdk_count / seconds
        print(f"Firebase Admin SDK send_each (batches of 500) to the fast sink: {ok} of {sdk_count} in {seconds:.2f} s = {sdk:,.0f}/s")
    rows = []

    def row(name, result, against):
        rows.append((name, result, against))
        ratio_sdk = f"{result['rate'] / sdk:.1f}x" if sdk else "-"
        stopped = f" (stopped after {ARGS.limit} s with {result['unfinished']} left)" if result["unfinished"] else ""
        print(f"{name}: {result['seconds']:.2f} s{stopped} = {result['rate']:,.0f}/s = {result['rate'] / against:.1%} of the sink, "
              f"{ratio_sdk} the SDK; RSS {', '.join(f'{r:.0f}' for r in result['rss'])} MiB; "
              + (f"sent per instance {result['shares']}; " if len(result['shares']) > 1 else "")
              + (f"distinct pushes at the sink {result['distinct']} of {ARGS.n}, sent twice {result['twice']}; " if 'distinct' in result else "")
              + result["cpu"])
        sys.stdout.flush()

    for kind in ARGS.stores.split():
        fresh = drain(Store(kind, "bench_push"), 1, ARGS.fast, ARGS.sa)
        row(f"{kind}, 1 instance, fresh store", fresh, capacity)
        if ARGS.history:
            aged = drain(Store(kind, "bench_push"), 1, ARGS.fast, ARGS.sa, history=ARGS.history)
            row(f"{kind}, 1 instance, after {ARGS.history:,} sent", aged, capacity)
            print(f"{kind}: history slows the drain by {fresh['rate'] / aged['rate']:.2f}x (goal: within 1.5x)")
        if kind == "postgres" and ARGS.tls:
            tls = drain(Store(kind, "bench_push"), 1, ARGS.tls, ARGS.sa_tls, extra_env={"YONA_FCM_CA_FILE": ARGS.tls_ca})
            row(f"{kind}, 1 instance, fresh store, HTTP/2 over TLS", tls, capacity_tls)
        if kind == "postgres":
            for count in [int(k) for k in ARGS.instances.split(",")]:
                result = drain(Store(kind, "bench_push"), count, ARGS.logged, ARGS.sa_logged, logged=True)
                row(f"{kind}, {count} instance{'s' if count > 1 else ''}, logged sink", result, capacity_logged)


main()
