import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import house_metrics  # noqa: E402

PYPROJECT = '[tool.setuptools.packages.find]\ninclude = ["alpha*", "beta*"]\n'


def tree(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text(PYPROJECT)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_two_packages_importing_each_other_are_a_pair_and_the_largest_share_is_theirs(tmp_path):
    root = tree(
        tmp_path,
        {
            "alpha/__init__.py": "",
            "alpha/one.py": "from beta import two\n\nX = 1\nY = 2\n",
            "beta/__init__.py": "",
            "beta/two.py": "def f():\n    from alpha import one\n    return one\n",
            "alpha/migrations/0001.py": "import beta\n" * 50,
        },
    )
    figures = house_metrics.measure(root)
    assert figures.mutual == [("alpha", "beta")]
    assert figures.local_imports == 1
    assert figures.lines == {"alpha": 4, "beta": 3}


def test_typed_parameters_leave_self_out_and_environment_reads_are_named(tmp_path):
    root = tree(
        tmp_path,
        {
            "alpha/__init__.py": "",
            "alpha/a.py": "import os\n\nclass C:\n    def m(self, a: int, b):\n"
            "        return os.environ.get('X')\n",
            "beta/__init__.py": "",
        },
    )
    figures = house_metrics.measure(root)
    assert (figures.typed_parameters, figures.parameters) == (1, 2)
    assert figures.env_reads == ["alpha/a.py (1, NOT ALLOWED)"]


def test_the_settings_package_reads_the_environment_and_an_allowed_read_is_named_unmarked(
    tmp_path,
):
    reads = "import os\n\nos.environ.setdefault('X', '1')\n"
    root = tree(
        tmp_path,
        {
            "getmcp/__init__.py": "",
            "getmcp/settings.py": reads,
            "getmcp/environment/startup.py": reads,
            "alpha/__init__.py": "",
            "alpha/allowed.py": reads,
            "alpha/other.py": reads,
            "tests/getmcp/test_environment.py": "ALLOWED = {'alpha/allowed.py': {'x'}}\n",
        },
    )
    (root / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["alpha*", "getmcp*"]\n'
    )
    figures = house_metrics.measure(root)
    assert sorted(figures.env_reads) == ["alpha/allowed.py (1)", "alpha/other.py (1, NOT ALLOWED)"]


def test_sleeps_and_skips_are_counted_in_tests_only(tmp_path):
    root = tree(
        tmp_path,
        {
            "alpha/__init__.py": "import time\n\ntime.sleep(0)\n",
            "beta/__init__.py": "",
            "tests/test_x.py": "import asyncio, time, pytest\n\n"
            "@pytest.mark.skipif(True, reason='r')\ndef test_a():\n    time.sleep(1)\n\n"
            "async def test_b():\n    await asyncio.sleep(1)\n    pytest.skip('no')\n",
        },
    )
    figures = house_metrics.measure(root)
    assert figures.test_sleeps == 2
    assert figures.test_skips == 2
