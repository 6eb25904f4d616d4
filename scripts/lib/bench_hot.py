#!/usr/bin/env python3
"""`scripts/bench ingest` and `scripts/bench read`: the hot paths as ratios against `/health`, measured with wrk.

Usage: bench_hot.py ingest|read BASE_URL sqlite|postgres DB SERVER_PID WORK_DIR [--prefill N] [--bin YONA_SERVER]

DB is the SQLite file or the PostgreSQL URL the running server (a test server, `serve --no-workers`) uses.
Users, goals and buddies are made through the API; bulk history (activities, inbox messages) is copied in
SQL from rows the API made, so the rows are real ones.

ingest: 8 users (each with the mandatory gambling no-go goal, a social budget goal, a device with a Firebase
Instance ID, and the same 5 sharing buddies); wrk posts network events round-robin over them, each with its own
Idempotency-Key:
  - no goal:  category `news`, which none of them has a goal on;
  - merge:    category `social` at the current time (extends the open activity of the budget goal);
  - conflict: category `gambling`, each event 17 minutes before the previous one of that user, so every post
              opens a new activity on the no-go goal and raises a conflict (the user's message and 5 buddy copies,
              each sealed, with pushes queued).
Then N activities (default 1,000,000) are added to those users' history and the runs repeat.

read: the profile (`GET /users/{u}` with Yona-Password) of a user with 5 buddies, and the inbox page
(`GET /users/{u}/messages/?page=0&size=20`) of a user with 100 messages, then with 100,000 (copied in SQL; the
copies' inbox count changes are folded by `YONA_SERVER workers`, started with the environment the server got and
stopped once they are, before the page is measured: what a server with its workers does a few seconds after such
a burst). Between them, reads
during writes: the classifier's events for that user and its buddies alone, then at the same time as the profile
reads (each its own wrk, 32 connections), to show whether a read waits behind a queue of writes.
"""
import re
import signal
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import bench_api
from bench_api import ok, stamp

MODE, BASE, KIND, DB, SERVER_PID, WORK = sys.argv[1:7]
PREFILL = int(sys.argv[sys.argv.index("--prefill") + 1]) if "--prefill" in sys.argv else 1_000_000
SERVER_BIN = sys.argv[sys.argv.index("--bin") + 1] if "--bin" in sys.argv else None
TOKEN = {"Authorization": "Bearer bench-internal-token-0123"}
DURATION, CONNECTIONS = "10s", 32
YEARS_BACK = 20  # goals and users are dated this far back so that every back-dated conflict counts


def call(method, path, headers=None, body=None):
    return bench_api.call(BASE, method, path, headers, body)


def sql(statement):
    """Runs one statement against the server's store; returns the first column of the first row, if any."""
    if KIND == "postgres":
        return subprocess.run(["psql", "-tAq", DB, "-c", statement], check=True, capture_output=True, text=True).stdout.strip()
    connection = sqlite3.connect(DB, timeout=60)
    try:
        row = connection.execute(statement).fetchone()
        connection.commit()
        return "" if row is None else str(row[0])
    finally:
        connection.close()


