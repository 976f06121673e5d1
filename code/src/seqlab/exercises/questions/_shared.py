"""Checks that several chapters' questions share (no questions here: ``QUESTIONS`` is empty)."""

import torch

QUESTIONS = ()


def fresh_each_call(name: str, *cases: tuple):
    """``extra`` for a question whose text asks for a *new* tensor: on each of ``cases`` (argument
    tuples), two calls return tensors that share no memory, and writing into the first result
    leaves the second call's result as it was. A slice of a mask cached between calls (a view of
    one tensor, and wrong past the cache's size) fails it; a tensor built by each call passes."""

    def extra(answer, public):
        for args in cases:
            first = answer(*args)
            if not isinstance(first, torch.Tensor) or not first.numel():
                continue  # the cases themselves judged the result
            before = first.clone()
            second = answer(*args)
            if isinstance(second, torch.Tensor) and second.numel():
                shared = first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()
                first.logical_not_() if first.dtype == torch.bool else first.neg_()
                changed = not torch.equal(answer(*args), before)
                if shared or changed:
                    raise AssertionError(
                        f"{name} returned views of one tensor kept between calls (a cached mask, "
                        "sliced?): writing into one result changed the next; return a new tensor "
                        "from each call"
                    )

    return extra
