"""`scripts/bench mail [N] [sqlite|postgres]`: how fast one release yona-server drains N queued buddy-invitation
mails into a real SMTP server (aiosmtpd, STARTTLS and AUTH required: the tests' Fixtures/smtp_server.py), against
that server's own capacity for the same mail.

1. A test server runs with `YONA_SMTP_URL` pointing at a port where nothing listens yet, without its workers; one
   user invites N buddies through the API, each with an e-mail address (each queues its invitation mail; the
   request's immediate attempt finds no relay, so every mail waits in the outbox).
2. The server stops; the relay starts on that port; the server starts again with its workers and the
   `text-outbox` job drains.
3. Mails per second = N / (last mail accepted - first); every address must get exactly one, parsed by Python's
   email package without a defect. Peak and final RSS show whether memory stays flat. The relay's capacity is
   Python's smtplib sending the same mail the same way (a connection per mail: STARTTLS, AUTH, MAIL, RCPT, DATA),
   from four processes.

Arguments: BIN WORK N STORE DATABASE_URL PYTHON_WITH_AIOSMTPD SMTP_SERVER_SCRIPT
"""
import concurrent.futures
import glob
import json
import multiprocessing
import os
import smtplib
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_api import call, free_port, person, server_env, start_server  # noqa: E402

bin_path, work, n, store, database_url, relay_python, relay_script = sys.argv[1:8]
n = int(n)


relay_port, port = free_port(), free_port()
base = f"http://127.0.0.1:{port}"
# A CA of the bench's own and the relay's certificate from it (as the tests' relay has), trusted by the server only
# (libcurl's OpenSSL checks strictly: a CA needs its key usage).
ca, ca_key = os.path.join(work, "ca.pem"), os.path.join(work, "ca.key")
cert, key = os.path.join(work, "relay.pem"), os.path.join(work, "relay.key")
for command in (
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=Bench CA",
     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", ca_key, "-out", ca],
    ["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key,
     "-out", cert + ".csr"],
    ["openssl", "x509", "-req", "-in", cert + ".csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "1", "-out", cert,
     "-extfile", "/dev/stdin"],
):
    subprocess.run(command, check=True, capture_output=True, input=b"subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
user, password = "bench-relay", "bench-relay-password"
env = server_env(
    database_url, port, YONA_TEST_SERVER="true", YONA_BUDDY_REQUESTS_PER_ACCOUNT_PER_DAY="100000000", YONA_SMS_PROVIDER="log",
    YONA_EMAIL_PROVIDER="smtp", YONA_SMTP_URL=f"smtp://127.0.0.1:{relay_port}", YONA_SMTP_USERNAME=user, YONA_SMTP_PASSWORD=password,
    YONA_SMTP_CA_FILE=ca, YONA_EMAIL_FROM="noreply@yona.example")


def start(*arguments):
    return start_server(bin_path, env, work, *arguments)


# 1. queue N invitation mails with no relay listening
server = start("--no-workers")
inviter = person(base, "Inviter", "+31610000000")


def invite(i):
    status, body = call(base, "POST", f"/users/{inviter['id']}/buddies/", inviter["headers"], {
        "_embedded": {"yona:user": {"firstName": "Invitee", "lastName": f"N{i}", "mobileNumber": f"+3162{i:07d}",
                                    "emailAddress": f"invitee{i}@example.com"}},
        "message": "buddy?", "sendingStatus": "REQUESTED", "receivingStatus": "REQUESTED"}, timeout=60)
    return status


queue_start = time.time()
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    statuses = list(pool.map(invite, range(n)))
queued_in = time.time() - queue_start
assert statuses.count(201) == n, f"invitations made: {statuses.count(201)} of {n} ({set(statuses)})"
server.terminate()
server.wait()
time.sleep(8)  # every mail's first backoff (5 s, jittered up to 1.5x) has passed: all are due

# 2. the relay, then the server with its workers
mails = os.path.join(work, "mails")
os.makedirs(mails, exist_ok=True)
# aiosmtpd warns about its own deprecated internals on every login: its output goes to a file
relay = subprocess.Popen([relay_python, relay_script, str(relay_port), mails, "starttls", cert, key, user, password],
                         stdout=open(os.path.join(work, "relay.log"), "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(100):
        if os.path.exists(os.path.join(mails, "ready")):
            break
        time.sleep(0.1)
    server = start()
    rss_start = int([line.split()[1] for line in open(f"/proc/{server.pid}/status") if line.startswith("VmRSS")][0])
    deadline = time.time() + 900
    while time.time() < deadline and len(glob.glob(os.path.join(mails, "*.json"))) < n:
        time.sleep(0.2)
    time.sleep(2)  # anything sent twice would arrive now
    status = {line.split()[0]: line.split()[1] for line in open(f"/proc/{server.pid}/status") if line.split()[0] in ("VmRSS:", "VmHWM:")}
    server.terminate()
    server.wait()
    files = glob.glob(os.path.join(mails, "*.json"))
    times = sorted(os.stat(f).st_mtime for f in files)
    records = [json.load(open(f)) for f in files]

    # 3. the relay's own capacity for the same mail, sent the same way
    for f in glob.glob(os.path.join(mails, "*.json")):
        os.remove(f)
    capacity_mails = min(n, 2000)
    context = ssl.create_default_context(cafile=ca)
    body = ("From: Inviter <noreply@yona.example>\r\nTo: Invitee <invitee@example.com>\r\nSubject: Become friend of Inviter on Yona!\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + "Install the Yona app.\r\n" * 20)

    def send_many(count):
        for _ in range(count):
            with smtplib.SMTP("127.0.0.1", relay_port, timeout=30) as smtp:
                smtp.starttls(context=context)
                smtp.login(user, password)
                smtp.sendmail("noreply@yona.example", ["invitee@example.com"], body)
        return count

    started = time.time()
    with multiprocessing.Pool(4) as pool:
        sent = sum(pool.map(send_many, [capacity_mails // 4] * 4))
    while len(glob.glob(os.path.join(mails, "*.json"))) < sent and time.time() - started < 300:
        time.sleep(0.1)
    relay_rate = sent / (time.time() - started)
finally:
    relay.terminate()
    relay.wait()

recipients = [address for record in records for address in record["rcpt_tos"]]
defects = sum(len(record["defects"]) for record in records)
plain_or_unauthenticated = sum(1 for record in records if not record["tls"] or not record["authenticated"])
seconds = times[-1] - times[0]
print(f"mail, {store}, {os.cpu_count()} cores, {bin_path}")
print(f"queued {n} invitation mails through POST /users/{{id}}/buddies/ in {queued_in:.1f} s ({n / queued_in:.0f} invitations/s, relay down)")
print(f"at the relay: {len(records)} mails, {len(set(recipients))} distinct addresses (goal: {n} and {n}: each mail exactly once), "
      f"{defects} MIME defects, {plain_or_unauthenticated} without TLS or AUTH")
print(f"drained in {seconds:.2f} s = {n / seconds:.0f} mails/s; the relay alone takes {relay_rate:.0f} mails/s from smtplib "
      f"(ratio {n / seconds / relay_rate:.3f})")
print(f"server RSS: {rss_start / 1024:.1f} MiB when the drain began, {int(status['VmRSS:']) / 1024:.1f} MiB after it, peak {int(status['VmHWM:']) / 1024:.1f} MiB")
if len(records) != n or len(set(recipients)) != n or defects or plain_or_unauthenticated:
    sys.exit("mail bench: not every mail arrived exactly once, whole and over TLS with AUTH")
