"""What the benchmark drivers share: calling the server's API and Yona's timestamp format."""
import json
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
