"""surrogates: Bayesian deep learning (mean-field VI) and baseline surrogates."""
