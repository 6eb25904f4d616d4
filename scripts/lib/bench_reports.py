#!/usr/bin/env python3
"""`scripts/bench reports`: activity-report latency after a year of history against after a week, and analyzer
ingest throughput.

Usage: bench_reports.py BASE_URL PG_URL [--ingest-only]

Two users, each with 10 goals and 5 sharing buddies, made through the API of a running test server; their
activities are then written straight into PostgreSQL (one a year long, >= 100,000 activities, the other a week
long, at the same density). Each report page is fetched alternately for both users; p50/p95 are printed with the
ratio year/week. `--ingest-only` posts network events through the analyzer API from 8 clients and prints events/s.
"""
import random
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import bench_api
from bench_api import ok, stamp

BASE, PG = sys.argv[1], sys.argv[2]
TOKEN = {"Authorization": "Bearer bench-internal-token-0123"}
PER_DAY = 30  # activities per goal per day: 10 goals x 365 days x 30 = 109,500


def call(method, path, headers=None, body=None):
    return bench_api.call(BASE, method, path, headers, body)


def psql(sql):
    return subprocess.run(["psql", "-tAq", PG, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


class User:
    def __init__(self, number):
        created = ok(call("POST", "/users/", body={
            "firstName": "Bench", "lastName": "User", "nickname": "BU", "mobileNumber": number, "deviceName": "Phone",
            "deviceOperatingSystem": "IOS", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1}), 201)
        self.password = created["yonaPassword"]
        self.headers = {"Yona-Password": self.password}
        self.id = created["_links"]["edit"]["href"].split("?")[0].rsplit("/", 1)[1]
        self.number = number
        ok(call("POST", f"/users/{self.id}/confirmMobileNumber", self.headers, {"code": "1234"}))
        self.reload()

    def reload(self):
        self.profile = ok(call("GET", f"/users/{self.id}?requestingUserId={self.id}", self.headers))
        device = self.profile["_embedded"]["yona:devices"]["_embedded"]["yona:devices"][0]
        self.anonymized_id, self.device_index = device["vpnProfile"]["vpnLoginID"].split("$")
        self.device_id = device["_links"]["self"]["href"].rsplit("/", 1)[1]

    def link(self, rel):
        return self.profile["_links"][rel]["href"]


def make_subject(number, days, categories, buddies):
    """A user dated `days` back, with 10 goals and the given buddies, and its activities written into the store."""
    user = User(number)
    since = datetime.now(timezone.utc) - timedelta(days=days)
    edit = user.link("edit")
    ok(call("PUT", edit, user.headers, {"firstName": "Bench", "lastName": "User", "nickname": "BU", "mobileNumber": number,
                                       "creationTime": stamp(since)}))
    kinds = [{"@type": "BudgetGoal", "maxDurationMinutes": 60}, {"@type": "BudgetGoal", "maxDurationMinutes": 0},
             {"@type": "TimeZoneGoal", "zones": ["08:00-12:00", "18:00-20:00"]}]
    for index, category in enumerate(categories[:9]):
        body = dict(kinds[index % 3], creationTime=stamp(since), _links={"yona:activityCategory": {"href": f"{BASE}/activityCategories/{category}"}})
        ok(call("POST", f"/users/{user.id}/goals/", user.headers, body), 201)
    for buddy in buddies:
        ok(call("POST", f"/users/{user.id}/buddies/", user.headers, {
            "_embedded": {"yona:user": {"firstName": "Bud", "lastName": "Dy", "mobileNumber": buddy.number, "emailAddress": "b@example.com"}},
            "message": "bench", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED"}), 201)
        messages = ok(call("GET", f"/users/{buddy.id}/messages/", buddy.headers))
        request = next(m for m in messages["_embedded"]["yona:messages"]
                       if m["@type"] == "BuddyConnectRequestMessage" and "yona:accept" in m["_links"])
        ok(call("POST", request["_links"]["yona:accept"]["href"], buddy.headers, {"properties": {"message": "ok"}}))
    ok(call("GET", f"/users/{user.id}/messages/", user.headers))  # processes the acceptances
    user.reload()
    for buddy in user.profile["_embedded"]["yona:buddies"]["_embedded"]["yona:buddies"]:
        ok(call("PUT", buddy["_links"]["self"]["href"], user.headers, {"lastStatusChangeTime": stamp(since)}))
    user.reload()
    goals = [g["_links"]["self"]["href"].rsplit("/", 1)[1] for g in user.profile["_embedded"]["yona:goals"]["_embedded"]["yona:goals"]]
    assert len(goals) == 10, goals
    device = psql(f"SELECT id FROM devices_anonymized WHERE user_anonymized_id = '{user.anonymized_id}' AND device_index = {user.device_index}")
    count = days * PER_DAY
    values = ",".join(f"('{g}'::uuid)" for g in goals)
    psql(f"""INSERT INTO activities (id, user_anonymized_id, device_anonymized_id, goal_id, start_time, end_time)
             SELECT gen_random_uuid(), '{user.anonymized_id}', '{device}', g.id,
                    now() - (i * interval '1 day' * {days} / {count}) - interval '10 min',
                    now() - (i * interval '1 day' * {days} / {count}) - interval '5 min'
             FROM (VALUES {values}) AS g(id), generate_series(1, {count}) AS i""")
    user.activities = int(psql(f"SELECT count(*) FROM activities WHERE user_anonymized_id = '{user.anonymized_id}'"))
    return user


def timed(path, headers):
    start = time.perf_counter()
    status, body = call("GET", path, headers)
    elapsed = (time.perf_counter() - start) * 1000
    assert status == 200, (path, status, body[:300])
    return elapsed


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def reports():
    categories = [c["_links"]["self"]["href"].rsplit("/", 1)[1]
                  for c in ok(call("GET", "/activityCategories/"))["_embedded"]["yona:activityCategories"]]
    gambling = "192d69f4-8d3e-499b-983c-36ca97340ba9"
    categories = [c for c in categories if c != gambling]
    for index in range(len(categories), 9):  # Yona's set has fewer than ten categories: add some for the bench
        created = ok(call("POST", "/admin/activityCategories/", TOKEN, {
            "localizableName": {"en-US": f"Bench {index}", "nl-NL": f"Bank {index}"}, "mandatoryNoGo": False,
            "smoothwallCategories": [f"bench{index}"], "applications": [], "localizableDescription": {"en-US": "bench"}}))
        categories.append(created["id"] if "id" in created else created["_links"]["self"]["href"].rsplit("/", 1)[1])
    stamp_base = random.randint(1000, 8999)
    buddies = [User(f"+3161{stamp_base}{i:04d}") for i in range(10)]
    year = make_subject(f"+3162{stamp_base}0001", 365, categories, buddies[:5])
    week = make_subject(f"+3162{stamp_base}0002", 7, categories, buddies[5:])
    psql("ANALYZE")  # as autovacuum would soon after such a load; without statistics the planner scans the table
    print(f"year-long user: {year.activities} activities; week-long user: {week.activities} activities; 10 goals and 5 buddies each")
    yesterday = (datetime.now(ZoneInfo("Europe/Amsterdam")) - timedelta(days=1)).strftime("%Y-%m-%d")

    def pages(user):
        goal = user.profile["_embedded"]["yona:goals"]["_embedded"]["yona:goals"][1]["_links"]["self"]["href"].rsplit("/", 1)[1]
        return {
            "week overview page": user.link("yona:weeklyActivityReports"),
            "day overview page": user.link("yona:dailyActivityReports"),
            "day detail": f"{user.link('yona:dailyActivityReports')}{yesterday}/details/{goal}",
            "withBuddies page": user.link("yona:dailyActivityReportsWithBuddies"),
        }

    rounds = 200
    health = [timed("/health", {}) for _ in range(rounds)]
    print(f"/health: p50 {percentile(health, 0.5):.2f} ms, p95 {percentile(health, 0.95):.2f} ms ({rounds} requests)")
    year_pages, week_pages = pages(year), pages(week)
    for name in year_pages:
        for _ in range(10):  # warm-up
            timed(year_pages[name], year.headers)
            timed(week_pages[name], week.headers)
        long, short = [], []
        for _ in range(rounds):
            long.append(timed(year_pages[name], year.headers))
            short.append(timed(week_pages[name], week.headers))
        print(f"{name}: year p50 {percentile(long, 0.5):.2f} ms p95 {percentile(long, 0.95):.2f} ms | "
              f"week p50 {percentile(short, 0.5):.2f} ms p95 {percentile(short, 0.95):.2f} ms | "
              f"p50 ratio year/week {percentile(long, 0.5) / percentile(short, 0.5):.2f} | "
              f"p50 / health p50 {percentile(long, 0.5) / percentile(health, 0.5):.1f}")


def ingest():
    users = [User(f"+3163{random.randint(1000, 8999)}{i:04d}") for i in range(8)]
    for user in users:
        ok(call("POST", f"/users/{user.id}/goals/", user.headers, {
            "@type": "BudgetGoal", "maxDurationMinutes": 0,
            "_links": {"yona:activityCategory": {"href": f"{BASE}/activityCategories/743738fd-052f-4532-a2a3-ba60dcb1adbf"}}}), 201)
    per_client, counts = 400, [0] * len(users)

    def client(index):
        user = users[index]
        now = datetime.now(timezone.utc)
        for i in range(per_client):
            moment = now - timedelta(minutes=per_client - i, seconds=random.randint(0, 30))
            category = ["news", "gambling", "social"][i % 3]
            ok(call("POST", f"/userAnonymized/{user.anonymized_id}/networkActivity/", TOKEN, {
                "deviceIndex": int(user.device_index), "categories": [category], "url": "https://example.com/",
                "eventTime": stamp(moment)}), 204)
            counts[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(users))]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - start
    print(f"analyzer ingest: {sum(counts)} events from {len(users)} clients in {seconds:.1f} s = {sum(counts) / seconds:.0f} events/s")


if "--ingest-only" in sys.argv:
    ingest()
else:
    reports()
