"""Connected accounts: an organization's OAuth 2.0 providers, and each person's connection to
them, so a tool calls GitHub, Google or Slack as the person calling it (docs/connected-accounts.md).

The package, in the order a call meets it: models (Provider, Connection), presets (the known
providers' endpoints), providers (admins configure them), flow (the authorization code flow with
PKCE: state, authorize URL, code exchange, through authlib), tokens (a call's token: lookup,
refresh under a cross-process lock), need (what a tool call does without one: URL elicitation
or the link), revoking (by the person, by admins, on removal).
"""
