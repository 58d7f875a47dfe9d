"""BERT's uncased WordPiece tokenizer, as all-MiniLM-L6-v2 was trained with it.

Written out here (about sixty lines) rather than taken from `tokenizers`, which would bring
huggingface_hub and its downloader into every install for one vocabulary lookup. The rules are
BERT's BasicTokenizer (clean control characters, split CJK ideographs and punctuation, lowercase,
strip accents) followed by greedy longest-match WordPiece; tests compare the ids with the
reference tokenizer's on awkward inputs. The vocabulary (minilm_vocab.txt, 30,522 entries) is
the model's own `vocab.txt`, Apache-2.0 like the model.
"""

import functools
import unicodedata
from pathlib import Path

VOCAB_FILE = Path(__file__).with_name("minilm_vocab.txt")
MAX_WORD_CHARS = 100  # BERT's own limit: a longer "word" becomes [UNK]
CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"


@functools.cache
def vocabulary() -> dict[str, int]:
    lines = VOCAB_FILE.read_text(encoding="utf-8").split("\n")
    return {token: index for index, token in enumerate(lines) if token}


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    # BERT treats every non-alphanumeric ASCII character as punctuation ("$", "^", "`" too).
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B81F
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _clean(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if code in (0, 0xFFFD):
            continue
        category = unicodedata.category(char)
        if char in "\t\n\r" or category == "Zs":
            out.append(" ")
        elif category.startswith("C"):
            continue
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out)


def basic_tokens(text: str) -> list[str]:
    """Lowercased, accent-free words and punctuation marks, each its own token."""
    tokens = []
    for word in _clean(text).lower().split():
        word = "".join(
            c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
        )
        current = ""
        for char in word:
            if _is_punctuation(char):
                if current:
                    tokens.append(current)
                    current = ""
                tokens.append(char)
            else:
                current += char
        if current:
            tokens.append(current)
    return tokens


def word_pieces(word: str, vocab: dict[str, int]) -> list[str]:
    """Greedy longest-match-first pieces of one word; [UNK] when some part has no piece."""
    if len(word) > MAX_WORD_CHARS:
        return [UNK]
    pieces, start = [], 0
    while start < len(word):
        end, piece = len(word), None
        while start < end:
            candidate = word[start:end] if start == 0 else "##" + word[start:end]
            if candidate in vocab:
                piece = candidate
                break
            end -= 1
        if piece is None:
            return [UNK]
        pieces.append(piece)
        start = end
    return pieces


def encode(text: str, max_tokens: int) -> list[int]:
    """[CLS] ids… [SEP], at most `max_tokens` ids in all (the text's end is cut)."""
    vocab = vocabulary()
    ids = [vocab[CLS]]
    budget = max_tokens - 2
    for word in basic_tokens(text):
        for piece in word_pieces(word, vocab):
            if len(ids) > budget:
                return ids + [vocab[SEP]]
            ids.append(vocab[piece])
    return ids + [vocab[SEP]]
