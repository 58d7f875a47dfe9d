from pathlib import Path

import pytest


@pytest.fixture
def examples_yaml():
    return Path(__file__).resolve().parents[3] / "examples" / "demo.yaml"
