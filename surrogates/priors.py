"""Weight priors and their KL divergence from the mean-field Gaussian posterior.

Every prior exposes ``kl(mu, sigma, layers, generator)``: the KL divergence
``KL(q || p)`` summed over all weights, where ``q = prod N(mu_i, sigma_i^2)`` and
``layers`` lists the (start, stop) slices of each layer in the flat parameter vector.

Direct priors (the same prior on every weight and bias):

* :class:`NormalPrior` -- KL in closed form.
* :class:`LaplacePrior` -- KL in closed form: ``E_q|w - loc|`` is the folded-normal mean.
* :class:`CauchyPrior` -- KL by Monte Carlo (no closed form).

Hierarchical priors (:class:`HierarchicalPrior`): each layer l has its own scale ``s_l`` with
an Inverse-Gamma(alpha, beta) hyperprior; for the normal base ``w | s ~ N(loc, s)`` (s is the
variance, as in the paper, so marginally a Student-t with 2 alpha degrees of freedom), for the
Laplace and Cauchy bases s is their scale parameter.

*How s is inferred.* Each layer's scale gets a variational factor
``q(s_l) = LogNormal(m_l, v_l)`` learned with the weights; the bound is
``sum_l E_q(s_l)[KL(q(w_l) || p(w_l | s_l))] + KL(q(s_l) || IG(alpha, beta))``.
With ``E[log s] = m`` and ``E[1/s] = exp(-m + v / 2)`` both terms are closed-form for the
normal and Laplace bases; the Cauchy base uses Monte Carlo. ``q(s_l)`` starts at the
hyperprior's own spread of log s (mode ``beta / (alpha + 1)``, variance ``trigamma(alpha)``).
A point-mass hyperprior (``point_mass=s0``) fixes s and reproduces the direct prior exactly.

*What each inference engine reads of a prior* (so that no engine branches on prior classes):
the mean-field engines :meth:`Prior.kl` (autograd) or :meth:`Prior.meanfield_spec` (which
closed form the batched trainer takes: the ``kl_members``, ``kl_gradient_factor`` and
``add_kl_gradient_`` of :class:`NormalPrior` and :class:`LaplacePrior`, K members at once);
the Laplace engine :meth:`Prior.neg_log_density_grad` (the MAP penalty and its gradient, K
networks at once), :meth:`Prior.laplace_precision` (D at the MAP weights),
:attr:`Prior.location` and :meth:`Prior.check_laplace`. :meth:`Prior.resolved` turns a
point-mass hierarchical prior into the direct prior it equals.

Imports: torch and :mod:`surrogates.likelihoods` (its ``LOG_2PI``).
"""
import functools
import math
import numbers

import torch
from torch import nn

from .likelihoods import LOG_2PI

__all__ = ["Prior", "NormalPrior", "LaplacePrior", "CauchyPrior", "DIRECT",
           "HierarchicalPrior", "ScaledPrior", "make_prior"]

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _folded_normal_mean(mu, sigma):
    """E|X| for X ~ N(mu, sigma^2)."""
    z = mu / sigma
    return sigma * math.sqrt(2.0 / math.pi) * torch.exp(-0.5 * z * z) + mu * torch.erf(
        z / math.sqrt(2.0))


@functools.lru_cache(maxsize=None)
def _layer_index(layers):
    """(P,) index of the layer ``(a, b)`` of ``layers`` (a tuple covering 0..P) each weight
    falls in, computed once per layout (the MAP objective asks at every evaluation).
    Read-only; on the CPU (a caller on another device moves it)."""
    with torch.device("cpu"):
        sizes = torch.tensor([b - a for a, b in layers])
        return torch.repeat_interleave(torch.arange(len(layers)), sizes)


def _log(x):
    return torch.log(x) if isinstance(x, torch.Tensor) else math.log(x)


def _neg_entropy_normal(sigma):
    """-H[N(mu, sigma^2)] summed: -0.5 log(2 pi e sigma^2)."""
    return -(0.5 * (LOG_2PI + 1.0) + torch.log(sigma)).sum()


