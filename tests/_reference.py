"""Slow, literal reference implementations used as test oracles.

Written as plain per-point Python/NumPy loops in float64, straight from the
papers' pseudo-code, so that the vectorised package code can be checked
against them.  Nothing here imports bayesclust.
"""

import numpy as np


def dp_means_pass_loop(X, w, centers, lam):
    """One pass of Kulis & Jordan Algorithm 1 (means frozen), point by point.

    Returns uncompacted labels and the centre list with new seeds appended.
    """
    centers = [np.asarray(c, float) for c in centers]
    labels = np.empty(len(X), int)
    for i, x in enumerate(X):
        d = np.array([np.sum((x - c) ** 2) for c in centers])
        if w[i] * d.min() > lam:
            centers.append(x.copy())
            labels[i] = len(centers) - 1
        else:
            labels[i] = int(np.argmin(d))  # first index on ties
    return labels, centers


def dp_means_loop(X, lam, sample_weight=None, max_iter=100, tol=1e-12):
    """Kulis & Jordan Algorithm 1 with our resolutions (docs/deviations.md#dpmeans-pass-semantics), slowly.

    Returns (labels, centers, objective_trace, n_iter, converged).
    """
    X = np.asarray(X, float)
    n = len(X)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    mean = (w[:, None] * X).sum(0) / w.sum()
    centers = [mean]
    labels = np.zeros(n, int)
    J = float(np.sum(w * np.sum((X - mean) ** 2, axis=1)) + lam)
    trace = [J]
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        z, cand_centers = dp_means_pass_loop(X, w, centers, lam)
        used = [c for c in range(len(cand_centers)) if np.any(z == c)]
        remap = {c: r for r, c in enumerate(used)}
        z = np.array([remap[c] for c in z])
        centers = [(w[z == r, None] * X[z == r]).sum(0) / w[z == r].sum() for r in range(len(used))]
        Jn = float(sum(w[i] * np.sum((X[i] - centers[z[i]]) ** 2) for i in range(n)) + lam * len(used))
        trace.append(Jn)
        unchanged = np.array_equal(z, labels)
        stalled = Jn >= J - tol * max(1.0, abs(J))
        labels, J = z, Jn
        if unchanged or stalled:
            converged = True
            break
    return labels, np.array(centers), np.array(trace), it, converged


def farthest_first_loop(X, k):
    """Kulis & Jordan §6.1 farthest-first lambda, literally (measured when |T| = k)."""
    X = np.asarray(X, float)
    T = [X.mean(0)]
    lam = None
    for _ in range(k):
        dmin = np.array([min(np.sum((x - t) ** 2) for t in T) for x in X])
        far = int(np.argmax(dmin))
        lam = dmin[far]
        T.append(X[far])
    return float(lam)


def dp_means_pass_live_counts(X, labels, centers, lam):
    """One DP-means pass in which a cluster dies the moment it empties.

    Clusters die the moment they empty (docs/deviations.md#dpmeans-own-cluster): point i is
    removed from its cluster first; clusters whose live count (without i) is
    0 are unavailable; means frozen, clusters opened in the pass sit at their
    seed point.  This is the exact small-variance limit of one sweep of Neal's
    Algorithm 2 as Kulis & Jordan write it.  Returns the new labels.
    """
    X = np.asarray(X, float)
    labels = np.array(labels, int)
    centers = [np.asarray(c, float) for c in centers]
    counts = np.bincount(labels, minlength=len(centers)).astype(int)
    for i, x in enumerate(X):
        counts[labels[i]] -= 1
        d = np.array([np.sum((x - c) ** 2) if counts[j] > 0 else np.inf for j, c in enumerate(centers)])
        if d.min() > lam:
            centers.append(x.copy())
            counts = np.append(counts, 0)
            labels[i] = len(centers) - 1
        else:
            labels[i] = int(np.argmin(d))
        counts[labels[i]] += 1
    return labels


