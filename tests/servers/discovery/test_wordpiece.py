"""The tokenizer gives the model the ids its own reference tokenizer gives (the file holds the
ids HF `tokenizers` produced from the model's tokenizer.json for each text)."""

import json
from pathlib import Path

import pytest

from servers.discovery import wordpiece

REFERENCE = json.loads(Path(__file__).with_name("wordpiece_reference.json").read_text())


@pytest.mark.parametrize("case", REFERENCE, ids=lambda case: case["text"][:24])
def test_ids_match_the_reference_tokenizer(case):
    assert wordpiece.encode(case["text"], 512) == case["ids"]


def test_a_long_text_is_cut_to_the_token_limit_and_still_ends_with_sep():
    vocab = wordpiece.vocabulary()
    ids = wordpiece.encode("word " * 1000, 64)
    assert len(ids) == 64
    assert ids[0] == vocab[wordpiece.CLS] and ids[-1] == vocab[wordpiece.SEP]
