"""``pecli compare``: every property of several schemes side by side, with the articles' claims set against them.

- :mod:`~pecli.comparison.table`: the measurements, one row per scheme;
- :mod:`~pecli.comparison.claims`: what the articles claim, quoted.
"""
