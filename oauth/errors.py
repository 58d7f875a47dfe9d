"""OAuth error answers (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 6750 §3.1)."""


class OAuthError(Exception):
    def __init__(self, error: str, description: str = "", status: int = 400) -> None:
        super().__init__(description or error)
        self.error = error
        self.description = description
        self.status = status

    def as_dict(self) -> dict:
        body = {"error": self.error}
        if self.description:
            body["error_description"] = self.description
        return body
