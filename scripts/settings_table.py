"""Writes README.md's settings table from the declarations in getmcp/environment/.

    python scripts/settings_table.py           # rewrite the table in README.md
    python scripts/settings_table.py --check   # exit 1 if README.md's table is not current

`make settings-table` runs the first; tests/test_readme.py checks the same as the second.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN = "<!-- settings table: `make settings-table` writes it from getmcp/environment/ -->"
END = "<!-- end of the settings table -->"


def with_table(text: str, rows: list[str]) -> str:
    """`text` with what lies between the markers replaced by `rows`."""
    head, rest = text.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + "\n".join(rows) + "\n" + END + tail


def current_rows() -> list[str]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from getmcp.environment import table_rows

    return table_rows()


def main(argv: list[str]) -> int:
    text = README.read_text()
    wanted = with_table(text, current_rows())
    if "--check" in argv:
        if wanted != text:
            print("README.md's settings table is out of date: run `make settings-table`")
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
