import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "code" / "tools"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield
