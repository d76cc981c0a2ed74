"""``pecli verify``: a user's own position-encoding arrays held to the reference, and the bug named.

- :mod:`~pecli.verification.arrays`: the door — which arrays go with which scheme, the memory they need,
  and the verdict for vector and bias schemes;
- :mod:`~pecli.verification.rope`: RoPE's cos and sin, streamed, with each known cause tried as a hypothesis;
- :mod:`~pecli.verification.rope_base`: the base the arrays were made with, read off their own angles;
- :mod:`~pecli.verification.mrope`: M-RoPE position ids against the model's rule;
- :mod:`~pecli.verification.stream`: one pass over the arrays, block by block, each value held to how it is stored;
- :mod:`~pecli.verification.files`: the ``.npy``/``.npz`` files read a block of rows at a time;
- :mod:`~pecli.verification.report`: what verify answers.
"""
