"""``pecli wavelengths``: each frequency pair's wavelength, and Men et al.'s bound on the base.

- :mod:`~pecli.wavelengths.spectrum`: the per-pair table and its summary;
- :mod:`~pecli.wavelengths.base_bound`: Men et al.'s bound on the base for a context, kept in the process and
  on disk between runs;
- :mod:`~pecli.wavelengths.bound_search`: the search behind it, over ``B(m) = Σ cos(m θ_i)``.
"""
