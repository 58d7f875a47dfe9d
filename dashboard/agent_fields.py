"""The agent settings (servers/discovery/config.py) on the dashboard's server and tool forms: the
fields, their starting values from the row, and the `agents` / `output_budget` they save.
Only values that differ from the defaults are stored, so exports stay as short as before."""

from django import forms

from servers.discovery import config

DISCOVERY_CHOICES = [
    ("auto", "Automatic: above the threshold"),
    ("on", "Always: list the search, describe and call tools"),
    ("off", "Never: list every tool"),
]


def _number(label, help_text, low, high, initial=None):
    # Not required: a form posted without them keeps what the server has.
    return forms.IntegerField(
        label=label,
        help_text=help_text,
        min_value=low,
        max_value=high,
        initial=initial,
        required=False,
    )


class AgentSettingsFields(forms.Form):
    discovery_mode = forms.ChoiceField(
        label="Tool discovery",
        choices=DISCOVERY_CHOICES,
        initial="auto",
        required=False,
        help_text="Big servers flood a model's context with tool schemas: instead, list three "
        "tools that search, describe and call the others. Clients that ask for the full list "
        "(?tools=all on the URL) still get it; pinned tools are always listed.",
    )
    discovery_threshold = _number(
        "Discovery threshold",
        "Automatic discovery turns on above this many tools.",
        1,
        config.MAX_THRESHOLD,
        config.DEFAULT_THRESHOLD,
    )
    budget_max_chars = _number(
        "Result budget (characters)",
        "A longer result is cut at a line or word, and kept whole for the client to read in "
        "pages. 0: no limit in characters.",
        0,
        config.MAX_BUDGET_CHARS,
        config.DEFAULT_MAX_CHARS,
    )
    budget_max_tokens = _number(
        "Result budget (tokens)",
        "Estimated as characters / 4. Claude Code cuts results at 25,000. 0: no limit.",
        0,
        config.MAX_BUDGET_CHARS // config.CHARS_PER_TOKEN,
        config.DEFAULT_MAX_TOKENS,
    )
    budget_ttl_seconds = _number(
        "Keep whole results for (seconds)",
        "How long a cut result stays readable.",
        60,
        config.MAX_TTL_SECONDS,
        config.DEFAULT_TTL_SECONDS,
    )
    long_wait_seconds = _number(
        "Long-call wait (seconds)",
        "A task tool called by a client without Tasks waits this long (sending progress), "
        "then answers a handle to check later. 0: never wait this way.",
        0,
        config.MAX_WAIT_SECONDS,
        config.DEFAULT_WAIT_SECONDS,
    )

    code_mode = forms.BooleanField(
        label="Code mode",
        required=False,
        help_text="Under discovery, also list getmcp_run_code: the agent sends a short Python "
        "program that calls this server's tools, run in the code sandbox (each call counts, "
        "is checked and logged as a direct call), so a job of several steps is one call.",
    )

    def initial_agent_settings(self, agents) -> None:
        settings = config.read(agents)
        self.initial.update(
            discovery_mode=settings.discovery_mode,
            discovery_threshold=settings.discovery_threshold,
            budget_max_chars=settings.max_chars,
            budget_max_tokens=settings.max_tokens,
            budget_ttl_seconds=settings.ttl_seconds,
            long_wait_seconds=settings.wait_seconds,
            code_mode=settings.code_mode,
        )

    def agent_settings(self, data, current) -> dict:
        """The `agents` mapping to save; a field left out keeps its `current` value."""
        now = config.read(current)
        code_mode_on = data.get("code_mode", now.code_mode)
        data = {
            "discovery_mode": data.get("discovery_mode") or now.discovery_mode,
            **{
                field: now_value if data.get(field) is None else data[field]
                for field, now_value in (
                    ("discovery_threshold", now.discovery_threshold),
                    ("budget_max_chars", now.max_chars),
                    ("budget_max_tokens", now.max_tokens),
                    ("budget_ttl_seconds", now.ttl_seconds),
                    ("long_wait_seconds", now.wait_seconds),
                )
            },
        }
        defaults = config.AgentSettings()
        wanted = {
            ("discovery", "mode"): (data.get("discovery_mode"), defaults.discovery_mode),
            ("discovery", "threshold"): (
                data.get("discovery_threshold"),
                defaults.discovery_threshold,
            ),
            ("outputBudget", "maxChars"): (data.get("budget_max_chars"), defaults.max_chars),
            ("outputBudget", "maxTokens"): (data.get("budget_max_tokens"), defaults.max_tokens),
            ("outputBudget", "ttlSeconds"): (
                data.get("budget_ttl_seconds"),
                defaults.ttl_seconds,
            ),
            ("longCalls", "waitSeconds"): (data.get("long_wait_seconds"), defaults.wait_seconds),
        }
        agents: dict = {}
        for (group, key), (value, default) in wanted.items():
            if value is not None and value != default:
                agents.setdefault(group, {})[key] = value
        # A checkbox left unticked posts nothing: the box is what the page showed, so it wins;
        # the program limits have no field and are kept as they are.
        code_mode = dict((current or {}).get("codeMode") or {})
        code_mode.pop("enabled", None)
        if code_mode_on:
            code_mode["enabled"] = True
        if code_mode:
            agents["codeMode"] = code_mode
        return agents


class ToolAgentFields(forms.Form):
    pinned = forms.BooleanField(
        required=False,
        label="Pinned",
        help_text="Listed directly even when the server lists discovery tools instead.",
    )
    budget_max_chars = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=config.MAX_BUDGET_CHARS,
        label="Result budget (characters)",
        help_text="Optional: a smaller budget than the server's for this tool.",
    )
    budget_max_tokens = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=config.MAX_BUDGET_CHARS // config.CHARS_PER_TOKEN,
        label="Result budget (tokens)",
        help_text="Optional: estimated as characters / 4.",
    )

    def initial_tool_budget(self, budget) -> None:
        budget = budget if isinstance(budget, dict) else {}
        self.initial.setdefault("budget_max_chars", budget.get("maxChars"))
        self.initial.setdefault("budget_max_tokens", budget.get("maxTokens"))

    @staticmethod
    def tool_budget(data) -> dict:
        budget = {}
        if data.get("budget_max_chars"):
            budget["maxChars"] = data["budget_max_chars"]
        if data.get("budget_max_tokens"):
            budget["maxTokens"] = data["budget_max_tokens"]
        return budget
