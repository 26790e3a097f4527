"""Standardisation of inputs and outputs, fitted on the training data."""
import numpy as np

__all__ = ["Standardizer", "IdentityScaler"]


class Standardizer:
    """z = (x - mean) / scale per column; constant columns keep scale 1.

    >>> s = Standardizer().fit(np.array([[1.0, 10.0], [3.0, 10.0]]))
    >>> s.transform(np.array([[2.0, 10.0]])).tolist()
    [[0.0, 0.0]]
    """

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        return self

    def transform(self, X):
        return (np.asarray(X, dtype=float) - self.mean_) / self.scale_

    def inverse_transform(self, Z):
        return np.asarray(Z, dtype=float) * self.scale_ + self.mean_

    def state(self):
        return {"mean": self.mean_.tolist(), "scale": self.scale_.tolist()}

    @classmethod
    def from_state(cls, state):
        s = cls()
        s.mean_ = np.asarray(state["mean"], dtype=float)
        s.scale_ = np.asarray(state["scale"], dtype=float)
        return s


class IdentityScaler(Standardizer):
    """No scaling (for exact conjugate checks)."""

    def fit(self, X):
        d = np.asarray(X).shape[1]
        self.mean_, self.scale_ = np.zeros(d), np.ones(d)
        return self
