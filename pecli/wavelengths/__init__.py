"""``pecli wavelengths``: each frequency pair's wavelength, and Men et al.'s bound on the base.

- :mod:`~pecli.wavelengths.spectrum`: the per-pair table and its summary;
- :mod:`~pecli.wavelengths.bound_cache`: the bounds kept between runs.
"""
