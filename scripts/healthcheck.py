"""Container health check: healthy when the app answers HTTP below 500 on the given URL.

A 4xx still proves the process serves requests (ALLOWED_HOSTS may not include 127.0.0.1).
"""

import sys
import urllib.error
import urllib.request

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/login/"

try:
    with urllib.request.urlopen(URL, timeout=5) as response:
        status = response.status
except urllib.error.HTTPError as exc:
    status = exc.code
except OSError as exc:
    print(f"unhealthy: {exc}")
    sys.exit(1)
sys.exit(0 if status < 500 else 1)