class Prior(nn.Module):
    """Base class. Subclasses implement :meth:`kl`; ``analytic`` says whether it is exact."""

    analytic = True

    def kl(self, mu, sigma, layers, generator=None, n_samples=1):
        """KL(q || p) in nats, a scalar tensor, of the mean-field posterior q = N(mu, sigma^2)
        (flat (P,) tensors) from this prior; ``layers``: the (start, stop) slice of each layer
        in them. A hierarchical prior's is that of q(w) q(s) from p(w | s) p(s), its
        hyperprior's term included. Where there is no closed form (``analytic`` False), an
        unbiased estimate from ``n_samples`` draws of ``generator``."""
        raise NotImplementedError

    def kl_monte_carlo(self, mu, sigma, layers, n_samples=1000, generator=None):
        """Monte Carlo estimate of the same KL (for checking the closed forms)."""
        raise NotImplementedError

    def describe(self):
        """The prior's settings as a plain dict (its ``kind`` and its parameters: ``loc`` and
        ``scale`` for a direct prior, the base and hyperprior for a hierarchical one), as a
        saved model's settings record a prior object."""
        raise NotImplementedError

    def resolved(self):
        """The prior itself, or the direct prior a point-mass hierarchical prior equals."""
        return self

    @property
    def location(self):
        """The location the prior centres the weights on."""
        return float(getattr(self, "loc", 0.0))

    def layer_scales(self):
        """The inferred scale of each layer (a hierarchical prior's), else None."""
        return None

    def meanfield_spec(self):
        """``(kind, loc, scale)`` for the batched mean-field trainer's closed-form KL, or None
        where it has none (it then takes the autograd trainer)."""
        return None

    def check_laplace(self):
        """Raise a ValueError if the Laplace engine cannot use this prior."""

    def neg_log_density(self, w, layers):
        """(K,) negative log density of the rows of w (K, P), up to a constant."""
        return self.neg_log_density_grad(w, layers)[0]

    def neg_log_density_grad(self, w, layers):
        """(K,) :meth:`neg_log_density` and its (K, P) gradient in w, in closed form."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form log density")

    def laplace_precision(self, w, layers):
        """(P,) the prior's precision at the MAP weights w (P,): the curvature of its negative
        log density, or its Fisher information where that curvature is not positive."""
        raise NotImplementedError(f"{type(self).__name__} has no Laplace precision")


class _Direct(Prior):
    def __init__(self, loc=0.0, scale=1.0):
        super().__init__()
        if not (math.isfinite(loc) and math.isfinite(scale) and scale > 0):
            raise ValueError(f"{type(self).__name__}: scale must be a finite number > 0 and loc "
                             f"finite, got loc={loc!r}, scale={scale!r}")
        self.loc, self.scale = float(loc), float(scale)

    def log_prob(self, w, scale=None):
        """Elementwise log density of the weights w under the prior (at scale ``scale``
        instead of its own, where given), in nats."""
        raise NotImplementedError

    def kl_monte_carlo(self, mu, sigma, layers, n_samples=1000, generator=None):
        eps = torch.randn((n_samples,) + mu.shape, generator=generator, dtype=mu.dtype,
                          device=mu.device)
        w = mu + sigma * eps
        log_q = (-0.5 * eps * eps - torch.log(sigma) - 0.5 * LOG_2PI).sum(-1)
        return (log_q - self.log_prob(w).sum(-1)).mean()

    def describe(self):
        return {"kind": self.kind, "loc": self.loc, "scale": self.scale}

    def __repr__(self):
        return f"{type(self).__name__}(loc={self.loc}, scale={self.scale})"


class NormalPrior(_Direct):
    """w ~ N(loc, scale^2) (scale is the standard deviation)."""

    kind = "normal"

    def log_prob(self, w, scale=None):
        s = self.scale if scale is None else scale
        return -0.5 * ((w - self.loc) / s) ** 2 - _log(s) - 0.5 * LOG_2PI

    def kl(self, mu, sigma, layers=None, generator=None, n_samples=1):
        # 0.5 sum[(sigma^2 + (mu - loc)^2) / s^2 - 1 - log(sigma^2 / s^2)], in few tensor ops
        centred = mu - self.loc if self.loc else mu
        quad = torch.dot(sigma, sigma) + torch.dot(centred, centred)
        n = mu.numel()
        return (0.5 / self.scale ** 2) * quad - torch.log(sigma).sum() + n * (
            math.log(self.scale) - 0.5)

    def meanfield_spec(self):
        return ("normal", self.loc, self.scale) if type(self) is NormalPrior else None

    # -- the batched mean-field trainer's closed forms, K members at once ----------------------
    @staticmethod
    def kl_members(centred, sigma, scale):
        """(K,) KL(q || p) of K members: :meth:`kl` row by row, from ``centred = mu - loc``
        and ``sigma`` (K, P) and each member's scale (K, 1)."""
        return (0.5 * ((sigma * sigma + centred * centred) / scale ** 2).sum(1)
                - torch.log(sigma).sum(1) + centred.shape[1] * (torch.log(scale[:, 0]) - 0.5))

    @staticmethod
    def kl_gradient_factor(scale):
        """The factor 1 / s^2 that the prior's part of dKL/d(mu, sigma) carries (numbers or
        an array of the members' scales)."""
        return 1.0 / scale ** 2

    @staticmethod
    def add_kl_gradient_(grad_mu, grad_sigma, centred, sigma, weight):
        """Add ``weight`` times the prior's part of dKL / d(mu, sigma), in place:
        (mu - loc) and sigma, the factor 1 / s^2 being in ``weight`` (see
        :meth:`kl_gradient_factor`); the entropy's -1 / sigma is the trainer's own."""
        grad_mu.addcmul_(centred, weight)
        grad_sigma.addcmul_(sigma, weight)

    def neg_log_density_grad(self, w, layers=None):
        c = w - self.loc
        return 0.5 * (c * c).sum(1) / self.scale ** 2, c / self.scale ** 2

    def laplace_precision(self, w, layers=None):
        return torch.full_like(w, 1.0 / self.scale ** 2)


