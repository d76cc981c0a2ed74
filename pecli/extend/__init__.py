"""``pecli extend``: the RoPE changes that take a model to a longer context, measured and ranked.

- :mod:`~pecli.extend.patches`: each candidate as the ``config.json`` change transformers reads (from the
  scaling records' ``Extension``), and the recipes families shipped;
- :mod:`~pecli.extend.report`: every candidate read back, measured at the target and ranked;
- :mod:`~pecli.extend.measures`: distinguishability and bfloat16 collisions at the target, from the frequencies.
"""
