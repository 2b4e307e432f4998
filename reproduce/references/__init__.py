"""Second, independent derivations of the reproduction report's missed rows: plain NumPy / SciPy
loops written from the papers alone, run on the same data draws and seeds as the report."""
