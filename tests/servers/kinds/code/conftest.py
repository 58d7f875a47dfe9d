import pytest

from servers.kinds import code


@pytest.fixture
def code_tool():
    """Compile a code tool from its source (and optional config/outputSchema)."""

    def make(source: str, *, limits=None, output_schema=None, name="t", server=None):
        config = {"language": "python", "source": source}
        if limits:
            config["limits"] = limits
        assert code.validate_config(config) == []
        tool_def = {"name": name, "config": config, "_server": server or {}}
        if output_schema:
            tool_def["outputSchema"] = output_schema
        return code.compile(tool_def)

    return make
