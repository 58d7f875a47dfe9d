"""The one exception SCIM services raise: the views answer it in the SCIM error schema
(RFC 7644 §3.12) with its status and `scimType`."""


class ScimError(Exception):
    def __init__(self, status: int, detail: str, scim_type: str | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.scim_type = scim_type


def not_found(kind: str, uid: str) -> ScimError:
    return ScimError(404, f"{kind} {uid} not found")