def canonical(labels):
    """Restricted-growth form of a partition (first appearance order)."""
    _, first, inverse = np.unique(np.asarray(labels), return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return tuple(order[inverse].tolist())


def all_partitions(n):
    """Every set partition of range(n) as a restricted-growth tuple."""
    def grow(prefix, k):
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for c in range(k + 1):
            yield from grow(prefix + [c], max(k, c + 1))
    yield from grow([0], 1) if n else iter([()])


def dp_gmm_log_posterior(X, partition, alpha, sigma2, rho2):
    """Unnormalised log p(partition | X) of the DP mixture with means integrated out.

    CRP prior times, per cluster and per dimension, the Gaussian marginal
    ``N(x_c | 0, sigma2 I + rho2 11^T)``.
    """
    from scipy.special import gammaln
    from scipy.stats import multivariate_normal

    X = np.asarray(X, float)
    partition = np.asarray(partition)
    n = len(X)
    clusters = np.unique(partition)
    logp = len(clusters) * np.log(alpha) + gammaln(alpha) - gammaln(alpha + n)
    for c in clusters:
        members = X[partition == c]
        m = len(members)
        logp += gammaln(m)
        cov = sigma2 * np.eye(m) + rho2 * np.ones((m, m))
        for j in range(X.shape[1]):
            logp += multivariate_normal(np.zeros(m), cov).logpdf(members[:, j])
    return logp


def hard_hdp_point_pass_reference(groups, z, v, mu, lam_local, lam_global):
    """Step 4 of Kulis & Jordan's Algorithm 2, literally, in place.

    ``z[j]`` (local cluster of each point of data set ``j``), ``v[j]`` (list: global
    cluster of each local cluster) and ``mu`` (list of global means) are updated;
    data sets and points in order; ``d_p = |x - mu_p|^2`` (+ ``lam_local`` when no
    local cluster of the data set maps to ``p``, the point's own included); new local
    + new global at ``x`` iff ``min_p d_p > lam_local + lam_global``; else the
    lowest-index local cluster mapped to ``argmin_p d_p`` (lowest p on ties), or a new
    local cluster mapped to it.  Means are frozen; globals opened in the pass sit at
    their seed.  Empty local clusters are not deleted here.
    """
    for j in range(len(groups)):
        for i, x in enumerate(groups[j]):
            d = np.array([np.sum((x - m) ** 2) for m in mu])
            for p in range(len(mu)):
                if p not in v[j]:
                    d[p] += lam_local
            if d.min() > lam_local + lam_global:
                v[j].append(len(mu))
                mu.append(x.copy())
                z[j][i] = len(v[j]) - 1
            else:
                p = int(np.argmin(d))  # first index on ties
                if p in v[j]:
                    z[j][i] = v[j].index(p)  # lowest-index local cluster mapped to p
                else:
                    v[j].append(p)
                    z[j][i] = len(v[j]) - 1


def hard_hdp_reference(groups, lam_local, lam_global, max_iter=100, tol=1e-12):
    """Kulis & Jordan Algorithm 2 (hard Gaussian HDP) with our resolutions (docs/deviations.md#hard-hdp-resolutions), literally.

    Plain per-point / per-local-cluster loops in float64:

    * init: one global cluster at the mean of all points, one local cluster per data set;
    * step 4: data sets in order, points in order; ``d_p = |x - mu_p|^2`` (+ ``lam_local`` when
      no local cluster of the data set maps to ``p``, the point's own local cluster included);
      new local + new global at ``x`` iff ``min_p d_p > lam_local + lam_global``; else the
      lowest-index local cluster mapped to ``argmin_p d_p`` (lowest p on ties), or a new local
      cluster mapped to it.  Means are frozen; globals opened in the pass sit at their seed;
    * empty local clusters are deleted (order kept);
    * step 5: data sets in order, local clusters in order; ``dbar_p = sum_{x in S} |x - mu_p|^2``;
      new global at the local mean iff ``min_p dbar_p > lam_global + sum_{x in S} |x - mean_S|^2``
      (visible to later local clusters), else ``argmin_p dbar_p``;
    * global clusters with no local cluster are deleted (order kept);
    * step 6: global means; objective ``SSE + lam_local * #local + lam_global * #global``;
      stop when (z, v) is unchanged or the objective did not decrease (rel. ``tol``).

    Returns a dict: ``labels`` (global cluster per point, per data set), ``local_labels``,
    ``local_to_global`` (per data set), ``centers``, ``trace``, ``n_iter``, ``converged``.
    """
    groups = [np.asarray(Xj, float) for Xj in groups]
    D = len(groups)
    mu = [np.concatenate(groups).mean(0)]
    z = [np.zeros(len(Xj), int) for Xj in groups]
    v = [[0] for _ in range(D)]

    def objective():
        sse = sum(
            np.sum((groups[j][i] - mu[v[j][z[j][i]]]) ** 2)
            for j in range(D)
            for i in range(len(groups[j]))
        )
        return float(sse + lam_local * sum(len(vj) for vj in v) + lam_global * len(mu))

    J = objective()
    trace = [J]
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        z_prev = [zj.copy() for zj in z]
        v_prev = [list(vj) for vj in v]
        hard_hdp_point_pass_reference(groups, z, v, mu, lam_local, lam_global)  # step 4
        for j in range(D):  # delete empty local clusters, keep order
            used = [c for c in range(len(v[j])) if np.any(z[j] == c)]
            remap = {c: r for r, c in enumerate(used)}
            z[j] = np.array([remap[c] for c in z[j]])
            v[j] = [v[j][c] for c in used]
        # step 5: local clusters
        for j in range(D):
            for c in range(len(v[j])):
                S = groups[j][z[j] == c]
                mbar = S.mean(0)
                dbar = np.array([np.sum((S - m) ** 2) for m in mu])
                if dbar.min() > lam_global + np.sum((S - mbar) ** 2):
                    v[j][c] = len(mu)
                    mu.append(mbar)
                else:
                    v[j][c] = int(np.argmin(dbar))
        used = [p for p in range(len(mu)) if any(p in vj for vj in v)]  # delete orphans
        remap = {p: r for r, p in enumerate(used)}
        v = [[remap[p] for p in vj] for vj in v]
        # step 6: global means
        members = [[] for _ in used]
        for j in range(D):
            for i, x in enumerate(groups[j]):
                members[v[j][z[j][i]]].append(x)
        mu = [np.mean(m, axis=0) for m in members]
        Jn = objective()
        trace.append(Jn)
        unchanged = all(np.array_equal(a, b) for a, b in zip(z, z_prev)) and v == v_prev
        stalled = Jn >= J - tol * max(1.0, abs(J))
        J = Jn
        if unchanged or stalled:
            converged = True
            break
    return dict(
        labels=[np.array([v[j][c] for c in z[j]], int) for j in range(D)],
        local_labels=[zj.copy() for zj in z],
        local_to_global=[np.array(vj, int) for vj in v],
        centers=np.array(mu),
        trace=np.array(trace),
        n_iter=it,
        converged=converged,
    )


def hdp_crf_exact(groups, alpha, gamma, sigma2, rho2):
    """Exact posterior of the HDP mixture's global and local partitions, by enumeration.

    Every configuration of the Chinese restaurant franchise: a set partition of each
    data set into tables (CRP(alpha) prior, Teh et al. 2006) and a set partition of all
    tables into dishes (CRP(gamma) prior); dish means integrated out
    (``N(x_p | 0, sigma2 I + rho2 11^T)`` per dimension, via :func:`dp_gmm_log_posterior`'s
    marginal).  Returns two dicts, keyed by the canonical global partition of the stacked
    points and by the tuple of canonical local partitions of the data sets.
    """
    import itertools

    from scipy.special import gammaln, logsumexp

    groups = [np.asarray(Xj, float) for Xj in groups]
    X = np.concatenate(groups)
    offsets = np.cumsum([0] + [len(Xj) for Xj in groups])

    def crp(sizes, conc):
        sizes = np.asarray(sizes)
        return (len(sizes) * np.log(conc) + gammaln(conc) - gammaln(conc + sizes.sum())
                + np.sum(gammaln(sizes)))

    def marginal(members):
        # dp_gmm_log_posterior of one cluster minus its CRP term = the Gaussian marginal.
        return dp_gmm_log_posterior(members, np.zeros(len(members), int), 1.0, sigma2, rho2) - (
            np.log(1.0) + gammaln(1.0) - gammaln(1.0 + len(members)) + gammaln(len(members)))

    logs_global, logs_local = {}, {}
    for locals_ in itertools.product(*[list(all_partitions(len(Xj))) for Xj in groups]):
        tables = []  # (stacked point indices) per table
        log_tables = 0.0
        for j, part in enumerate(locals_):
            part = np.asarray(part)
            log_tables += crp(np.bincount(part), alpha)
            tables += [offsets[j] + np.flatnonzero(part == c) for c in range(part.max() + 1)]
        for dish_part in all_partitions(len(tables)):
            dish_part = np.asarray(dish_part)
            labels = np.empty(len(X), int)
            for t, p in zip(tables, dish_part):
                labels[t] = p
            logp = log_tables + crp(np.bincount(dish_part), gamma)
            logp += sum(marginal(X[labels == p]) for p in range(dish_part.max() + 1))
            for store, key in ((logs_global, canonical(labels)), (logs_local, tuple(locals_))):
                store.setdefault(key, []).append(logp)
    out = []
    for store in (logs_global, logs_local):
        keys = list(store)
        lp = np.array([logsumexp(store[k]) for k in keys])
        out.append(dict(zip(keys, np.exp(lp - logsumexp(lp)))))
    return tuple(out)


def hdp_crf_log_joint(groups, local_parts, dish_part, alpha, gamma, sigma2, rho2):
    """``log p(tables, dishes, X)`` of one CRF configuration, dish means integrated out.

    ``local_parts[j]`` is a partition of data set ``j`` into tables (ids ``0..``), and
    ``dish_part`` the dish of every table, the tables listed data set by data set in
    order of their ids.  CRP(alpha) of every data set's tables, CRP(gamma) of the
    tables' dishes (Teh et al. 2006), and per dish and dimension the Gaussian marginal
    ``N(x_p | 0, sigma2 I + rho2 11^T)``: the term that :func:`hdp_crf_exact` sums.
    """
    from scipy.special import gammaln

    def crp(sizes, conc):
        sizes = np.asarray(sizes)
        return (len(sizes) * np.log(conc) + gammaln(conc) - gammaln(conc + sizes.sum())
                + np.sum(gammaln(sizes)))

    groups = [np.asarray(Xj, float) for Xj in groups]
    X = np.concatenate(groups)
    offsets = np.cumsum([0] + [len(Xj) for Xj in groups])
    tables, logp = [], 0.0
    for j, part in enumerate(local_parts):
        part = np.asarray(part)
        logp += crp(np.bincount(part), alpha)
        tables += [offsets[j] + np.flatnonzero(part == c) for c in range(part.max() + 1)]
    dish_part = np.asarray(dish_part)
    logp += crp(np.bincount(dish_part), gamma)
    labels = np.empty(len(X), int)
    for t, p in zip(tables, dish_part):
        labels[t] = p
    for p in range(dish_part.max() + 1):
        members = X[labels == p]
        logp += dp_gmm_log_posterior(members, np.zeros(len(members), int), 1.0, sigma2, rho2) - (
            gammaln(1.0) - gammaln(1.0 + len(members)) + gammaln(len(members)))
    return logp


def dc_gradient_closed_form(m, X, c, n_classes, smooth_std, n0=1.0, lam_eq=0.0):
    """Kaski et al. (2005) eq. 11, looped in float64: the gradient of the smoothed DC objective.

    ``sigma^2 dF/dm_j = sum_x sum_l (x - m_j) y_l(x) y_j(x) (L_{j,c(x)} - L_{l,c(x)})`` with
    ``L_ji = digamma(n_ji + n0_i) - (1 + lam_eq) digamma(N_j + N0)`` (soft counts ``n_ji``).
    """
    from scipy.special import digamma, softmax

    m, X = np.asarray(m, float), np.asarray(X, float)
    K = len(m)
    s2 = smooth_std**2
    y = np.array([softmax(-np.sum((x - m) ** 2, axis=1) / (2 * s2)) for x in X])
    n = np.zeros((K, n_classes))
    for yi, ci in zip(y, c):
        n[:, ci] += yi
    n0v = np.broadcast_to(np.asarray(n0, float), (n_classes,))
    L = digamma(n + n0v) - (1 + lam_eq) * digamma(n.sum(1, keepdims=True) + n0v.sum())
    grad = np.zeros_like(m)
    for x, yi, ci in zip(X, y, c):
        for j in range(K):
            for l in range(K):
                grad[j] += (x - m[j]) * yi[l] * yi[j] * (L[j, ci] - L[l, ci])
    return grad / s2


def gibbs_point_pass_loop(X, labels, K, log_alpha, sigma2, rho2, u, collapsed, means=None,
                          z=None):
    """Neal's single-site moves, one point at a time (slow reference of one chain's scan).

    Each point leaves its cluster, then joins slot ``c`` with weight
    ``n_c N(x | m_c, v_c I)`` or a new cluster (the first empty slot) with weight
    ``alpha N(x | 0, (rho2 + sigma2) I)``, the choice taken by inverse CDF with
    ``u[i]``.  Collapsed: ``m_c, v_c`` are the posterior predictive mean and
    ``sigma2 +`` posterior variance of the other members; Algorithm 2: ``m_c``
    is the cluster's mean in ``means`` and ``v_c = sigma2``, a new cluster's mean
    is ``r x + sqrt(sigma2 r) z[i]`` with ``r = rho2 / (rho2 + sigma2)``.
    Returns (labels, overflow).
    """
    X = np.asarray(X, np.float64)
    n, d = X.shape
    labels = np.array(labels)
    means = None if means is None else np.array(means, np.float64)
    overflow = False

    def log_normal(sq, var):
        return -0.5 * d * np.log(2 * np.pi * var) - sq / (2 * var)

    for i in range(n):
        x = X[i]
        labels[i] = -1
        logw = np.full(K + 1, -np.inf)
        for c in range(K):
            members = X[labels == c]
            if len(members) == 0:
                continue
            if collapsed:
                s2 = 1.0 / (1.0 / rho2 + len(members) / sigma2)
                m, var = s2 * members.sum(0) / sigma2, sigma2 + s2
            else:
                m, var = means[c], sigma2
            logw[c] = np.log(len(members)) + log_normal(np.sum((x - m) ** 2), var)
        logw[K] = log_alpha + log_normal(np.sum(x * x), rho2 + sigma2)
        p = np.exp(logw - logw.max())
        cdf = np.cumsum(p)
        choice = int(np.sum(cdf < u[i] * cdf[-1]))
        if choice == K:
            occupied = np.isin(np.arange(K), labels)
            if occupied.all():
                overflow = True
            choice = int(np.argmin(occupied))
            if not collapsed:
                r = rho2 / (rho2 + sigma2)
                means[choice] = r * x + np.sqrt(sigma2 * r) * z[i]
        labels[i] = choice
    return labels, overflow


def documented_attributes(cls):
    """The names listed in the numpydoc ``Attributes`` section of ``cls``'s docstring, in order."""
    import inspect
    import re

    doc = inspect.getdoc(cls)
    section = doc.split("Attributes\n----------\n", 1)[1]
    names = []
    for line in section.splitlines():
        m = re.match(r"^([A-Za-z_][\w, ]*) : ", line)
        if m:
            names += [name.strip() for name in m.group(1).split(",")]
    return names


def hard_dc_pass_loop(X, classes, labels, centers, lam, xi, n0=1.0, live=False):
    """One HardDC pass, point by point (docs/deviations.md#hard-dc-model).

    Point i (class c) leaves its cluster; the cost of cluster j is
    ``|x_i - mu_j|^2 - xi log((n_{-i,jc} + n0) / (N_{-i,j} + C n0))``, of a new cluster at
    x_i ``lam - xi log(1 / C)``; the least cost wins (first index on ties, a tie keeps an
    existing cluster).  Means frozen; a cluster opened in the pass sits at its seed.
    ``live=False``: every cluster of the pass stays available (Algorithm 1 as printed, the
    package's pass); ``live=True``: a cluster whose count without i is 0 is unavailable
    (the exact small-variance limit of one Gibbs sweep).  Returns the uncompacted labels.
    """
    X = np.asarray(X, float)
    classes = np.asarray(classes, int)
    C = int(classes.max()) + 1
    labels = np.array(labels, int)
    centers = [np.asarray(c, float) for c in centers]
    table = np.zeros((len(centers), C))
    np.add.at(table, (labels, classes), 1.0)
    for i, x in enumerate(X):
        c = classes[i]
        table[labels[i], c] -= 1
        cost = []
        for j, mu in enumerate(centers):
            if live and table[j].sum() == 0:
                cost.append(np.inf)
                continue
            pred = (table[j, c] + n0) / (table[j].sum() + C * n0)
            cost.append(np.sum((x - mu) ** 2) - xi * np.log(pred))
        cost = np.array(cost)
        new = lam - xi * np.log(n0 / (C * n0))
        if new < cost.min():
            centers.append(x.copy())
            table = np.vstack([table, np.zeros(C)])
            labels[i] = len(centers) - 1
        else:
            labels[i] = int(np.argmin(cost))
        table[labels[i], c] += 1
    return labels


def empties_during_pass(X, classes, labels, centers, lam, xi, n0=1.0):
    """Whether some cluster's count falls to 0 during the live HardDC pass (then the
    package's pass and the Gibbs limit may differ: docs/deviations.md#dpmeans-own-cluster)."""
    X = np.asarray(X, float)
    classes = np.asarray(classes, int)
    C = int(classes.max()) + 1
    labels = np.array(labels, int)
    centers = [np.asarray(c, float) for c in centers]
    counts = np.bincount(labels, minlength=len(centers))
    table = np.zeros((len(centers), C))
    np.add.at(table, (labels, classes), 1.0)
    for i, x in enumerate(X):
        c = classes[i]
        counts[labels[i]] -= 1
        table[labels[i], c] -= 1
        if counts[labels[i]] == 0:
            return True
        cost = [np.sum((x - mu) ** 2) - xi * np.log((table[j, c] + n0) / (table[j].sum() + C * n0))
                if counts[j] > 0 else np.inf for j, mu in enumerate(centers)]
        if lam - xi * np.log(1.0 / C) < min(cost):
            centers.append(x.copy())
            counts = np.append(counts, 0)
            table = np.vstack([table, np.zeros(C)])
            labels[i] = len(centers) - 1
        else:
            labels[i] = int(np.argmin(cost))
        counts[labels[i]] += 1
        table[labels[i], c] += 1
    return False


def dc_limit_log_posterior(X, classes, partition, log_alpha, sigma2, rho2, xi, n0=1.0):
    """Unnormalised log posterior of a partition under the tempered DP-MDA2, means integrated
    out: ``dp_gmm_log_posterior`` (CRP and Gaussian marginals) plus
    ``xi / (2 sigma2) log Polya(c | z)`` (the sequential product of class predictives)."""
    X = np.asarray(X, float)
    classes = np.asarray(classes, int)
    partition = np.asarray(partition)
    C = int(classes.max()) + 1
    logp = dp_gmm_log_posterior(X, partition, 1.0, sigma2, rho2) + len(np.unique(partition)) * log_alpha
    log_polya = 0.0
    for cl in np.unique(partition):
        seen = np.zeros(C)
        for c in classes[partition == cl]:
            log_polya += np.log((seen[c] + n0) / (seen.sum() + C * n0))
            seen[c] += 1
    return logp + xi / (2.0 * sigma2) * log_polya
