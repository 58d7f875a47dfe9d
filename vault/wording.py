"""How a missing secret is reported: in the words of the dashboard, whose page is called
Secrets (a person reading an error looks for that name in the sidebar)."""

WHERE = "on the Secrets page of the dashboard (or POST /api/secrets/)"


def missing_secrets(names: list[str]) -> str:
    """'The secret X is not set for this server: add it on the Secrets page ...'"""
    many = len(names) > 1
    return (
        f"The secret{'s' if many else ''} {', '.join(names)} "
        f"{'are' if many else 'is'} not set for this server: add "
        f"{'them' if many else 'it'} {WHERE}."
    )
