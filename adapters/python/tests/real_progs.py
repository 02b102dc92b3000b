"""Programs as people write them with NumPy: a logistic loss, a small MLP
whose parameters are a tuple of arrays (a pytree), a mixture likelihood over a
list of data, a softmax cross-entropy (test_real.py)."""
import numpy as np

def logistic_loss(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

def mlp(params, x):
    W1, b1, W2, b2 = params
    h = np.tanh(W1 @ x + b1)
    return W2 @ h + b2

def loss(params, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        pred = mlp(params, x)
        total = total + np.sum((pred - y) ** 2)
    return total / len(xs)

def gmm_like(mu, sigma, data):
    ll = 0.0
    for x in data:
        ll = ll + np.log(np.sum(np.exp(-0.5 * ((x - mu) / sigma) ** 2) / sigma))
    return ll

def softmax_xent(W, x, k):
    z = W @ x
    z = z - np.max(z)
    e = np.exp(z)
    return -np.log(e[k] / np.sum(e))


def nested_mlp(params, x):  # parameters as nested tuples, unpacked in one line
    (W1, b1), (W2, b2) = params
    h = np.tanh(W1 @ x + b1)
    return np.sum(W2 @ h + b2)


def leaky_blocks(x):  # np.where as a leaky ReLU, a vector reshaped into a matrix
    y = np.where(x > 0, x, 0.1 * x)
    M = np.reshape(y, (2, 2))
    return np.sum(M @ x.reshape(2, 2))
