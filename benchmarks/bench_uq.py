"""Accuracy and cost of the sensitivity and reliability methods on problems with known answers:
Ishigami Sobol' indices (exact closed forms), FORM on a hyperplane (exact), subset simulation
at Pf = Phi(-4.5) ~ 3.4e-6 in 10-D over seeds (each sampler on the same seeds: the spread of
Pf over the seeds against the estimated CoV, the intervals' coverage of the exact Pf), subset
simulation with its defaults (target CoV 0.3 within 10^4 runs: runs used, CoV reported and
over seeds, bias, the share of seeds meeting the target), Monte Carlo's and importance
sampling's defaults and the same two run to a target CoV (Monte Carlo 0.1 at Pf = Phi(-3),
importance sampling 0.02 at Phi(-4.5)), and
active learning with the GP and with the BDL on the four-branch series system (Echard et al.
2011 reference Pf).

    python benchmarks/bench_uq.py [--json] [--seeds 200] [--subset-n 1800]
                                  [--samplers acs,mma] [--candidates 300000]
                                  [--only ishigami,form,subset,subset-default,
                                          sampling-default,sampling-target,active]
"""
import argparse
import json
import time
import warnings

import numpy as np
from scipy import special

from uqkit.reliability.problems import FOUR_BRANCH_PF, four_branch, hyperplane, ishigami
from uqkit.reliability.problems import ishigami_indices as ishigami_exact
from uqkit.reliability.problems import ishigami_inputs
from uqkit.reliability.problems import standard_normals as normals
from uqkit.reliability import failure_probability
from uqkit.sensitivity import sobol_indices


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--seeds", type=int, default=200,
                    help="seeds of the subset simulation (the empirical CoV over s seeds has a "
                         "relative standard error of about 1 / sqrt(2 s))")
    ap.add_argument("--subset-n", type=int, default=1800,
                    help="subset simulation's samples per level (1800: 9,900 runs at 6 levels)")
    ap.add_argument("--samplers", default="acs,mma", help="subset simulation's samplers")
    ap.add_argument("--only", default="ishigami,form,subset,subset-default,sampling-default,"
                                      "sampling-target,active",
                    help="parts to run")
    ap.add_argument("--candidates", type=int, default=300_000,
                    help="candidate population of active learning")
    args = ap.parse_args(argv)
    parts = set(args.only.split(","))
    out = {}

    if "ishigami" in parts:
        inputs = ishigami_inputs(("x0", "x1", "x2"))
        first, total = ishigami_exact()
        t0 = time.perf_counter()
        res = sobol_indices(ishigami, inputs, n=2 ** 13, seed=0, executor="serial")
        out["ishigami"] = {"max_error_first": float(np.abs(res.first - first).max()),
                           "max_error_total": float(np.abs(res.total - total).max()),
                           "ci_cover": bool(np.all((res.first_ci[0] <= first)
                                                   & (first <= res.first_ci[1]))
                                            and np.all((res.total_ci[0] <= total)
                                                       & (total <= res.total_ci[1]))),
                           "model_runs": res.model_runs, "seconds": time.perf_counter() - t0}

    exact = float(special.ndtr(-4.5))
    if "form" in parts:
        r = failure_probability(hyperplane, normals(10), method="form", executor="serial")
        out["form_hyperplane"] = {"pf_over_exact": r.pf / exact, "model_runs": r.model_runs}

    for sampler in args.samplers.split(",") if "subset" in parts else ():
        t0 = time.perf_counter()
        runs = [failure_probability(hyperplane, normals(10), method="subset", n=args.subset_n,
                                    sampler=sampler, seed=s, executor="serial")
                for s in range(args.seeds)]
        pf = np.array([x.pf for x in runs])
        out[f"subset_{sampler}_beta_4_5_10d"] = {
            "seeds": args.seeds, "n": args.subset_n, "exact": exact,
            "mean_pf_over_exact": float(pf.mean() / exact),
            "mean_pf_over_exact_se": float(pf.std(ddof=1) / np.sqrt(len(pf)) / exact),
            "empirical_cov": float(pf.std(ddof=1) / pf.mean()),
            "empirical_cov_rel_se": float(1 / np.sqrt(2 * len(pf))),
            "estimated_cov_mean": float(np.mean([x.cov for x in runs])),
            "au_beck_cov_mean": float(np.mean([x.info["cov_au_beck"] for x in runs])),
            "ci_cover_share": float(np.mean([x.ci[0] <= exact <= x.ci[1] for x in runs])),
            "model_runs_mean": float(np.mean([x.model_runs for x in runs])),
            "model_runs_max": int(max(x.model_runs for x in runs)),
            "seconds": time.perf_counter() - t0}

    for beta in (3.0, 4.5) if "subset-default" in parts else ():
        out[f"subset_default_beta_{beta:g}_10d".replace(".", "_")] = subset_defaults(
            args.seeds, beta)
    for method, beta in (("mc", 3.0), ("is", 4.5)) if "sampling-default" in parts else ():
        out[f"{method}_default_beta_{beta:g}_10d".replace(".", "_")] = sampling_defaults(
            method, min(args.seeds, 200), beta)
    for method, beta, target in ((("mc", 3.0, 0.1), ("is", 4.5, 0.02))
                                 if "sampling-target" in parts else ()):
        out[f"{method}_target_{target:g}_beta_{beta:g}_10d".replace(".", "_")] = (
            sampling_defaults(method, args.seeds, beta, target_cov=target))

    # active learning with the GP and the BDL on one candidate population: Pf against the
    # literature's reference and against the population's own Pf (the true g on every
    # candidate), which isolates the surrogate's misclassification from the population's
    # Monte Carlo error
    for k in (6.0, 7.0) if "active" in parts else ():
        cand = np.random.default_rng(0).standard_normal((args.candidates, 2))
        population_pf = float(np.mean(four_branch(cand, k) <= 0))
        for name in ("gp", "bdl"):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = failure_probability(lambda X, k=k: four_branch(X, k), normals(2),
                                        method="active", surrogate=name, candidates=cand,
                                        executor="serial", seed=0)
            out[f"active_{name}_four_branch_k{k:g}"] = {
                "pf": r.pf, "reference": FOUR_BRANCH_PF[k], "population_pf": population_pf,
                "relative_error": r.pf / FOUR_BRANCH_PF[k] - 1,
                "relative_error_population": r.pf / population_pf - 1,
                "model_runs": r.model_runs, "converged": bool(r.info["converged"]),
                "seconds": time.perf_counter() - t0}
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(key, json.dumps(value))
    return out


