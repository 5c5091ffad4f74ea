"""Hand-derived forward and backward passes of every block in the posts, checked against autograd.

Each operation is a pair ``*_forward(...) -> (out, cache)`` and ``*_backward(dout, cache) -> grads``,
written with plain tensor algebra (no autograd). See docs/backprop.md for the equations.
"""
