"""A model's weights: checkpoint files, and what the q/k projections say about the rotary pairs.

- :mod:`~pecli.weights.checkpoint`: safetensors files read by their header, tensor by tensor (below the
  schemes: the ``learned`` scheme reads its table from one);
- :mod:`~pecli.weights.usage`: which rotary frequency pairs a model's q/k projections use, and which
  layout (half or interleaved) they were trained in;
- :mod:`~pecli.weights.permute`: the layout permutation of Meta → HF Llama conversions.
"""
