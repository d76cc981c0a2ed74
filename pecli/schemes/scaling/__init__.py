"""RoPE's context-extension scalings: inverse frequencies in float64, as HuggingFace transformers computes
them (``modeling_rope_utils.py``), one module per job.

* :mod:`~pecli.schemes.scaling.keys` — the ``rope_scaling`` keys, each declared once (HF spelling);
* :mod:`~pecli.schemes.scaling.record` — what a type is (:class:`ScalingType`, with every fact pecli asks
  of it), what its rule reads (:class:`RopeModel`) and returns (:class:`ScaledFrequencies`);
* one module per type, its formulas, rule, checks and record: :mod:`~pecli.schemes.scaling.unscaled`
  (none), :mod:`~pecli.schemes.scaling.linear`, :mod:`~pecli.schemes.scaling.ntk` (ntk, dynamic),
  :mod:`~pecli.schemes.scaling.yarn`, :mod:`~pecli.schemes.scaling.llama3`,
  :mod:`~pecli.schemes.scaling.longrope`;
* :mod:`~pecli.schemes.scaling.recipes` — what ``pecli extend`` may build from a type;
* :mod:`~pecli.schemes.scaling.registry` — :data:`SCALINGS`, and how a name finds its record;
* :mod:`~pecli.schemes.scaling.value` — one scaling, :class:`RopeScaling`, read from and written to HF's form;
* :mod:`~pecli.schemes.scaling.rope_type` — the one reader of the type a HF block names (``rope_type``, else ``type``);
* :mod:`~pecli.schemes.scaling.compute` — the entry point, :func:`compute_inv_freq`.
"""
