"""Sends one text through a provider's official Python client to a base URL (the local emulator), and prints
what the client made of the answer as one JSON object: {"sent": <id>} or {"error": <exception class>, ...}.

Usage: sms_clients.py plivo|twilio BASE_URL ACCOUNT TOKEN FROM TO TEXT
"""
import json
import sys


def plivo(base, account, token, sender, to, text):
    import plivo
    import plivo.rest.client

    plivo.rest.client.PLIVO_API_BASE_URI = base + "/v1/Account"
    # the emulator shares two cores with the whole suite: a 60 s deadline, not the client's default 5 s
    client = plivo.RestClient(auth_id=account, auth_token=token, timeout=60)
    try:
        answer = client.messages.create(src=sender, dst=to, text=text)
        return {"sent": answer.message_uuid[0], "message": answer.message}
    except plivo.exceptions.PlivoRestError as error:
        return {"error": type(error).__name__, "message": str(error)}


def twilio(base, account, token, sender, to, text):
    from twilio.base.exceptions import TwilioRestException
    from twilio.rest import Client

    client = Client(account, token)
    client.api.base_url = base
    try:
        if sender.startswith("MG"):
            message = client.messages.create(to=to, messaging_service_sid=sender, body=text)
        else:
            message = client.messages.create(to=to, from_=sender, body=text)
        return {"sent": message.sid, "status": message.status}
    except TwilioRestException as error:
        return {"error": type(error).__name__, "code": error.code, "status": error.status}


if __name__ == "__main__":
    provider, *arguments = sys.argv[1:]
    print(json.dumps({"plivo": plivo, "twilio": twilio}[provider](*arguments)))
