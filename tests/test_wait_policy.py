"""code/tools/reports/wait_policy.py: on a busy machine `make` lets PyTorch's threads sleep, not spin, while
they wait. That is only allowed because the wait policy cannot change a result: tested here."""

import os
import subprocess
import sys
from pathlib import Path

from tools.reports import wait_policy

ROOT = Path(__file__).resolve().parents[1]
TOOL = ["-m", "tools.reports.wait_policy"]

TRAIN = """
import torch
from seqlab.seq2seq import Seq2Seq
from seqlab.device import seed_everything
torch.set_num_threads(2)
seed_everything(0)
model = Seq2Seq(12, 12, embed_size=16, hidden_size=32, attention="additive", bidirectional=True,
                dropout=0.2)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
src = torch.randint(4, 12, (64, 20))
tgt = torch.randint(4, 12, (64, 21))
for _ in range(5):
    logits = model(src, torch.full((64,), 20), tgt[:, :-1])[0]
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
print(repr(sum(p.double().sum().item() for p in model.parameters())))
"""


def _run(policy):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", TRAIN], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return out.stdout.strip()


def test_the_wait_policy_does_not_change_what_is_computed():
    default, passive = _run(None), _run("PASSIVE")
    assert default and default == passive


def test_a_policy_already_set_is_left_alone():
    env = dict(os.environ, OMP_WAIT_POLICY="ACTIVE", PYTHONPATH=str(ROOT / "code"))
    out = subprocess.run([sys.executable, *TOOL], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout == ""


def test_busy_cores_is_between_zero_and_the_core_count():
    busy = wait_policy.busy_cores(0.05)
    assert 0.0 <= busy <= (os.cpu_count() or 1) + 1e-9
