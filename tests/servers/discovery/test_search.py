"""The tool index: words split from names, light stemming, and only tools a query touches."""

from servers.discovery.hybrid import LazyIndex
from servers.discovery.search import ToolIndex, terms

TOOLS = [
    {"name": "listInvoices", "description": "Returns a page of invoices."},
    {"name": "send_invoice_email", "title": "Email an invoice", "description": "Sends it."},
    {
        "name": "convert",
        "description": "Converts money.",
        "inputSchema": {"properties": {"from_currency": {}, "to_currency": {}}},
    },
]


def test_names_split_into_stemmed_words_without_stopwords():
    assert terms("listInvoices for the send_invoice-emails") == [
        "list",
        "invoic",
        "send",
        "invoic",
        "email",
    ]


def test_a_search_ranks_by_name_title_description_and_argument_names():
    index = ToolIndex(TOOLS)
    assert index.search("email an invoice")[0][0] == "send_invoice_email"
    assert index.search("currency")[0][0] == "convert"
    assert index.search("zebra") == []
    assert index.search("the of and") == []


def test_the_index_is_built_once():
    lazy = LazyIndex()
    assert lazy.get(TOOLS) is lazy.get([])
