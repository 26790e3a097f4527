"""Failure probabilities P[g(X) <= 0]: Monte Carlo, FORM, SORM, importance sampling, subset
simulation and active learning on a surrogate, behind one :func:`failure_probability`.

A limit state g(x) fails where g(x) <= 0; ``Pf = P[g(X) <= 0]`` and the reliability index
``beta = -Phi^-1(Pf)``. A g with k outputs is a system: series fails when any component fails
(``min_j g_j <= 0``), parallel when all do (``max_j g_j <= 0``). Every method works in the
standard normal space ``u`` of the Rosenblatt transform of the inputs' joint distribution,
``x = F^-1(Phi(u))`` (:mod:`uqkit.inputs.transforms`), so copulas are respected; the importance
factors, curvatures and the design point ``u*`` refer to these Rosenblatt variables (for
dependent inputs they depend on the input order).

Modules, each importing only those above it::

    result       ReliabilityResult, ConvergenceError, beta_of, the binomial interval
    limit_state  g in the standard normal space, run through a ModelRunner; systems
    simulation   crude Monte Carlo and importance sampling (which uses form)
    form         FORM (SQP or improved HL-RF) and SORM (Breitung, Hohenbichler-Rackwitz,
                 Tvedt)
    subset       subset simulation (MMA and adaptive conditional sampling)
    active       active learning on a surrogate's predictive mean and std
    api          failure_probability: the method table, options and the runner
    problems     analytic test problems with known Pf and Sobol' indices

Imports: numpy, scipy, :mod:`uqkit.inputs`, :mod:`uqkit.execution` and
:mod:`uqkit.validation`; active learning's default surrogates come through
:mod:`uqkit.adapters`.

FORM and SORM are approximations, not sampling estimates: their ``cov`` and ``ci`` are NaN.

References:
    Hasofer & Lind (1974), J. Eng. Mech. Div. 100: 111-121. Rackwitz & Fiessler (1978),
    Comput. Struct. 9: 489-494. Zhang & Der Kiureghian (1995), Proc. IFIP WG 7.5.
    Breitung (1984), J. Eng. Mech. 110: 357-366. Hohenbichler & Rackwitz (1988), J. Eng.
    Mech. 114: 2195-2199. Tvedt (1990), J. Eng. Mech. 116: 1183-1197. Clopper & Pearson
    (1934), Biometrika 26: 404-413.

Example:
    >>> from uqkit.inputs import RandomInputs
    >>> inputs = RandomInputs.from_spec({"R": "normal(5, 0.5)", "S": "normal(3, 0.4)"})
    >>> r = failure_probability(lambda X: X[:, 0] - X[:, 1], inputs, method="form",
    ...                         executor="serial")
    >>> round(r.beta, 4), round(2 / math.hypot(0.5, 0.4), 4), r.model_runs   # exact beta
    (3.1235, 3.1235, 10)
"""
import math  # noqa: F401 - the example above uses it

from .active import active_learning, plot_history
from .api import failure_probability, method_options
from .form import form, sorm
from .limit_state import SYSTEMS, LimitState
from .result import ConvergenceError, ReliabilityResult, beta_of, clopper_pearson
from .simulation import importance_sampling, monte_carlo
from .subset import subset_simulation

__all__ = ["ConvergenceError", "LimitState", "ReliabilityResult", "SYSTEMS", "active_learning",
           "beta_of", "clopper_pearson", "failure_probability", "form", "importance_sampling",
           "method_options", "monte_carlo", "plot_history", "sorm", "subset_simulation"]
