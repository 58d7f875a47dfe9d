"""One pipeline for every surface a client reaches (docs/architecture.md, "The request's
path"): authenticate -> caller -> narrow -> charge -> dispatch -> record, each stage a module
with a typed input and output. The transports (gateway/endpoint) frame bytes around it."""
