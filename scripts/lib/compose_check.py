"""What scripts/compose-test checks on the running compose project (a test server, so codes are 1234):

smoke: two people sign up and confirm, become buddies, one's visit to a gambling site (the mandatory no-go goal of
Yona's test set) reaches the other as a goal conflict, and an announcement reaches both through the workers.
load N: N analyzer posts of conflicts, spaced in time, each retried with its Idempotency-Key until answered (the
crash check kills the app in the middle, then runs `settle`).
settle: waits until every acknowledged conflict is in both inboxes and each phone's last push names its newest message
(pushes fold while they wait, so there are at most as many pushes as messages).
vpn-accounts: prints the smoke test's two people's VPN logins and passwords, one "login password" per line, as their
phones got them (the compose test binds to the directory with them).

usage: compose_check.py PUBLIC INTERNAL WORKERS TOKEN STATE smoke|load N|settle|vpn-accounts
(PUBLIC the app API, INTERNAL the app's internal listener, WORKERS the workers' internal listener)
"""
import json
import re
import sys
import time
import urllib.error
from datetime import datetime, timedelta, timezone

import bench_api
from bench_api import ok, stamp

PUBLIC, INTERNAL, WORKERS, TOKEN, STATE = sys.argv[1:6]
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


def call(method, url, headers=None, body=None, timeout=30):
    return bench_api.call("", method, url, headers, body, timeout)


def person(name, number):
    return bench_api.person(PUBLIC, name, number, "Compose")


def messages(user, kind=None):
    return bench_api.messages(PUBLIC, user, kind)


until = bench_api.until


def conflict(user, moment):
    anonymized, index = user["vpn"].split("$")
    return call("POST", f"{INTERNAL}/userAnonymized/{anonymized}/networkActivity/", {**ADMIN, "Idempotency-Key": stamp(moment)}, {
        "deviceIndex": int(index), "categories": ["gambling"], "url": "https://poker.example/", "eventTime": stamp(moment)}, timeout=10)


def pushes_sent():
    status, body = call("GET", f"{WORKERS}/metrics", timeout=5)
    assert status == 200, status
    return sum(float(v) for v in re.findall(r'^yona_pushes_total\{[^}]*outcome="sent"[^}]*\} (\S+)$', body.decode(), re.M))


def smoke():
    stem = f"+3161{int(time.time()) % 1_000_000:06d}"
    richard, bob = person("Richard", stem + "1"), person("Bob", stem + "2")
    bench_api.befriend(PUBLIC, richard, bob, "Compose")
    assert conflict(richard, datetime.now(timezone.utc))[0] == 204
    copy = until("the conflict at the buddy", lambda: messages(bob, "GoalConflictMessage"))
    assert copy[0]["nickname"] == "Ric" and copy[0].get("url") is None, copy[0]
    until("the push to the buddy's phone", lambda: call("GET", f"{PUBLIC}/test/firebase/messages/last/fiid-{bob['number'][1:]}")[0] == 200)
    ok(call("POST", f"{INTERNAL}/admin/systemMessages/", ADMIN, {"translations": {"en-US": "Maintenance tonight"}}), 202)
    for user in (richard, bob):
        until("the announcement", lambda: messages(user, "SystemMessage"))
    json.dump({"richard": richard, "bob": bob, "acknowledged": 0, "first": 0}, open(STATE, "w"))
    print("smoke: sign-up, buddies, a conflict with its push, an announcement: ok")


def load(count):
    """`count` conflicts, each retried with its Idempotency-Key until answered (as the classifier does), so a post
    whose answer the kill swallowed is neither lost nor counted twice."""
    state = json.load(open(STATE))
    base = datetime.now(timezone.utc) - timedelta(days=60)
    retried = 0
    for i in range(count):
        moment = base + timedelta(minutes=17 * (state["first"] + i))
        deadline = time.time() + 120
        while True:
            try:
                status, _ = conflict(state["richard"], moment)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                status = None
            if status == 204:
                break
            assert status in (None, 502, 503), status
            assert time.time() < deadline, "the app did not come back"
            retried += 1
            time.sleep(0.2)
    state["acknowledged"] += count
    state["first"] += count
    json.dump(state, open(STATE, "w"))
    print(f"load: {count} conflicts acknowledged, {retried} attempts not answered and retried")


def settle():
    state = json.load(open(STATE))
    expected = state["acknowledged"] + 1  # and the smoke test's
    got = until(f"{expected} conflicts at the buddy", lambda: (n := len(messages(state["bob"], "GoalConflictMessage"))) >= expected and n, 120)
    assert got == expected, f"{got} conflicts at the buddy for {expected} acknowledged posts"
    own = len(messages(state["richard"], "GoalConflictMessage"))
    assert own == expected, f"{own} own conflicts for {expected}"
    # Pushes fold while they wait (issue 34): each phone is told once more, of its newest message, however many came.
    # Settled when each phone's last push names the newest message in its inbox; never more pushes than messages.
    total = len(messages(state["richard"])) + len(messages(state["bob"]))

    def told():
        for user in (state["richard"], state["bob"]):
            newest = messages(user)[0]["messageId"]
            status, body = call("GET", f"{PUBLIC}/test/firebase/messages/last/fiid-{user['number'][1:]}")
            if status != 200 or json.loads(body)["data"]["messageId"] != str(newest):
                return False
        return True

    until("each phone told of its newest message", told, 120)
    time.sleep(3)
    sent = pushes_sent()
    assert 2 <= sent <= total, f"{sent} pushes sent for {total} messages"
    print(f"settle: every acknowledged conflict arrived once ({expected} at the user and at the buddy), each phone told of "
          f"its newest message, {int(sent)} pushes for {total} messages")


def vpn_accounts():
    state = json.load(open(STATE))
    for user in (state["richard"], state["bob"]):
        profile = ok(bench_api.call(PUBLIC, "GET", user["profile"], user["headers"], timeout=30))
        vpn = profile["_embedded"]["yona:devices"]["_embedded"]["yona:devices"][0]["vpnProfile"]
        print(vpn["vpnLoginID"], vpn["vpnPassword"])


command = sys.argv[6]
if command == "smoke":
    smoke()
elif command == "load":
    load(int(sys.argv[7]))
elif command == "settle":
    settle()
elif command == "vpn-accounts":
    vpn_accounts()
else:
    raise SystemExit(__doc__)
