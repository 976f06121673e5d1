import pytest
import torch

from seqlab.device import get_device, seed_everything


def test_default_device_is_available():
    device = get_device()
    assert device.type in ("cuda", "mps", "cpu")
    torch.zeros(1, device=device)


def test_cpu_can_be_asked_for():
    assert get_device("cpu") == torch.device("cpu")


def test_environment_overrides(monkeypatch):
    monkeypatch.setenv("SEQLAB_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_missing_cuda_is_a_clear_error():
    with pytest.raises(ValueError, match="CUDA is not available"):
        get_device("cuda")


def test_seed_everything_repeats_draws():
    seed_everything(5)
    a = torch.randn(3)
    gen = seed_everything(5)
    assert torch.equal(a, torch.randn(3))
    assert torch.equal(
        torch.randn(2, generator=gen), torch.randn(2, generator=torch.Generator().manual_seed(5))
    )


def test_seed_must_be_int():
    with pytest.raises(TypeError):
        seed_everything(1.5)
