"""Programs as people write them with NumPy: a logistic loss, a small MLP
whose parameters are a tuple of arrays (a pytree), a mixture likelihood over a
list of data, a softmax cross-entropy, an HMM's forward algorithm, a Kalman
filter's likelihood, a stick-breaking construction, a vectorized mixture,
standardized features with an RBF kernel (test_real.py)."""
import math

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


def hmm_forward(logA, logpi, obs):  # log-sum-exp along an axis, in a loop over time
    alpha = logpi + obs[0]
    for t in range(1, obs.shape[0]):
        s = alpha[:, None] + logA
        m = np.max(s, axis=0)
        alpha = m + np.log(np.sum(np.exp(s - m), axis=0)) + obs[t]
    m = np.max(alpha)
    return m + np.log(np.sum(np.exp(alpha - m)))


def kalman_loglik(q, r, ys):  # a scalar state-space model's likelihood, with math
    x, p, ll = 0.0, 1.0, 0.0
    for y in ys:
        p = p + q
        s = p + r
        k = p / s
        ll -= 0.5 * (math.log(2 * math.pi * s) + (y - x) ** 2 / s)
        x, p = x + k * (y - x), (1 - k) * p
    return ll


def stick_breaking(v, alpha):  # weights grown as a list, then an array
    rest = 1.0
    w = []
    for vi in v:
        w = w + [vi * rest]
        rest = rest * (1 - vi)
    w = np.array(w)
    return np.sum(np.log(w)) + (alpha - 1) * np.sum(np.log1p(-v))


def gmm_vectorized(X, mus, log_sigma):  # new axes, a reduction along an axis
    sigma = np.exp(log_sigma)
    z = (X[:, None, :] - mus[None, :, :]) / sigma
    logp = -0.5 * np.sum(z ** 2, axis=-1) - X.shape[1] * log_sigma
    m = np.max(logp, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(logp - m), axis=1)))


def rbf_standardized(X, ell):  # features standardized, pairwise kernel, a norm
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    d = Z[:, None, :] - Z[None, :, :]
    K = np.exp(-np.sum(d * d, axis=2) / (2 * ell ** 2))
    return np.sum(K) + np.linalg.norm(np.clip(Z, -1.0, 1.0))
