"""A real SMTP server (aiosmtpd) for the mail tests, with TLS, AUTH and failure injection.

Usage: smtp_server.py PORT DIRECTORY MODE [CERT KEY USER PASSWORD]
MODE: starttls (STARTTLS required before anything else, then AUTH required), implicit (TLS from the first byte,
AUTH required) or plaintext (no TLS offered; AUTH would be accepted, so a client that sends it is caught).
Recipients whose local part starts with "busy" get 451, with "nobody" 550. Each accepted message is written to
DIRECTORY/<n>.json, parsed by Python's email package; every command that reaches the server is appended to
DIRECTORY/events as "<COMMAND> tls=<bool>". DIRECTORY/ready appears once the server listens.
"""
import email
import email.policy
import json
import os
import signal
import ssl
import sys
import uuid

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, directory, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cert, key, user, password = (sys.argv[4:8] + [None] * 4)[:4]


def tls(server):
    return server.transport is not None and server.transport.get_extra_info("ssl_object") is not None


def event(name, server):
    with open(os.path.join(directory, "events"), "a") as events:
        events.write(f"{name} tls={tls(server)}\n")


class Handler:
    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        event("EHLO", server)
        session.host_name = hostname
        return responses

    async def handle_MAIL(self, server, session, envelope, address, options):
        event("MAIL", server)
        envelope.mail_from = address
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, options):
        event("RCPT", server)
        local = address.split("@")[0]
        if local.startswith("busy"):
            return "451 4.3.0 Mailbox busy, try again later"
        if local.startswith("nobody"):
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        event("DATA", server)
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        parts = {}
        for part in message.walk():
            if part.get_content_maintype() == "text":
                parts[part.get_content_type()] = part.get_content()
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": tls(server),
            "authenticated": bool(session.authenticated),
            "helo": session.host_name,
            "headers": {name: str(message[name]) for name in ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version"] if message[name]},
            "content_type": message.get_content_type(),
            "parts": parts,
            "defects": [type(defect).__name__ for defect in message.defects],
        }
        name = os.path.join(directory, str(uuid.uuid4()))
        with open(name + ".tmp", "w") as out:
            json.dump(record, out)
        os.rename(name + ".tmp", name + ".json")
        return "250 Message accepted"


def authenticator(server, session, envelope, mechanism, auth_data):
    event("AUTH", server)
    ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password
    return AuthResult(success=ok, handled=False)


context = None
if mode in ("starttls", "implicit"):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
# aiosmtpd counts only STARTTLS as TLS for auth_require_tls; an implicit-TLS connection is TLS from the first byte.
options = {"authenticator": authenticator, "auth_required": mode != "plaintext", "auth_require_tls": mode == "starttls"}
if mode == "starttls":
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True, **options)
elif mode == "implicit":
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, ssl_context=context, **options)
else:
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, **options)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
controller.start()
open(os.path.join(directory, "ready"), "w").close()
signal.sigwait({signal.SIGTERM, signal.SIGINT})
controller.stop()
