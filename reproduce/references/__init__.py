"""Second, independent derivations of the report's misses.

Each module is written from its paper alone, as a plain, slow, readable NumPy / SciPy loop, by
someone who had not read the package's implementation of the method; it imports nothing from
``bayesclust`` but its data sets (and, in its script entry, the public ensemble generator, so
that it runs on the same ensembles as ours).  ``python -m reproduce.references.<name>`` prints
the quantity of the corresponding REPRODUCTION.md row on the same data and seeds.
"""
