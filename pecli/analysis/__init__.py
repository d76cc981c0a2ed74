"""Measurements of positional encodings: pure functions over schemes and arrays.

The property checks of ``pecli check`` live in one registry, :data:`ANALYSES`
(:mod:`pecli.analysis.registry`): a table of frozen records, each with a name, a one-line summary and
a ``run(scheme, options)`` function with the same signature, so that every analysis works on every
scheme through one interface::

    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import run_checks
    results = run_checks(scheme, "all", CheckOptions(length=1024))

Each check returns a :class:`~pecli.analysis.result.PropertyResult` (verdict, reason, figures). The
options a check reads are declared once, as the fields of :class:`CheckOptions`
(:mod:`pecli.analysis.options`); each record names those it reads. ``all`` runs every property of the
scheme (:func:`all_names`); ``layout`` reads a checkpoint's weights and is asked for by name.
Before any work, :func:`estimate_check_bytes` bounds the memory a set of checks will hold.

Each name is imported from the module that defines it (the package re-exports nothing): ``pecli encode``
needs only :mod:`pecli.analysis.summary`, and importing the package imports no analysis.
"""