class User:
    def __init__(self, number, since=None):
        created = ok(call("POST", "/users/", body={
            "firstName": "Bench", "lastName": "User", "nickname": "BU", "mobileNumber": number, "deviceName": "Phone",
            "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1}), 201)
        self.number, self.password = number, created["yonaPassword"]
        self.headers = {"Yona-Password": self.password}
        self.id = created["_links"]["edit"]["href"].split("?")[0].rsplit("/", 1)[1]
        ok(call("POST", f"/users/{self.id}/confirmMobileNumber", self.headers, {"code": "1234"}))
        self.reload()
        if since is not None:
            ok(call("PUT", self.profile["_links"]["edit"]["href"], self.headers, {
                "firstName": "Bench", "lastName": "User", "nickname": "BU", "mobileNumber": number, "creationTime": stamp(since)}))
        self.reload()
        ok(call("PUT", self.device["_links"]["self"]["href"], self.headers, {"name": "Phone", "firebaseInstanceId": f"bench-{number}"}))

    def reload(self):
        self.profile = ok(call("GET", f"/users/{self.id}?requestingUserId={self.id}", self.headers))
        self.device = self.profile["_embedded"]["yona:devices"]["_embedded"]["yona:devices"][0]
        self.anonymized_id, self.device_index = self.device["vpnProfile"]["vpnLoginID"].split("$")

    def befriend(self, buddy):
        ok(call("POST", f"/users/{self.id}/buddies/", self.headers, {
            "_embedded": {"yona:user": {"firstName": "Bud", "lastName": "Dy", "mobileNumber": buddy.number, "emailAddress": "b@example.com"}},
            "message": "bench", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED"}), 201)
        messages = ok(call("GET", f"/users/{buddy.id}/messages/?size=100", buddy.headers))
        request = next(m for m in messages["_embedded"]["yona:messages"]
                       if m["@type"] == "BuddyConnectRequestMessage" and "yona:accept" in m["_links"])
        ok(call("POST", request["_links"]["yona:accept"]["href"], buddy.headers, {"properties": {"message": "ok"}}))


def make_people(count, prefix):
    since = datetime.now(timezone.utc) - timedelta(days=365 * YEARS_BACK)
    stem = f"+316{prefix}{int(datetime.now().timestamp()) % 1000:03d}"
    buddies = [User(f"{stem}9{i:02d}") for i in range(5)]
    users = []
    for i in range(count):
        user = User(f"{stem}0{i:02d}", since)
        # (The mandatory gambling goal counts from long before any user: Goal.mandatoryCreationTime.)
        ok(call("POST", f"/users/{user.id}/goals/", user.headers, {
            "@type": "BudgetGoal", "maxDurationMinutes": 60, "creationTime": stamp(since),
            "_links": {"yona:activityCategory": {"href": f"{BASE}/activityCategories/{SOCIAL}"}}}), 201)
        for buddy in buddies:
            user.befriend(buddy)
        ok(call("GET", f"/users/{user.id}/messages/", user.headers))  # processes the acceptances
        user.reload()
        users.append(user)
    return users, buddies


SOCIAL = "27395d17-7022-4f71-9daf-f431ff4f11e8"


def lua_list(values):
    return "{" + ",".join(f'"{v}"' for v in values) + "}"


ONLY = __import__("os").environ.get("YONA_BENCH_ONLY", "")


def wrk(name, url, script):
    if ONLY and ONLY not in name and name not in ("/health", "nginx fixed answer"):
        return {"name": name + " (skipped: YONA_BENCH_ONLY)", "rate": 0, "p50": "-", "p99": "-", "timeouts": 0}
    path = f"{WORK}/{re.sub('[^a-z0-9]+', '-', name.lower())}.lua"
    with open(path, "w") as handle:
        handle.write(script)
    output = subprocess.run(["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{DURATION}", "--timeout", "10s", "--latency", "-s", path, url],
                            check=True, capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    latency = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", output, re.M))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    assert bad is None, f"{name}: {bad.group(0)}\n{output}"
    assert errors is None or "read 0" in errors.group(1) and "connect 0" in errors.group(1), f"{name}: {errors.group(0)}"
    timeouts = int(re.search(r"timeout (\d+)", errors.group(1)).group(1)) if errors else 0
    return {"name": name, "rate": rate, "p50": latency.get("50", "?"), "p99": latency.get("99", "?"), "timeouts": timeouts}


def health():
    return wrk("/health", f"{BASE}/health", "wrk.method = \"GET\"\n")


NGINX = __import__("os").environ.get("YONA_NGINX_URL")


def floors():
    """`/health` and, beside it, nginx's fixed answer on the same machine (scripts/lib/common.sh), one after the other."""
    fixed = wrk("nginx fixed answer", f"{NGINX}/health", "wrk.method = \"GET\"\n") if NGINX else None
    return health(), fixed


def analyzer_script(users, category, spaced, round_offset=0):
    """Posts one event per request, round-robin over the users, each with a fresh Idempotency-Key. `spaced`: each
    user's events lie 17 minutes apart, going back in time from `round_offset` days ago (at most 5,000 per user and
    thread, about 59 days), so that each opens a new activity."""
    return f"""
local users = {lua_list(u.anonymized_id for u in users)}
local devices = {{{",".join(u.device_index for u in users)}}}
local counter, threads = 0, 0
local run = "{category}-" .. tostring(os.time())
local start = os.time() - {round_offset} * 86400
function setup(thread)
    threads = threads + 1
    thread:set("tid", threads)
end
function request()
    counter = counter + 1
    local i = counter % #users + 1
    local body
    if {"true" if spaced else "false"} then
        local seconds = start - ((tid - 1) * 5000 + math.floor(counter / #users) + 1) * 17 * 60
        body = string.format('{{"deviceIndex":%d,"categories":["{category}"],"url":"https://example.com/x","eventTime":"%s"}}',
            devices[i], os.date("!%Y-%m-%dT%H:%M:%S.000+0000", seconds))
    else
        body = string.format('{{"deviceIndex":%d,"categories":["{category}"],"url":"https://example.com/x"}}', devices[i])
    end
    return wrk.format("POST", "/userAnonymized/" .. users[i] .. "/networkActivity/",
        {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer bench-internal-token-0123",
          ["Idempotency-Key"] = run .. "-" .. tid .. "-" .. counter}}, body)
end
"""


def get_script(path, headers):
    lines = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    return f'wrk.method = "GET"\nwrk.path = "{path}"\n{lines}\n'


def rss():
    with open(f"/proc/{SERVER_PID}/status") as status:
        return int(re.search(r"VmHWM:\s+(\d+)", status.read()).group(1)) / 1024


def show(rows, floor, fixed=None):
    print("| run | requests/s | ratio to /health | ratio to nginx | p50 | p99 | over 10 s |")
    print("|---|---|---|---|---|---|---|")
    for row in ([fixed] if fixed else []) + rows:
        to_nginx = f"{row['rate'] / fixed['rate']:.3f}" if fixed else "-"
        print(f"| {row['name']} | {row['rate']:,.0f} | {row['rate'] / floor:.3f} | {to_nginx} | {row['p50']} | {row['p99']} "
              f"| {row['timeouts']} |")
    sys.stdout.flush()


def uid(value):
    """A UUID literal as the store keeps UUIDs (SQLite: a 16-byte blob or upper-case text, depending on the driver)."""
    if KIND == "postgres":
        return f"'{value}'"
    kind = sql("SELECT typeof(id) FROM users_anonymized LIMIT 1")
    return f"X'{value.replace('-', '')}'" if kind == "blob" else f"'{value.upper()}'"


def id_expression(table):
    """A fresh id of the column's type (SQLite stores UUIDs as text or blob depending on the driver)."""
    if KIND == "postgres":
        return "gen_random_uuid()"
    kind = sql(f"SELECT typeof(id) FROM {table} LIMIT 1")
    if kind == "blob":
        return "randomblob(16)"
    return ("upper(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-a' || "
            "substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))")


def series(count):
    if KIND == "postgres":
        return f"generate_series(1, {count}) AS s(k)"
    return f"(WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c WHERE k < {count}) SELECT k FROM c) AS s"


def shift(column, seconds_expr):
    """`column` moved `seconds_expr` seconds back."""
    if KIND == "postgres":
        return f"{column} - ({seconds_expr}) * interval '1 second'"
    return f"{column} - ({seconds_expr})"


def prefill_activities(users, count):
    """Copies each user's newest activities back in time until `count` activities are stored in all."""
    per_user = count // len(users)
    ids = ",".join(uid(u.anonymized_id) for u in users)
    template = sql(f"SELECT count(*) FROM activities WHERE user_anonymized_id IN ({ids})")
    assert int(template) > 0, "no activity to copy"
    for user in users:
        sql(f"""INSERT INTO activities (id, user_anonymized_id, device_anonymized_id, goal_id, start_time, end_time)
                SELECT {id_expression('activities')}, a.user_anonymized_id, a.device_anonymized_id, a.goal_id,
                       {shift('a.start_time', 's.k * 1200 + 86400 * 3650')}, {shift('a.end_time', 's.k * 1200 + 86400 * 3650')}
                FROM (SELECT * FROM activities WHERE user_anonymized_id = {uid(user.anonymized_id)} LIMIT 1) AS a, {series(per_user)}""")
    sql("ANALYZE")
    return int(sql("SELECT count(*) FROM activities"))


def ingest():
    users, _ = make_people(8, "3")
    floor, fixed = floors()
    rows = [floor,
            wrk("ingest, no goal", BASE, analyzer_script(users, "news", False)),
            wrk("ingest, merge", BASE, analyzer_script(users, "social", False)),
            wrk("ingest, new conflict (5 buddies)", BASE, analyzer_script(users, "gambling", True))]
    stored = int(sql("SELECT count(*) FROM activities"))
    print(f"\n{KIND}, {stored} activities stored (a store as good as empty)")
    show(rows, floor["rate"], fixed)
    total = prefill_activities(users, PREFILL)
    floor, fixed = floors()
    rows = [floor,
            wrk("ingest, no goal", BASE, analyzer_script(users, "news", False)),
            wrk("ingest, merge", BASE, analyzer_script(users, "social", False)),
            wrk("ingest, new conflict (5 buddies)", BASE, analyzer_script(users, "gambling", True, 200))]
    print(f"\n{KIND}, {total} activities stored")
    show(rows, floor["rate"], fixed)
    print(f"\npeak RSS of yona-server: {rss():.1f} MiB")


def conflicts(user, count):
    now = datetime.now(timezone.utc)
    for i in range(count):
        moment = now - timedelta(minutes=17 * (i + 1))
        ok(call("POST", f"/userAnonymized/{user.anonymized_id}/networkActivity/", TOKEN, {
            "deviceIndex": int(user.device_index), "categories": ["gambling"], "url": "https://example.com/",
            "eventTime": stamp(moment)}), 204)


def prefill_messages(user, total):
    present = int(sql(f"SELECT count(*) FROM messages WHERE user_anonymized_id = {uid(user.anonymized_id)}"))
    columns = sql("SELECT string_agg(column_name, ',') FROM information_schema.columns WHERE table_name = 'messages'") \
        if KIND == "postgres" else None
    if columns is None:
        connection = sqlite3.connect(DB)
        columns = ",".join(row[1] for row in connection.execute("PRAGMA table_info(messages)"))
        connection.close()
    others = [c for c in columns.split(",") if c not in ("id", "creation_time")]
    # New ids above any the server draws (53-bit random) would be unrealistic; take random 53-bit ones too.
    new_id = "(floor(random() * 9007199254740991)::bigint + 1)" if KIND == "postgres" else "(abs(random()) % 9007199254740991 + 1)"
    sql(f"""INSERT INTO messages (id, creation_time, {",".join(others)})
            SELECT {new_id}, {shift('m.creation_time', 's.k * 60 + 86400')}, {",".join("m." + c for c in others)}
            FROM (SELECT * FROM messages WHERE user_anonymized_id = {uid(user.anonymized_id)} AND is_sent_item = {'false' if KIND == 'postgres' else '0'}
                  ORDER BY creation_time LIMIT 1) AS m, {series(total - present)}""")
    sql("ANALYZE")
    # The copies went through the store's triggers like any message: the workers fold their changes into the inbox's
    # count (`fold-inbox-counts`); the page is measured once they have, as it would be a few seconds later.
    fold_changes()
    return int(sql(f"SELECT count(*) FROM messages WHERE user_anonymized_id = {uid(user.anonymized_id)}"))


def fold_changes():
    """Runs `workers` beside the server until the inbox count changes are folded; prints how long that took."""
    exists = "SELECT to_regclass('inbox_count_changes') IS NOT NULL" if KIND == "postgres" else \
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'inbox_count_changes'"
    if SERVER_BIN is None or sql(exists) not in ("t", "1"):  # an earlier build (YONA_BENCH_BIN) counts the inbox
        return
    started = time.monotonic()
    workers = subprocess.Popen([SERVER_BIN, "workers"], stdout=subprocess.DEVNULL, stderr=open(f"{WORK}/workers.log", "ab"))
    try:
        while int(sql("SELECT count(*) FROM inbox_count_changes")) > 0:
            assert workers.poll() is None, f"workers stopped (exit {workers.returncode}); see {WORK}/workers.log"
            assert time.monotonic() - started < 300, "the inbox count changes were not folded within 5 minutes"
            time.sleep(0.2)
    finally:
        workers.send_signal(signal.SIGINT)
        workers.wait(60)
    print(f"inbox count changes folded by `workers` in {time.monotonic() - started:.1f} s (start included)")


def read():
    users, buddies = make_people(1, "4")
    user = users[0]
    conflicts(user, 95)  # with the 5 acceptances: about 100 messages
    fold_changes()
    count = int(sql(f"SELECT count(*) FROM messages WHERE user_anonymized_id = {uid(user.anonymized_id)}"))
    profile = get_script(f"/users/{user.id}?requestingUserId={user.id}", user.headers)
    inbox = get_script(f"/users/{user.id}/messages/?page=0&size=20", user.headers)
    floor, fixed = floors()
    rows = [floor, wrk("profile (5 buddies, 2 goals, 1 device)", BASE, profile),
            wrk(f"inbox page of 20 ({count} messages)", BASE, inbox)]
    # Reads while the classifier writes: the user's and the buddies' events (a merge on the user's social goal, no
    # goal for the buddies), alone and then at the same time as the profile reads, 32 connections each.
    writes = analyzer_script([user] + buddies, "social", False)
    rows += [wrk("ingest alone (merge and no goal)", BASE, writes)]
    with ThreadPoolExecutor(2) as pool:
        during = pool.submit(wrk, "profile during ingest", BASE, profile)
        time.sleep(0.2)
        ingesting = pool.submit(wrk, "ingest during profile reads", BASE, writes)
        rows += [during.result(), ingesting.result()]
    count = prefill_messages(user, 100_000)
    rows += [wrk(f"inbox page of 20 ({count} messages)", BASE, inbox)]
    print(f"\n{KIND}")
    show(rows, floor["rate"], fixed)
    print(f"\npeak RSS of yona-server: {rss():.1f} MiB")


def post_conflicts(user, count, threads=16):
    """`count` conflicts for `user` as fast as `threads` clients post them (each event 17 minutes before the last, so
    each opens a new activity); returns the seconds they took."""
    now = datetime.now(timezone.utc)

    def post(i):
        moment = now - timedelta(minutes=17 * (i + 1))
        status, body = call("POST", f"/userAnonymized/{user.anonymized_id}/networkActivity/",
                            {**TOKEN, "Idempotency-Key": f"deep-{user.id}-{i}"}, {
                                "deviceIndex": int(user.device_index), "categories": ["gambling"], "url": "https://example.com/",
                                "eventTime": stamp(moment)})
        assert status == 204, (status, body[:200])

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(post, range(count)))
    return time.monotonic() - started


def pushes_sent():
    _, body = call("GET", "/metrics")
    return sum(float(v) for v in re.findall(r'^yona_pushes_total\{[^}]*outcome="sent"[^}]*\} (\S+)$', body.decode(), re.M))


def open_pushes():
    return int(sql("SELECT count(*) FROM push_outbox WHERE state = 'pending'"))


def until_drained(limit=300):
    """Seconds until no push is open and no inbox count change is left to fold."""
    started = time.monotonic()
    while open_pushes() > 0 or int(sql("SELECT count(*) FROM inbox_count_changes")) > 0:
        assert time.monotonic() - started < limit, "the background work did not finish"
        time.sleep(0.05)
    return time.monotonic() - started


def deep():
    """Issue 34's deep queues, each against its quiet baseline in this run (the server runs its workers)."""
    floor, fixed = floors()
    # 1. non-conflict ingest while a burst of 5,000 conflicts (a user with 5 buddies: 30,000 messages and their
    #    pushes, to 6 phones) is worked off
    users, buddies = make_people(1, "5")
    people = users + buddies
    until_drained()
    news = analyzer_script(people, "news", False)
    quiet = wrk("ingest, no goal (quiet)", BASE, news)
    sent_before = pushes_sent()
    burst = post_conflicts(users[0], 5000)
    depth = open_pushes()
    changes = int(sql("SELECT count(*) FROM inbox_count_changes"))
    started = time.monotonic()
    during = wrk("ingest, no goal (right after 5,000 conflicts)", BASE, news)
    drained = until_drained() + time.monotonic() - started - 10
    sent = pushes_sent() - sent_before
    print(f"\n{KIND}: 5,000 conflicts (6 phones) posted in {burst:.1f} s ({5000 / burst:,.0f}/s); then {depth} pushes open and "
          f"{changes:,} inbox count changes to fold; all worked off {max(drained, 0):.1f} s after the measurement ended "
          f"(0: before); pushes sent for the 30,000 messages: {sent:,.0f}")
    show([floor, quiet, during], floor["rate"], fixed)
    print(f"ingest during / quiet: {during['rate'] / quiet['rate']:.2f} (goal: >= 0.8)")

    # 2. 200 phones, 100 announcements: every phone told of its newest copy, few pushes
    with ThreadPoolExecutor(8) as pool:
        phones = list(pool.map(lambda i: User(f"+316{6}{int(time.time()) % 1000:03d}{i:03d}"), range(200)))
    until_drained()
    sent_before = pushes_sent()
    users_now = int(sql("SELECT count(*) FROM users_anonymized"))
    started = time.monotonic()
    for i in range(100):
        ok(call("POST", "/admin/systemMessages/", TOKEN, {"translations": {"en-US": f"Announcement {i}"}}), 202)
    posted = time.monotonic() - started
    expected = users_now * 100
    while int(sql("SELECT count(*) FROM messages WHERE announcement_id IS NOT NULL")) < expected:
        assert time.monotonic() - started < 600, "the fan-out did not finish"
        time.sleep(0.05)
    fanned = time.monotonic()
    while open_pushes() > 0:
        time.sleep(0.02)
    told = time.monotonic() - fanned
    sent = pushes_sent() - sent_before
    newest = {}
    agg = "string_agg(CAST(id AS text), ',')" if KIND == "postgres" else "group_concat(id)"
    for user in phones:
        ids = sql(f"""SELECT {agg} FROM messages
                      WHERE user_anonymized_id = {uid(user.anonymized_id)} AND creation_time =
                      (SELECT MAX(creation_time) FROM messages WHERE user_anonymized_id = {uid(user.anonymized_id)})""")
        newest[user.id] = set(ids.split(","))
    wrong = 0
    for user in phones:
        status, body = call("GET", f"/test/firebase/messages/last/bench-{user.number}")
        if status != 200 or __import__("json").loads(body)["data"]["messageId"] not in newest[user.id]:
            wrong += 1
    print(f"\n{KIND}: 100 announcements to {users_now} users ({len(phones)} of them new phones) posted in {posted:.1f} s; "
          f"{expected:,} copies fanned out {fanned - started:.1f} s after the first POST; every push sent {told:.2f} s after the "
          f"fan-out's end (goal: <= 5 s); pushes sent: {sent:,.0f} for {len(phones) + len(people)} phones (goal: <= 2 per phone); "
          f"phones whose last push is not their newest message: {wrong}")

    # 3. the inbox page of a reader with 20,000 messages, right after they arrived (their pushes and counts being
    #    worked off) and once all is quiet
    reader = User(f"+3167{int(time.time()) % 1000:03d}000", datetime.now(timezone.utc) - timedelta(days=365 * YEARS_BACK))
    inbox = get_script(f"/users/{reader.id}/messages/?page=0&size=20", reader.headers)
    arrived = post_conflicts(reader, 20000)
    depth = open_pushes()
    changes = int(sql("SELECT count(*) FROM inbox_count_changes"))
    during = wrk("inbox page of 20, right after 20,000 messages arrived", BASE, inbox)
    until_drained()
    quiet = wrk("inbox page of 20, quiet (20,000 messages)", BASE, inbox)
    print(f"\n{KIND}: 20,000 conflicts for the reader posted in {arrived:.1f} s; then {depth} pushes open, {changes:,} inbox count "
          f"changes to fold")
    show([floor, quiet, during], floor["rate"], fixed)
    p99 = lambda row: float(re.match(r"([\d.]+)", row["p99"]).group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[re.search(r"[a-z]+$", row["p99"]).group(0)]
    print(f"inbox during / quiet: {during['rate'] / quiet['rate']:.2f} (goal: >= 0.8), p99 {p99(during) / p99(quiet):.2f}x (goal: <= 2x)")
    print(f"\npeak RSS of yona-server: {rss():.1f} MiB")


{"ingest": ingest, "read": read, "deep": deep}[MODE]()