class LaplacePrior(_Direct):
    """w ~ Laplace(loc, scale)."""

    kind = "laplace"

    def log_prob(self, w, scale=None):
        s = self.scale if scale is None else scale
        return -torch.abs(w - self.loc) / s - _log(2.0 * s)

    def kl(self, mu, sigma, layers=None, generator=None, n_samples=1):
        e_abs = _folded_normal_mean(mu - self.loc, sigma)
        return _neg_entropy_normal(sigma) + (math.log(2.0 * self.scale) + e_abs / self.scale).sum()

    def meanfield_spec(self):
        return ("laplace", self.loc, self.scale) if type(self) is LaplacePrior else None

    # -- the batched mean-field trainer's closed forms, K members at once ----------------------
    @staticmethod
    def kl_members(centred, sigma, scale):
        """(K,) KL(q || p) of K members: :meth:`kl` row by row (``E_q|w - loc|`` the folded
        normal mean), from ``centred = mu - loc`` and ``sigma`` (K, P) and each member's scale
        (K, 1)."""
        z = centred / sigma
        e_abs = (sigma * math.sqrt(2.0 / math.pi) * torch.exp(-0.5 * z * z)
                 + centred * torch.erf(z / math.sqrt(2.0)))
        return (-(0.5 * (LOG_2PI + 1.0) + torch.log(sigma)).sum(1)
                + centred.shape[1] * torch.log(2.0 * scale[:, 0]) + (e_abs / scale).sum(1))

    @staticmethod
    def kl_gradient_factor(scale):
        """The factor 1 / s that the prior's part of dKL/d(mu, sigma) carries."""
        return 1.0 / scale

    @staticmethod
    def add_kl_gradient_(grad_mu, grad_sigma, centred, sigma, weight):
        """Add ``weight`` times the prior's part of dKL / d(mu, sigma), in place, with
        z = (mu - loc) / sigma: erf(z / sqrt 2) and sqrt(2 / pi) exp(-z^2 / 2), the factor
        1 / s being in ``weight`` (see :meth:`kl_gradient_factor`); the entropy's -1 / sigma
        is the trainer's own."""
        z = torch.div(centred, sigma)
        grad_mu.addcmul_(torch.erf(z.mul(_SQRT_HALF)), weight)
        grad_sigma.addcmul_(torch.exp(z.square_().mul_(-0.5)), weight, value=_SQRT_2_OVER_PI)

    def neg_log_density_grad(self, w, layers=None):
        """(at w = loc the gradient is 0)"""
        c = w - self.loc
        return c.abs().sum(1) / self.scale, torch.sign(c) / self.scale

    def laplace_precision(self, w, layers=None):
        """Its Fisher information 1 / s^2 (the curvature is 0 away from loc)."""
        return torch.full_like(w, 1.0 / self.scale ** 2)


