"""CEC-IB's Hartigan visits in a compiled JAX loop (full covariances, float64).

The loop of :func:`bayesclust.inference.information.cecib.cecib` with the visits of a pass
run by ``jax.lax.while_loop``: the next few points' moves are evaluated together against
the current statistics and the first point that moves is committed, which is the point the
sequential NumPy loop would move next, so the visits, their order and their formulas are
those of the NumPy loop (Śmieja & Geiger 2017, §4; the rank-one updates of the matrix
determinant lemma and Sherman--Morrison).  Only a visit that needs the member points (an
ill-conditioned downdate) returns to the host.  JAX is imported on first use.

Private to ``inference/information/``; ``cecib.py`` drives it.
"""

from __future__ import annotations

_SUSPECT_TOL = 1e-6  # below this factor a downdate is checked against the member points

#: Points whose moves one iteration of the compiled scan evaluates together.
_CHUNK = 8  # fastest of 4..64 on Digits (n = 1797, d = 10, K = 20)


def _scan_fn():
    """The jitted scan (built on first use: importing this module imports no JAX)."""
    global _SCAN
    if _SCAN is None:
        import jax

        _SCAN = jax.jit(_scan_impl)
    return _SCAN


_SCAN = None


def _scan_impl(Xp, zp, labels, mu, cov, inv, logdet, n, counts, L, S, H, E, active,
               pos0, n_real, n_min, tol, beta, c0):
    """Hartigan visits of points ``pos0..n_real-1`` until a visit the host must make.

    Exactly the visits of :func:`_pass` (full covariances) in the same order:
    the gains of the next ``_CHUNK`` points are evaluated against the current
    statistics together, and the first point that moves is committed by the
    same rank-one formulas; every point before it would have left the state
    unchanged.  A move that leaves its cluster below ``n_min`` points deletes
    the cluster and puts its members one by one into the cluster of smallest
    cost increase, as :meth:`_ClusterStats.assign_greedy` does.  A visit whose
    downdate factor is at or below ``_SUSPECT_TOL`` (the host checks it against
    the member points) stops the scan at that point.  Returns
    ``(labels, stats..., active, pos, host, moved, fail)``: ``pos`` the point the
    host visits next (``>= n_real`` when the scan ran to the end), ``fail`` set
    when a deleted cluster's point found no cluster to take it.
    """
    import jax.numpy as jnp
    from jax import lax

    B = _CHUNK
    K, d = mu.shape
    n_total = n_real.astype(Xp.dtype)
    big = jnp.asarray(B, jnp.int32)
    in_data = jnp.arange(Xp.shape[0]) < n_real

    def add_terms(n, logdet, counts, L, S, H, q, zb):
        """add_candidates for a batch: ``q`` (..., K), ``zb`` (...)."""
        n1 = n + 1.0
        ldr = logdet + d * jnp.log(n / n1)
        p1 = n1 / n_total
        base1 = p1 * (c0 - jnp.log(p1))
        ld = ldr + jnp.log1p(q * (1.0 / n1))
        labelled = (zb >= 0)[..., None]
        c = jnp.moveaxis(counts[:, jnp.maximum(zb, 0)], 0, -1)
        S_lab = S - _xlogx_j(c) + _xlogx_j(c + 1.0)
        H_lab = jnp.log(L + 1.0) - S_lab / (L + 1.0)
        E_add = jnp.where(labelled, base1 + p1 * beta * H_lab + 0.5 * p1 * ld,
                          (base1 + p1 * beta * H) + (0.5 * p1) * ld)
        return E_add, ld, jnp.where(labelled, S_lab, S), jnp.where(labelled, H_lab, H)

    def commit_add(st, j, v, w, q, ld, S_new, H_new, E_new, zi):
        mu, cov, inv, logdet, n, counts, L, S, H, E = st
        nj = n[j]
        rj = nj / (nj + 1.0)
        dz = jnp.where(zi >= 0, 1.0, 0.0)
        return (mu.at[j].add(v / (nj + 1.0)),
                cov.at[j].set(rj * (cov[j] + jnp.outer(v, v) / (nj + 1.0))),
                inv.at[j].set((inv[j] - jnp.outer(w, w) / (nj + 1.0 + q)) / rj),
                logdet.at[j].set(ld), n.at[j].add(1.0),
                counts.at[j, jnp.maximum(zi, 0)].add(dz), L.at[j].add(dz),
                S.at[j].set(S_new), H.at[j].set(H_new), E.at[j].set(E_new))

    def greedy(p, carry):
        """assign_greedy of point ``p`` (its label is -1)."""
        labels, st, active, fail = carry
        mu, cov, inv, logdet, n, counts, L, S, H, E = st
        x, zi = Xp[p], zp[p]
        v = x[None] - mu
        w = jnp.einsum("kde,ke->kd", inv, v)
        q = jnp.sum(v * w, axis=-1)
        E_add, ld, S_add, H_add = add_terms(n, logdet, counts, L, S, H, q, zi)
        inc = jnp.where(active, E_add - E, jnp.inf)
        inc = jnp.where(jnp.isnan(inc), jnp.inf, inc)
        j = jnp.argmin(inc)
        st = commit_add(st, j, v[j], w[j], q[j], ld[j], S_add[j], H_add[j], E_add[j], zi)
        return labels.at[p].set(j.astype(labels.dtype)), st, active, fail | ~jnp.isfinite(inc[j])

    def delete(args):
        """Remove slot ``a`` for good and reassign its members in index order."""
        labels, st, active, a = args
        mu, cov, inv, logdet, n, counts, L, S, H, E = st
        st = (mu, cov, inv, logdet, n.at[a].set(0.0), counts, L, S, H, E.at[a].set(0.0))
        active = active.at[a].set(False)
        member = in_data & (labels == a)
        idx = jnp.nonzero(member, size=Xp.shape[0], fill_value=0)[0]
        labels = jnp.where(member, -1, labels)
        m = jnp.sum(member)

        def one(t, carry):
            return greedy(idx[t], carry)

        return lax.fori_loop(0, m, one, (labels, st, active, jnp.asarray(False)))

    def no_delete(args):
        labels, st, active, _ = args
        return labels, st, active, jnp.asarray(False)

    def cond(c):
        pos, host, fail = c[3], c[4], c[6]
        return (pos < n_real) & ~host & ~fail

    def body(c):
        labels, st, active, pos, _, moved, _ = c
        mu, cov, inv, logdet, n, counts, L, S, H, E = st
        xb = lax.dynamic_slice_in_dim(Xp, pos, B)
        zb = lax.dynamic_slice_in_dim(zp, pos, B)
        lb = lax.dynamic_slice_in_dim(labels, pos, B)
        valid = pos + jnp.arange(B) < n_real
        v = xb[:, None, :] - mu[None]  # (B, K, d)
        w = jnp.einsum("kde,bke->bkd", inv, v)
        q = jnp.sum(v * w, axis=-1)  # (B, K)
        E_add, ld_add, S_add, H_add = add_terms(n, logdet, counts, L, S, H, q, zb)
        # -- removing every point from its own cluster (remove_candidate)
        rows = jnp.arange(B)
        labelled = zb >= 0
        zc = jnp.maximum(zb, 0)
        na = n[lb]
        f = 1.0 - q[rows, lb] / (na - 1.0)
        suspect = valid & (f <= _SUSPECT_TOL)
        ld_rm = logdet[lb] + d * jnp.log(na / (na - 1.0)) + jnp.log(jnp.where(suspect, 1.0, f))
        c_rm = counts[lb, zc]
        S_rm_lab = S[lb] - c_rm * jnp.log(jnp.maximum(c_rm, 1e-300)) + jnp.where(
            c_rm > 1, (c_rm - 1.0) * jnp.log(jnp.maximum(c_rm - 1.0, 1e-300)), 0.0)
        L_rm = L[lb] - 1.0
        H_rm_lab = jnp.where(L_rm > 0, jnp.log(jnp.maximum(L_rm, 1e-300))
                             - S_rm_lab / jnp.where(L_rm > 0, L_rm, 1.0), 0.0)
        S_rm = jnp.where(labelled, S_rm_lab, S[lb])
        H_rm = jnp.where(labelled, H_rm_lab, H[lb])
        p_rm = (na - 1.0) / n_total
        E_rm = p_rm * (c0 + 0.5 * ld_rm + beta * H_rm - jnp.log(p_rm))
        gain = jnp.where(active[None], E[None] + (E[lb] - E_rm)[:, None] - E_add, -jnp.inf)
        gain = gain.at[rows, lb].set(0.0)
        j = jnp.argmax(gain, axis=1)
        mover = valid & ~suspect & (gain[rows, j] > tol)
        stop = suspect | mover
        any_stop = jnp.any(stop)
        b = jnp.argmax(stop)
        a_b, j_b = lb[b], j[b]
        host = any_stop & suspect[b]
        commit = any_stop & ~host
        i = pos + b

        def do_move(_):
            zi = zb[b]
            na_, va, wa, qa = n[a_b], v[b, a_b], w[b, a_b], q[b, a_b]
            r = na_ / (na_ - 1.0)
            dz = jnp.where(zi >= 0, 1.0, 0.0)
            st_rm = (mu.at[a_b].add(-va / (na_ - 1.0)),
                     cov.at[a_b].set(r * (cov[a_b] - jnp.outer(va, va) / (na_ - 1.0))),
                     inv.at[a_b].set((inv[a_b] + jnp.outer(wa, wa) / (na_ - 1.0 - qa)) / r),
                     logdet.at[a_b].set(ld_rm[b]), n.at[a_b].add(-1.0),
                     counts.at[a_b, zc[b]].add(-dz), L.at[a_b].add(-dz),
                     S.at[a_b].set(S_rm[b]), H.at[a_b].set(H_rm[b]), E.at[a_b].set(E_rm[b]))
            st2 = commit_add(st_rm, j_b, v[b, j_b], w[b, j_b], q[b, j_b], ld_add[b, j_b],
                             S_add[b, j_b], H_add[b, j_b], E_add[b, j_b], zi)
            return labels.at[i].set(j_b.astype(labels.dtype)), st2

        def keep(_):
            return labels, st

        labels2, st2 = lax.cond(commit, do_move, keep, None)
        labels2, st2, active2, fail = lax.cond(commit & (st2[4][a_b] < n_min), delete, no_delete,
                                               (labels2, st2, active, a_b))
        new_pos = jnp.where(any_stop, jnp.where(host, i, i + 1), pos + big).astype(jnp.int32)
        return labels2, st2, active2, new_pos, host, moved | commit, fail

    init = (labels, (mu, cov, inv, logdet, n, counts, L, S, H, E), active,
            pos0.astype(jnp.int32), jnp.asarray(False), jnp.asarray(False), jnp.asarray(False))
    labels, st, active, pos, host, moved, fail = lax.while_loop(cond, body, init)
    return (labels, *st, active, pos, host, moved, fail)


def _xlogx_j(c):
    import jax.numpy as jnp

    return jnp.where(c > 0, c * jnp.log(jnp.where(c > 0, c, 1.0)), 0.0)
