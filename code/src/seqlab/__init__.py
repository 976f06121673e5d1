"""seqlab: the code of the course, from recurrent networks to the Transformer.

Every module implements one mechanism and reads top to bottom like the chapter that uses it.
Mechanisms come in paths chosen by one explicit argument, ``impl``, with one vocabulary:

- ``"scratch"``, the default everywhere: the readable reference that follows the chapter's
  equations, line by line;
- ``"fast"``, where seqlab has one: the same equations in its own code, rewritten for speed
  (the LSTM with its backward pass written by hand, ``AttentionScore`` with every key at once);
- ``"torch"``, where PyTorch has one: its built-in kernels (RNN, LSTM, GRU, attention).

The tests prove the paths agree with copied weights. A chapter that trains on a faster path
says so with ``impl="fast"`` or ``impl="torch"``, after showing the paths equal.

Shape letters, used in every docstring and shape comment:

====  ==========================================================
N     batch size
T     time steps of a recurrent sequence
L     query / target length
S     key / source length
E     model (feature) width; ``E_in`` an input width, ``E_h`` a hidden width
H     number of attention heads
D     width of one head
V     vocabulary size
====  ==========================================================

Everything is batch first: a sequence batch is ``(N, T, E)``.

Masks have one meaning inside seqlab: a boolean mask where ``True`` means "may attend", as in
``torch.nn.functional.scaled_dot_product_attention``. Classes that mirror
``nn.MultiheadAttention`` take its arguments with its meaning (``True`` = ignore, or float
``-inf``); every conversion lives in ``seqlab.masks``. A query row whose keys are all masked
gives zeros, never NaN.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
