"""The package on a GPU: every model gives on CUDA what it gives on the CPU, forward and gradients.

Skipped where there is no CUDA; `make gpu-check` runs it on a GPU machine. Each case builds a
model on the CPU in float32, copies it (same weights) to CUDA, and compares the two devices'
outputs and the gradients of one loss. GPU kernels add in another order, so the tolerance is
float32's (1e-4), not bit-for-bit. TensorFloat-32, which cuDNN's recurrent kernels use by default
on recent GPUs, rounds products to 10 bits (about 1e-3): off here, so that float32 is compared with
float32 (a chapter may train with it on; its claims are checked over runs, not bit for bit).
"""

import copy

import pytest
import torch

from seqlab import attention, multihead
from seqlab.lstm import GRU, LSTM
from seqlab.lstmn import LSTMN
from seqlab.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from seqlab.rnn import RNN
from seqlab.seq2seq import Seq2Seq
from seqlab.transformer import Transformer

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


@pytest.fixture(autouse=True)
def _float32_on_cuda():
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


N, T, E_IN, E_H = 3, 7, 5, 6


def _tokens(vocab: int, *shape: int) -> torch.Tensor:
    return torch.randint(3, vocab, shape)  # ids 0-2 are the special tokens (PAD, BOS, EOS)


def _recurrent(cls, impl):
    return cls(E_IN, E_H, impl=impl), (torch.randn(N, T, E_IN),)


def _mha(impl):
    mask = torch.rand(N, T) < 0.3
    mask[:, 0] = False
    return multihead.MultiheadAttention(8, 2, impl=impl), (torch.randn(N, T, 8),) * 3 + (mask,)


def _seq2seq(attention_kind, style):
    model = Seq2Seq(11, 13, embed_size=8, hidden_size=10, attention=attention_kind, style=style)
    return model, (_tokens(11, N, T), torch.tensor([T, 4, 1]), _tokens(13, N, 5))


def _transformer(impl):
    model = Transformer(11, 13, d_model=16, nhead=2, dim_feedforward=32, impl=impl)
    return model, (_tokens(11, N, T), torch.tensor([T, 4, 1]), _tokens(13, N, 5))


MODELS = {
    "rnn-scratch": lambda: _recurrent(RNN, "scratch"),
    "rnn-torch": lambda: _recurrent(RNN, "torch"),
    "lstm-scratch": lambda: _recurrent(LSTM, "scratch"),
    "lstm-fast": lambda: _recurrent(LSTM, "fast"),
    "lstm-torch": lambda: _recurrent(LSTM, "torch"),
    "gru-scratch": lambda: _recurrent(GRU, "scratch"),
    "gru-torch": lambda: _recurrent(GRU, "torch"),
    "lstmn": lambda: (LSTMN(E_IN, E_H), (torch.randn(N, T, E_IN), torch.tensor([T, 4, 1]))),
    "mha-scratch": lambda: _mha("scratch"),
    "mha-torch": lambda: _mha("torch"),
    "sinusoidal": lambda: (SinusoidalPositionalEncoding(8), (torch.randn(N, T, 8),)),
    "learned-positions": lambda: (LearnedPositionalEncoding(T, 8), (torch.randn(N, T, 8),)),
    "seq2seq-plain": lambda: _seq2seq(None, "bahdanau"),
    "seq2seq-bahdanau": lambda: _seq2seq("additive", "bahdanau"),
    "seq2seq-luong-dot": lambda: _seq2seq("dot", "luong"),
    "transformer-scratch": lambda: _transformer("scratch"),
    "transformer-torch": lambda: _transformer("torch"),
}


def _first_tensor(out):
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def _run(model, inputs):
    """The output, and the gradients of one loss for every parameter and floating input."""
    inputs = [x.detach().requires_grad_() if x.is_floating_point() else x for x in inputs]
    out = _first_tensor(model(*inputs))
    out.float().pow(2).mean().backward()
    grads = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    grads |= {f"input {i}": x.grad for i, x in enumerate(inputs) if x.is_floating_point()}
    return out.detach(), grads


@pytest.mark.parametrize("name", MODELS)
def test_same_results_on_cuda_as_on_the_cpu(name):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    gpu = copy.deepcopy(model).cuda()
    out_cpu, grads_cpu = _run(model, inputs)
    out_gpu, grads_gpu = _run(gpu, [x.cuda() for x in inputs])
    assert out_gpu.is_cuda
    torch.testing.assert_close(out_gpu.cpu(), out_cpu, atol=1e-4, rtol=1e-4)
    assert grads_gpu.keys() == grads_cpu.keys()
    for key, grad in grads_cpu.items():
        torch.testing.assert_close(grads_gpu[key].cpu(), grad, atol=1e-4, rtol=1e-4, msg=key)


@pytest.mark.parametrize("impl", ["scratch", "torch"])
def test_attention_on_cuda(impl):
    q, k, v = torch.randn(2, 4, 3), torch.randn(2, 6, 3), torch.randn(2, 6, 5)
    mask = torch.rand(2, 4, 6) < 0.7
    mask[1, 2] = False  # a query with no key: zeros on both devices
    out_cpu, _ = attention.scaled_dot_product_attention(q, k, v, mask, impl=impl)
    out_gpu, _ = attention.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda(), mask.cuda(), impl=impl)
    torch.testing.assert_close(out_gpu.cpu(), out_cpu, atol=1e-5, rtol=1e-5)
    assert (out_gpu[1, 2] == 0).all()