def sampling_defaults(method, seeds, beta, **options):
    """Monte Carlo or importance sampling with its default n (or ``options``) over seeds, on
    the 10-D hyperplane: runs, CoV reported and over seeds, bias, interval coverage."""
    t0 = time.perf_counter()
    exact = float(special.ndtr(-beta))
    runs = [failure_probability(lambda X: hyperplane(X, beta), normals(10), method=method,
                                seed=s, executor="serial", **options) for s in range(seeds)]
    pf = np.array([x.pf for x in runs])
    return {"seeds": seeds, "exact": exact, **options,
            "model_runs_mean": float(np.mean([x.model_runs for x in runs])),
            "model_runs_max": int(max(x.model_runs for x in runs)),
            "estimate_runs_mean": float(np.mean([x.info["n"] for x in runs])),
            "batches_mean": float(np.mean([x.info.get("batches", 1) for x in runs])),
            "batches_max": int(max(x.info.get("batches", 1) for x in runs)),
            "estimated_cov_mean": float(np.mean([x.cov for x in runs])),
            "empirical_cov": float(pf.std(ddof=1) / pf.mean()),
            "mean_pf_over_exact": float(pf.mean() / exact),
            "mean_pf_over_exact_se": float(pf.std(ddof=1) / np.sqrt(len(pf)) / exact),
            "target_met_share": float(np.mean([x.info.get("target_met", True) for x in runs])),
            "ci_cover_share": float(np.mean([x.ci[0] <= exact <= x.ci[1] for x in runs])),
            "seconds": time.perf_counter() - t0}


def subset_defaults(seeds, beta):
    """Subset simulation with its default settings (no option given) over seeds, on the
    10-D hyperplane."""
    t0 = time.perf_counter()
    exact = float(special.ndtr(-beta))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a missed target is counted below
        runs = [failure_probability(lambda X: hyperplane(X, beta), normals(10),
                                    method="subset", seed=s, executor="serial")
                for s in range(seeds)]
    pf = np.array([x.pf for x in runs])
    pooled = [len(x.info["runs"]) for x in runs]
    return {"seeds": seeds, "exact": exact,
            "model_runs_mean": float(np.mean([x.model_runs for x in runs])),
            "model_runs_max": int(max(x.model_runs for x in runs)),
            "estimated_cov_mean": float(np.mean([x.cov for x in runs])),
            "empirical_cov": float(pf.std(ddof=1) / pf.mean()),
            "empirical_cov_rel_se": float(1 / np.sqrt(2 * len(pf))),
            "mean_pf_over_exact": float(pf.mean() / exact),
            "mean_pf_over_exact_se": float(pf.std(ddof=1) / np.sqrt(len(pf)) / exact),
            "target_met_share": float(np.mean([x.info["target_met"] for x in runs])),
            "ci_cover_share": float(np.mean([x.ci[0] <= exact <= x.ci[1] for x in runs])),
            "pooled_runs": {str(k): pooled.count(k) for k in sorted(set(pooled))},
            "discarded_share": float(np.mean([x.info["discarded_runs"] > 0 for x in runs])),
            "seconds": time.perf_counter() - t0}


if __name__ == "__main__":
    main()
