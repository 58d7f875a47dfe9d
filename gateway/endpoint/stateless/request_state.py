"""MRTR: a call that needs the client's input answers `input_required` with a sealed
`requestState` holding the answers of earlier rounds, so the same workflow re-runs from the top
and finds them."""

import hashlib
from typing import Any

import orjson
from django.conf import settings

from mcp_protocol import errors, sealed_state
from mcp_protocol.errors import InputRequired
from mcp_protocol.jsonrpc import Request

from ...pipeline.served import Served
from ..stateless_context import StatelessContext
from .envelope import MRTR_METHODS


def _state_secret() -> bytes:
    secret = settings.MCP_REQUEST_STATE_SECRET
    return secret.encode()


def _state_bind(served: Served, request: Request) -> dict[str, Any]:
    target = request.params.get(MRTR_METHODS[request.method])
    return {
        "server": served.snapshot.server_id,
        "tool": f"{request.method} {target}",
        "credential": served.caller.ident,
    }


def _request_digest(request: Request) -> str:
    """The request's own arguments: answers given for one set of arguments never serve another."""
    arguments = request.params.get("arguments")
    return hashlib.sha256(orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)).hexdigest()


def read_answers(served: Served, request: Request) -> dict[str, Any]:
    """The client's answers so far: those sealed in requestState, then this round's."""
    params = request.params
    answers: dict[str, Any] = {}
    if "requestState" in params:
        token = params["requestState"]
        if not isinstance(token, str):
            raise errors.invalid_params("requestState must be a string")
        state = sealed_state.unseal(
            token, secret=_state_secret(), bind=_state_bind(served, request)
        )
        if state.get("request") != _request_digest(request):
            raise errors.invalid_params(
                "Invalid requestState", {"reason": "issued for other arguments"}
            )
        answers.update(state.get("answers") or {})
    if "inputResponses" in params:
        responses = params["inputResponses"]
        if not isinstance(responses, dict):
            raise errors.invalid_params("inputResponses must be an object")
        for key, value in responses.items():
            if not isinstance(value, dict):
                raise errors.invalid_params(
                    f"inputResponses.{key} must be an object (the client's result)"
                )
        answers.update(responses)
    return answers


def input_required(
    served: Served, request: Request, exc: InputRequired, ctx: StatelessContext
) -> dict[str, Any]:
    state = sealed_state.seal(
        {"answers": ctx.used_answers, "request": _request_digest(request)},
        secret=_state_secret(),
        bind=_state_bind(served, request),
        ttl_seconds=settings.MCP_REQUEST_STATE_TTL_SECONDS,
    )
    return {
        "resultType": "input_required",
        "inputRequests": exc.input_requests,
        "requestState": state,
    }
