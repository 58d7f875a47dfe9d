"""The dashboard's JSON/YAML fields load strictly, like the definition loader (servers.documents):
a repeated key is refused instead of the last one silently winning."""

import pytest
from django import forms

from dashboard.forms.structured import StructuredField


def test_a_json_object_with_a_repeated_key_is_refused():
    with pytest.raises(forms.ValidationError) as refused:
        StructuredField().clean('{"type": "object", "type": "string"}')
    assert refused.value.messages == ["Not accepted: duplicate key 'type'."]


def test_a_yaml_mapping_with_a_repeated_key_is_refused():
    with pytest.raises(forms.ValidationError) as refused:
        StructuredField().clean("type: object\ntype: string\n")
    assert "duplicate key 'type'" in refused.value.messages[0]
    assert refused.value.messages[0].startswith("Not accepted:")


def test_distinct_keys_load_as_before():
    assert StructuredField().clean('{"type": "object"}') == {"type": "object"}
    assert StructuredField().clean("type: object\nrequired: [a]\n") == {
        "type": "object",
        "required": ["a"],
    }
