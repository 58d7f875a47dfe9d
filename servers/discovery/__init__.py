"""Progressive discovery as the domain knows it: the settings a server compiles (config), the tool
search index stored with its snapshot (hybrid: BM25 in search, embeddings in vectors, the
model in embedding and wordpiece, the order in ranking), and the meta-tool names (names). The
gateway serves the meta-tools (gateway/agents); servers/embeddings.py computes the tool vectors."""