class CauchyPrior(_Direct):
    """w ~ Cauchy(loc, scale); KL by Monte Carlo with ``n_samples`` reparameterised draws."""

    kind = "cauchy"
    analytic = False

    def log_prob(self, w, scale=None):
        s = self.scale if scale is None else scale
        return -_log(math.pi * s) - torch.log1p(((w - self.loc) / s) ** 2)

    def kl(self, mu, sigma, layers=None, generator=None, n_samples=1):
        eps = torch.randn((n_samples,) + mu.shape, generator=generator, dtype=mu.dtype,
                          device=mu.device)
        w = mu + sigma * eps
        return _neg_entropy_normal(sigma) - self.log_prob(w).sum(-1).mean()

    def neg_log_density_grad(self, w, layers=None):
        u = (w - self.loc) / self.scale
        return torch.log1p(u * u).sum(1), 2.0 * u / (self.scale * (1.0 + u * u))

    def laplace_precision(self, w, layers=None):
        """Its Fisher information 1 / (2 s^2) (the curvature at w* may be zero or negative)."""
        return torch.full_like(w, 0.5 / self.scale ** 2)


#: The direct priors by the name :func:`make_prior` takes.
DIRECT = {"normal": NormalPrior, "laplace": LaplacePrior, "cauchy": CauchyPrior}


