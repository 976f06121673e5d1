"""seqlab: the code of the course, from recurrent networks to the Transformer.

Every module implements one mechanism and reads top to bottom like the chapter that uses it.
Mechanisms come in two paths chosen by an explicit argument, ``impl="scratch"`` (the readable
reference that follows the chapter's equations) or ``impl="torch"`` (PyTorch's built-in kernels),
and the tests prove the two agree with copied weights.

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
``nn.MultiheadAttention``'s signature keep its meaning (``True`` = ignore); every conversion
lives in ``seqlab.masks``. A query row whose keys are all masked gives zeros, never NaN.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
