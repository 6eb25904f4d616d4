"""Sends one push through a provider's official Python client to a base URL (the local emulator), and prints
what the client made of the answer as one JSON object. The exit code is 0 whatever the provider answered.

Usage: push_clients.py apns BASE_URL CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC DEVICE_TOKEN MESSAGE_ID
         → {"sent": true, "apnsId": <apns-id>} or {"sent": false, "status": <status>, "reason": <reason>}
       push_clients.py webpush ENDPOINT P256DH AUTH VAPID_KEY_FILE SUBJECT TEXT [TOPIC]
         → {"status": <status>} or {"error": "WebPushException", "status": <status>[, "retryAfter": <value>]}

apns: aioapns 4.0 with token (.p8 ES256) auth, a background push at priority 5, over HTTP/2 and TLS to
BASE_URL (https://127.0.0.1:PORT), trusting only CA_FILE. KEY_FILE is the PEM private key itself.
webpush: pywebpush 2.5.0 with aes128gcm (RFC 8291) and VAPID (RFC 8292) claims {"sub": SUBJECT}; the library
fills in aud (the endpoint's origin) and exp (12 hours on). VAPID_KEY_FILE is a PEM P-256 private key
(PKCS#8 or SEC1), read by py_vapid as is. TOPIC, when given, goes as RFC 8030's `Topic` header.
"""
import json
import sys

# the emulators share two cores with the whole suite: a 60 s deadline, not the clients' defaults
TIMEOUT = 60


def apns(base, ca_file, key_file, key_id, team_id, topic, device_token, message_id):
    import asyncio
    import ssl
    from urllib.parse import urlparse

    from aioapns import APNs, NotificationRequest, PRIORITY_NORMAL, PushType
    from aioapns.connection import APNsProductionClientProtocol

    address = urlparse(base)

    # aioapns connects to (and sends `host:`) its protocol class's APNS_SERVER:APNS_PORT; point it at the emulator.
    # It drops a connection idle for INACTIVITY_TIME (10 s) and resends what was in flight: wait as long as we do.
    class Emulator(APNsProductionClientProtocol):
        APNS_SERVER = address.hostname
        APNS_PORT = address.port or 443
        INACTIVITY_TIME = TIMEOUT

    async def send():
        context = ssl.create_default_context(cafile=ca_file)  # trusts CA_FILE only; checks the certificate's IP/name
        context.set_alpn_protocols(["h2"])  # aioapns offers no ALPN itself and speaks HTTP/2 regardless
        with open(key_file) as file:
            key = file.read()
        client = APNs(key=key, key_id=key_id, team_id=team_id, topic=topic, ssl_context=context)
        client.pool.protocol_class = Emulator
        request = NotificationRequest(
            device_token=device_token,
            message={"aps": {"content-available": 1}, "messageId": message_id,
                     "url": "https://yona.example/messages/" + message_id},
            priority=int(PRIORITY_NORMAL),
            push_type=PushType.BACKGROUND,
        )
        try:
            result = await asyncio.wait_for(client.send_notification(request), TIMEOUT)
        finally:
            client.pool.close()
            await asyncio.sleep(0)  # let the transports close before the loop does
        if result.is_successful:
            return {"sent": True, "apnsId": result.notification_id}
        return {"sent": False, "status": int(result.status), "reason": result.description}

    return asyncio.run(send())


def webpush(endpoint, p256dh, auth, vapid_key_file, subject, text, topic=""):
    from pywebpush import WebPushException, webpush

    try:
        response = webpush(
            subscription_info={"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}},
            data=text,
            vapid_private_key=vapid_key_file,  # a path to an existing file: py_vapid reads the PEM itself
            vapid_claims={"sub": subject},
            content_encoding="aes128gcm",
            ttl=86400,
            headers={"Urgency": "normal", **({"Topic": topic} if topic else {})},
            timeout=TIMEOUT,
        )
        return {"status": response.status_code}
    except WebPushException as error:
        answer = {"error": type(error).__name__, "status": error.status_code}
        if error.retry_after is not None:
            answer["retryAfter"] = error.retry_after
        return answer


if __name__ == "__main__":
    provider, *arguments = sys.argv[1:]
    print(json.dumps({"apns": apns, "webpush": webpush}[provider](*arguments)))