class HierarchicalPrior(Prior):
    """Per-layer scale with an Inverse-Gamma(alpha, beta) hyperprior (see the module doc).

    Args:
        base: ``"normal"``, ``"laplace"`` or ``"cauchy"``.
        loc: location of the base prior (the paper's Cauchy uses 1).
        alpha, beta: Inverse-Gamma hyperprior (default IG(1, 1)).
        point_mass: fix every layer's scale to this value instead (reproduces the direct prior:
            for the normal base ``s`` is the variance, i.e. ``NormalPrior(loc, sqrt(s))``).
    """

    def __init__(self, base="normal", loc=0.0, alpha=1.0, beta=1.0, point_mass=None):
        super().__init__()
        if base not in DIRECT:
            raise ValueError(f"unknown base prior {base!r}; use one of {sorted(DIRECT)}")
        for name, v in (("alpha", alpha), ("beta", beta)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {name}={v!r}")
        if point_mass is not None and not (math.isfinite(point_mass) and point_mass > 0):
            raise ValueError(f"point_mass must be > 0, got point_mass={point_mass!r}")
        self.base, self.loc = base, float(loc)
        self.alpha, self.beta = float(alpha), float(beta)
        self.point_mass = None if point_mass is None else float(point_mass)
        self.analytic = base != "cauchy"
        self._n_layers = 0
        self.m = nn.Parameter(torch.zeros(0))
        self.log_v = nn.Parameter(torch.zeros(0))

    def setup(self, n_layers, dtype=torch.float32):
        """Create the variational factors q(s_l) of ``n_layers`` layers."""
        self._n_layers = n_layers
        mode = self.beta / (self.alpha + 1.0)
        var_log = float(torch.special.polygamma(1, torch.tensor(self.alpha, dtype=torch.float64)))
        self.m = nn.Parameter(torch.full((n_layers,), math.log(mode), dtype=dtype))
        self.log_v = nn.Parameter(torch.full((n_layers,), math.log(var_log), dtype=dtype))

    def _direct(self, scale):
        s = math.sqrt(scale) if self.base == "normal" else scale
        return DIRECT[self.base](self.loc, s)

    def resolved(self):
        return self if self.point_mass is None else self._direct(self.point_mass)

    def check_laplace(self):
        if self.point_mass is None and self.base == "cauchy":
            raise ValueError("inference='laplace' takes normal, laplace and cauchy priors and "
                             "hierarchical-normal / hierarchical-laplace; "
                             "hierarchical-cauchy has no closed-form marginal: use "
                             "inference='meanfield'")

    def neg_log_density_grad(self, w, layers):
        """The layer scale integrated out: IG(alpha, beta) on the variance of a normal base
        gives ``(alpha + P_l / 2) log(beta + |w_l - loc|^2 / 2)`` per layer, on the scale of a
        Laplace base ``(alpha + P_l) log(beta + |w_l - loc|_1)``."""
        if self.point_mass is not None:
            return self.resolved().neg_log_density_grad(w, layers)
        self.check_laplace()
        sizes = torch.tensor([b - a for a, b in layers], dtype=w.dtype, device=w.device)
        layer_of = _layer_index(tuple(layers)).to(w.device)
        c = w - self.loc
        if self.base == "normal":  # (alpha + P_l / 2) log(beta + |c_l|^2 / 2)
            shape = self.alpha + 0.5 * sizes
            den = self.beta + 0.5 * w.new_zeros(len(w), len(layers)).index_add_(
                1, layer_of, c * c)
            return (shape * torch.log(den)).sum(1), c * (shape / den)[:, layer_of]
        shape = self.alpha + sizes  # laplace base: (alpha + P_l) log(beta + |c_l|_1)
        den = self.beta + w.new_zeros(len(w), len(layers)).index_add_(1, layer_of, c.abs())
        return (shape * torch.log(den)).sum(1), torch.sign(c) * (shape / den)[:, layer_of]

    def neg_log_density(self, w, layers):
        if self.point_mass is not None:
            return self.resolved().neg_log_density(w, layers)
        self.check_laplace()
        total = w.new_zeros(w.shape[0])
        for a, b in layers:
            c = w[:, a:b] - self.loc
            if self.base == "normal":
                total = total + (self.alpha + 0.5 * (b - a)) * torch.log(
                    self.beta + 0.5 * (c * c).sum(1))
            else:
                total = total + (self.alpha + (b - a)) * torch.log(self.beta + c.abs().sum(1))
        return total

    def laplace_precision(self, w, layers):
        """Each layer's conditional precision given w*: ``(alpha + P_l / 2) / (beta +
        |w_l|^2 / 2)`` (normal base) or ``1 / s_mode^2`` (Laplace base)."""
        if self.point_mass is not None:
            return self.resolved().laplace_precision(w, layers)
        out = torch.empty_like(w)
        for a, b in layers:
            c = w[a:b] - self.loc
            if self.base == "normal":
                out[a:b] = (self.alpha + 0.5 * (b - a)) / (self.beta + 0.5 * (c * c).sum())
            else:
                s_mode = (self.beta + c.abs().sum()) / (self.alpha + (b - a) + 1.0)
                out[a:b] = 1.0 / s_mode ** 2
        return out

    def meanfield_spec(self):
        return None if self.point_mass is None else self.resolved().meanfield_spec()

    def layer_scales(self):
        return self.scales()

    def scales(self):
        """Posterior median of each layer's scale (exp m), or the point mass."""
        if self.point_mass is not None:
            return torch.full((max(self._n_layers, 1),), self.point_mass)
        return torch.exp(self.m.detach())

    def _kl_hyper(self):
        """sum_l KL(LogNormal(m_l, v_l) || IG(alpha, beta)), closed form."""
        m, v = self.m, torch.exp(self.log_v)
        neg_entropy = -(m + 0.5 * (LOG_2PI + 1.0 + self.log_v))
        e_log_p = (self.alpha * math.log(self.beta) - math.lgamma(self.alpha)
                   - (self.alpha + 1.0) * m - self.beta * torch.exp(-m + 0.5 * v))
        return (neg_entropy - e_log_p).sum()

    def kl(self, mu, sigma, layers, generator=None, n_samples=1):
        if self.point_mass is not None:
            return self._direct(self.point_mass).kl(mu, sigma, layers, generator, n_samples)
        if len(layers) != self._n_layers:
            raise ValueError("HierarchicalPrior.setup() was not called for this network")
        total = self._kl_hyper()
        v = torch.exp(self.log_v)
        for l, (a, b) in enumerate(layers):
            mu_l, sig_l = mu[a:b], sigma[a:b]
            m, e_inv = self.m[l], torch.exp(-self.m[l] + 0.5 * v[l])
            if self.base == "normal":
                total = total + 0.5 * (m - 2.0 * torch.log(sig_l)
                                       + e_inv * (sig_l ** 2 + (mu_l - self.loc) ** 2) - 1.0).sum()
            elif self.base == "laplace":
                e_abs = _folded_normal_mean(mu_l - self.loc, sig_l)
                total = total + _neg_entropy_normal(sig_l) + (math.log(2.0) + m
                                                              + e_inv * e_abs).sum()
            else:  # cauchy: Monte Carlo over q(w) and q(s)
                eps = torch.randn((n_samples,) + mu_l.shape, generator=generator,
                                  dtype=mu.dtype, device=mu.device)
                w = mu_l + sig_l * eps
                z = torch.randn((n_samples, 1), generator=generator, dtype=mu.dtype,
                          device=mu.device)
                s = torch.exp(m + torch.sqrt(v[l]) * z)
                log_p = -torch.log(math.pi * s) - torch.log1p(((w - self.loc) / s) ** 2)
                total = total + _neg_entropy_normal(sig_l) - log_p.sum(-1).mean()
        return total

    def kl_monte_carlo(self, mu, sigma, layers, n_samples=1000, generator=None):
        """Monte Carlo estimate of the same bound (weights and scales sampled)."""
        if self.point_mass is not None:
            return self._direct(self.point_mass).kl_monte_carlo(mu, sigma, layers, n_samples,
                                                                generator)
        total = 0.0
        v = torch.exp(self.log_v)
        for l, (a, b) in enumerate(layers):
            mu_l, sig_l = mu[a:b], sigma[a:b]
            eps = torch.randn((n_samples,) + mu_l.shape, generator=generator, dtype=mu.dtype,
                          device=mu.device)
            w = mu_l + sig_l * eps
            z = torch.randn((n_samples, 1), generator=generator, dtype=mu.dtype,
                          device=mu.device)
            log_s = self.m[l] + torch.sqrt(v[l]) * z
            s = torch.exp(log_s)
            scale = torch.sqrt(s) if self.base == "normal" else s
            log_q_w = (-0.5 * eps * eps - torch.log(sig_l) - 0.5 * LOG_2PI).sum(-1)
            log_p_w = DIRECT[self.base](self.loc, 1.0).log_prob(w, scale).sum(-1)
            log_q_s = (-0.5 * z[:, 0] ** 2 - 0.5 * torch.log(v[l]) - 0.5 * LOG_2PI) - log_s[:, 0]
            log_p_s = (self.alpha * math.log(self.beta) - math.lgamma(self.alpha)
                       - (self.alpha + 1.0) * log_s[:, 0] - self.beta / s[:, 0])
            total = total + (log_q_w - log_p_w + log_q_s - log_p_s).mean()
        return total

    def describe(self):
        return {"kind": "hierarchical", "base": self.base, "loc": self.loc, "alpha": self.alpha,
                "beta": self.beta, "point_mass": self.point_mass}

    def __repr__(self):
        hyper = (f"point_mass={self.point_mass}" if self.point_mass is not None
                 else f"IG({self.alpha:g}, {self.beta:g})")
        return f"HierarchicalPrior({self.base}, loc={self.loc}, {hyper})"


class ScaledPrior(Prior):
    """The prior of weights w whose ``loc + sqrt(factor) (w - loc)`` have ``prior``: the same
    family with its scale divided by ``sqrt(factor)``, so its precision times ``factor`` (a
    hierarchical prior's: IG(alpha, beta / factor) on a normal base's variance, beta /
    sqrt(factor) on a Laplace base's scale). It is what
    ``BDL(laplace_prior_scale=factor)`` means, for the MAP fit and the Laplace posterior alike.
    Its log density drops the constant ``P / 2 log(factor)``.

    >>> import torch
    >>> w = torch.tensor([[0.3, -1.2]], dtype=torch.float64)
    >>> pen, grad = ScaledPrior(NormalPrior(0.0, 1.0), 4.0).neg_log_density_grad(w)
    >>> pen2, grad2 = NormalPrior(0.0, 0.5).neg_log_density_grad(w)
    >>> bool(torch.allclose(grad, grad2)), bool(torch.allclose(pen - pen2, pen[:1] - pen2[:1]))
    (True, True)
    """

    def __init__(self, prior, factor):
        super().__init__()
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not (
                math.isfinite(factor) and factor > 0):
            raise ValueError(f"a prior's scale factor must be a finite number > 0, got {factor!r}")
        self.prior, self.factor = prior, float(factor)

    @property
    def location(self):
        return self.prior.location

    def _inner(self, w):
        loc = self.prior.location
        return loc + math.sqrt(self.factor) * (w - loc)

    def check_laplace(self):
        self.prior.check_laplace()

    def describe(self):
        return {**self.prior.describe(), "factor": self.factor}

    def neg_log_density_grad(self, w, layers=None):
        pen, grad = self.prior.neg_log_density_grad(self._inner(w), layers)
        return pen, math.sqrt(self.factor) * grad

    def laplace_precision(self, w, layers):
        return self.factor * self.prior.laplace_precision(self._inner(w), layers)

    def __repr__(self):
        return f"ScaledPrior({self.prior!r}, factor={self.factor:g})"


def make_prior(spec):
    """A prior from a spec: a :class:`Prior`, a string such as ``"normal(0, 1)"``,
    ``"laplace(0, 1)"``, ``"cauchy(1, 1)"``, ``"hierarchical-normal"`` (IG(1, 1)),
    ``"hierarchical-laplace(0, alpha=1, beta=1)"``, or a dict from ``describe()``.

    >>> make_prior("normal(0, 0.1)")
    NormalPrior(loc=0.0, scale=0.1)
    >>> make_prior("hierarchical-cauchy(1)")
    HierarchicalPrior(cauchy, loc=1.0, IG(1, 1))
    """
    import re

    if isinstance(spec, Prior):
        return spec
    if isinstance(spec, dict):
        d = dict(spec)
        kind = d.pop("kind", None)
        if kind != "hierarchical" and kind not in DIRECT:
            raise ValueError(f"unknown prior {spec!r}")
        try:  # a misspelt parameter: a TypeError from the constructor
            return HierarchicalPrior(**d) if kind == "hierarchical" else DIRECT[kind](**d)
        except TypeError as exc:
            raise ValueError(f"prior {spec!r}: {exc}") from None
    if not isinstance(spec, str):
        raise ValueError(f"a prior is a Prior, a string like 'normal(0, 1)' or a dict, got "
                         f"{spec!r}")
    m = re.fullmatch(r"\s*(hierarchical-)?([a-z]+)\s*(?:\((.*)\))?\s*", spec.lower())
    if not m or m.group(2) not in DIRECT:
        raise ValueError(f"unknown prior {spec!r}; use normal, laplace or cauchy, optionally "
                         "as hierarchical-<name>, e.g. 'normal(0, 1)' or 'hierarchical-normal'")
    args, kwargs = [], {}
    for part in (m.group(3) or "").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "=" in part:
                k, v = part.split("=", 1)
                kwargs[k.strip()] = float(v)
            else:
                args.append(float(part))
        except ValueError:
            raise ValueError(f"prior {spec!r}: cannot read parameter {part!r}") from None
    try:
        if m.group(1):
            return HierarchicalPrior(m.group(2), *args, **kwargs)
        return DIRECT[m.group(2)](*args, **kwargs)
    except TypeError as exc:
        raise ValueError(f"prior {spec!r}: {exc}") from None
