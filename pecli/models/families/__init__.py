"""The model families: how a ``config.json`` becomes a :class:`~pecli.models.plan.PositionPlan`.

One :class:`~pecli.models.families.record.Family` record per family says which ``model_type`` values it
covers, which scheme its layers use, in which layout the model applies cos and sin, which keys spell its
head dimension, and — where the layers differ — how its layer types and their encodings are derived.
Commands and analyses never look at ``model_type``: only the table does. A model type that is not in the
table is read with the generic keys and a warning that says so.

=================  =========================================================================
``keys``           the key reader (:class:`Keys`), the generic spellings, the text model's keys
``key_record``     the keys read and defaulted, the model's and one layer type's (``Keys.scoped``)
``setting_trace``  where each setting came from: the keys read for it and their origin (``Keys.traced``)
``record``         the :class:`Family` record
``rope``           generic RoPE reading: head dimension, base, fraction, scaling block, per layer
``layer_rules``    the family hooks: layer types, NoPE layers, each type's encoding, normalising
``attention``      a group's window and the factor its attention puts on the logits
``stacks``         ALiBi, T5, sinusoidal and learned tables, models of several stacks
``table``          :data:`FAMILIES`, :data:`REFUSED` and the lookup of a model type's family
``from_config``    :func:`plan_of`: a parsed ``config.json`` to its plan
``docs_table``     the Models page's table, generated from :data:`FAMILIES`
=================  =========================================================================
"""
