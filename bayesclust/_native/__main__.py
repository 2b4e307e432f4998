"""``python -m bayesclust._native``: build the native kernels now (``make`` runs it)."""

from . import available, build

if __name__ == "__main__":
    print(f"bayesclust native kernels: {build(verbose=True)}")
    if not available():
        raise SystemExit("bayesclust native kernels built but failed to load")
