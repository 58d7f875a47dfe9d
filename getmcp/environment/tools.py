"""What tools may reach and spend: outbound fetches, the connector doctor, code tools."""

from .parsing import Variables, var


class OutboundVariables(Variables):
    """Outbound fetches and the connector doctor."""

    OUTBOUND_ALLOWED_NETWORKS: list[str] = var(
        [],
        "comma-separated CIDRs that outbound fetches may reach although private (self-hosted "
        "upstreams), e.g. `10.0.0.0/8,127.0.0.0/8`; read at start, so restart after changing "
        "it. Staff can open a range for one organization instead (Django admin, *Network "
        "allowances*). A refused call's error says both",
    )
    # Never where tenants one does not trust define tools: they could reach this machine.
    OUTBOUND_ALLOW_LOOPBACK: bool = var(
        False,
        "local development: outbound fetches may reach this machine's loopback addresses "
        "(`127.0.0.0/8`, `::1`), so tools can call upstreams running beside getmcp; never set "
        "it where people you do not trust define tools",
        shown="`false`; `make run` on a loopback `HOST` sets `true` and prints so",
    )
    # The connector doctor (integrations/doctor) calls SITE_URL through the SSRF guard.
    DOCTOR_ALLOW_PRIVATE_SITE: bool = var(
        False,
        "let the connector doctor call a `SITE_URL` on a private network (a LAN install; it "
        "then admits only that host's own addresses). A `SITE_URL` on loopback (`make run`) "
        "needs no setting ([docs/doctor.md](docs/doctor.md))",
        shown="off",
    )
    DOCTOR_SSE_WAIT_SECONDS: float = var(
        5,
        "how long the doctor waits for a stream's first event before blaming a buffering proxy",
    )


class CodeVariables(Variables):
    """Code tools (kind: code): pydantic-monty sandbox workers and per-call limits."""

    # Scheduled lower (nice) than the process serving MCP, so runaway code never slows pings.
    CODE_SANDBOX_WORKERS: int = var(
        4, "sandbox worker subprocesses (pydantic-monty) per process for `kind: code` tools"
    )
    CODE_SANDBOX_NICE: int = var(
        10, "how much lower sandbox workers are scheduled than the web process"
    )
    # So no tenant starves the others' code tools (servers/kinds/code/shares.py).
    CODE_SANDBOX_PER_ORG: int = var(
        0,
        "sandbox workers one organization may hold at once per process",
        shown="`0` (all workers but one)",
    )
    CODE_SANDBOX_PER_OWNER: int = var(
        0,
        "sandbox workers one paying account (the person behind its organizations) may hold at "
        "once per process, over all its organizations; the last free worker always waits for "
        "an account holding none",
        shown="`0` (all workers but one)",
    )
    # Platform maximums: a tool's own `config.limits` may ask for less, never for more.
    CODE_MAX_WALL_SECONDS: float = var(60, "platform maximum of a code tool call's wall time")
    CODE_MAX_CPU_SECONDS: float = var(
        10, "platform maximum of a code tool call's sandbox execution time"
    )
    CODE_MAX_MEMORY_MB: int = var(128, "platform maximum of a code tool's sandbox heap")
    CODE_MAX_OUTPUT_BYTES: int = var(
        1024 * 1024, "platform maximum of a code tool's result and printed output"
    )
    CODE_MAX_HOST_CALLS: int = var(
        200, "platform maximum of host calls (fetch, log, ...) per code tool call"
    )
    CODE_MAX_CALL_DEPTH: int = var(3, "platform maximum of nested `call_tool`")
