"""What the benchmark drivers share: calling the server's API and Yona's timestamp format."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import timezone


def call(base, method, path, headers=None, body=None, timeout=120):
    """One request; `path` is absolute or under `base`. Returns (status, body bytes), errors included."""
    status, body, _ = call_with_header(base, method, path, None, headers, body, timeout)
    return status, body


def call_with_header(base, method, path, header, headers=None, body=None, timeout=120):
    """`call`, also returning the answer's `header` (None when absent or not asked for)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(path if path.startswith("http") else base + path, data=data, method=method,
                                     headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(), response.headers.get(header) if header else None
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers.get(header) if header else None


def ok(answer, expected=200):
    status, body = answer
    assert status == expected, (status, body[:500])
    return json.loads(body) if body else {}


def stamp(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"


def person(base, name, number, last_name="Test"):
    """Signs up and confirms (a test server's code, 1234) someone with an Android phone whose Instance ID is
    `fiid-<number without +>`: their id, number, password headers, VPN login and profile path."""
    created = ok(call(base, "POST", "/users/", body={
        "firstName": name, "lastName": last_name, "nickname": name[:3], "mobileNumber": number, "deviceName": "Phone",
        "deviceOperatingSystem": "ANDROID", "deviceAppVersion": "1.0", "deviceAppVersionCode": 1,
        "deviceFirebaseInstanceId": f"fiid-{number[1:]}"}, timeout=30), 201)
    user = {"id": created["_links"]["edit"]["href"].split("?")[0].rsplit("/", 1)[1], "number": number,
            "headers": {"Yona-Password": created["yonaPassword"]}}
    user["profile"] = f"/users/{user['id']}?requestingUserId={user['id']}"
    ok(call(base, "POST", f"/users/{user['id']}/confirmMobileNumber", user["headers"], {"code": "1234"}, timeout=30))
    profile = ok(call(base, "GET", user["profile"], user["headers"], timeout=30))
    user["vpn"] = profile["_embedded"]["yona:devices"]["_embedded"]["yona:devices"][0]["vpnProfile"]["vpnLoginID"]
    return user


def messages(base, user, kind=None):
    """Every message in the user's inbox (all pages, newest first), or those of one kind."""
    found, url = [], f"/users/{user['id']}/messages/?size=100"
    while url:
        page = ok(call(base, "GET", url, user["headers"], timeout=30))
        found += page.get("_embedded", {}).get("yona:messages", [])
        url = page.get("_links", {}).get("next", {}).get("href")
    return [m for m in found if kind is None or m["@type"] == kind]


def until(what, check, seconds=60):
    """`check()`'s first truthy answer, asked every half second for up to `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def befriend(base, asking, asked, last_name="Test"):
    """`asking` sends `asked` a buddy request, `asked` accepts it, and `asking` has the answer."""
    ok(call(base, "POST", f"/users/{asking['id']}/buddies/", asking["headers"], {
        "_embedded": {"yona:user": {"firstName": "Bob", "lastName": last_name, "mobileNumber": asked["number"],
                                    "emailAddress": "b@example.com"}},
        "message": "buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED"}, timeout=30), 201)
    request = until("the buddy request", lambda: [m for m in messages(base, asked, "BuddyConnectRequestMessage")
                                                  if "yona:accept" in m["_links"]])
    ok(call(base, "POST", request[0]["_links"]["yona:accept"]["href"], asked["headers"], {"properties": {"message": "yes"}},
            timeout=30))
    until("the acceptance", lambda: messages(base, asking, "BuddyConnectResponseMessage"))


def free_port():
    """A loopback port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(database_url, port, **settings):
    """The environment of a bench's release server on `port`: fixed secrets, log level warning, cheap Argon2id and no
    rate limits (a bench measures throughput, not the limits), plus `settings`."""
    return dict(os.environ, YONA_DATABASE_URL=database_url, YONA_PORT=str(port), YONA_INTERNAL_TOKEN="bench-internal-token-0123",
                YONA_RECOVERY_KEY="YmVuY2gtcmVjb3Zlcnkta2V5LTAxMjM0NTY3ODlhYmM", YONA_LOG_LEVEL="warning",
                YONA_PUBLIC_BASE_URL="https://yona.example", YONA_KDF_OPSLIMIT="1", YONA_KDF_MEMLIMIT="8192",
                YONA_RATE_LIMIT_PER_CLIENT_PER_MINUTE="100000000", YONA_RATE_LIMIT_PER_NUMBER_PER_HOUR="100000000", **settings)


def start_server(bin_path, env, work, *arguments):
    """`yona-server serve ARGUMENTS` with `env`, logging to WORK/server.log; returns the process once `/ready` answers."""
    base = f"http://127.0.0.1:{env['YONA_PORT']}"
    log = open(os.path.join(work, "server.log"), "a")
    process = subprocess.Popen([bin_path, "serve", *arguments], env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if process.poll() is None and call(base, "GET", "/ready", timeout=1)[0] == 200:
                return process
        except OSError:  # not listening yet
            pass
        time.sleep(0.1)
    sys.exit("the server did not start: " + open(os.path.join(work, "server.log")).read()[-2000:])
