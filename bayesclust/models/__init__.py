"""NumPyro programs, one module per model (no inference code here)."""
