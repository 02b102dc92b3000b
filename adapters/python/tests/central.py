"""Central differences, the tests' independent check of derivatives."""
import numpy as np


def central(f, args, i, h=1e-6):
    """d f(*args) / d args[i], element by element."""
    a = list(args)
    x = np.array(a[i], dtype=float)
    g = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[j] = h
        a[i] = x + e
        hi = f(*a)
        a[i] = x - e
        g[j] = (hi - f(*a)) / (2 * h)
    return g
