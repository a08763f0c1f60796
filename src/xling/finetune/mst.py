"""Maximum spanning tree decoding for graph-based dependency parsing.

Chu-Liu-Edmonds over an arc score matrix ``scores[dep, head]`` (node 0 is ROOT), constrained to a
single ROOT child as UD requires: when the unconstrained tree has several, each candidate is tried
as the only child of ROOT and the best tree kept (the optimal single-root tree has some unique root
child, so this is exact).
"""

from __future__ import annotations

import numpy as np


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    """A cycle of the head graph (nodes 1..n), or None."""
    n = len(heads)
    state = np.zeros(n, dtype=np.int8)  # 0 unseen, 1 on current path, 2 done
    for start in range(1, n):
        if state[start]:
            continue
        path = []
        v = start
        while v != 0 and state[v] == 0:
            state[v] = 1
            path.append(v)
            v = heads[v]
        if v != 0 and state[v] == 1:
            return path[path.index(v):]
        for u in path:
            state[u] = 2
    return None


def _chu_liu_edmonds(scores: np.ndarray) -> np.ndarray:
    """Best arborescence rooted at 0 for ``scores[dep, head]`` (entries may be -inf)."""
    n = scores.shape[0]
    heads = np.full(n, -1, dtype=np.int64)
    heads[1:] = scores[1:].argmax(axis=1)
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[cycle] = True
    rest = np.flatnonzero(~in_cycle)  # includes 0; node rest[k] becomes k, the cycle becomes len(rest)
    cyc = np.array(cycle)
    m = len(rest) + 1
    c = m - 1
    sub = np.full((m, m), -np.inf)
    sub[np.ix_(np.arange(len(rest)), np.arange(len(rest)))] = scores[np.ix_(rest, rest)]
    # Arcs entering the cycle: breaking the cycle at dependent d costs its cycle arc.
    cycle_arc = scores[cyc, heads[cyc]]
    enter = scores[np.ix_(cyc, rest)] - cycle_arc[:, None]  # [cycle dep, outside head]
    enter_dep = enter.argmax(axis=0)
    sub[c, : len(rest)] = enter[enter_dep, np.arange(len(rest))]
    # Arcs leaving the cycle: best head inside it for each outside dependent.
    leave = scores[np.ix_(rest, cyc)]  # [outside dep, cycle head]
    leave_head = leave.argmax(axis=1)
    sub[: len(rest), c] = leave[np.arange(len(rest)), leave_head]
    sub[0, :] = -np.inf
    np.fill_diagonal(sub, -np.inf)
    sub_heads = _chu_liu_edmonds(sub)
    result = heads.copy()  # cycle nodes keep their cycle heads except the one that is entered
    for k in range(1, len(rest)):
        h = sub_heads[k]
        result[rest[k]] = cyc[leave_head[k]] if h == c else rest[h]
    h = sub_heads[c]
    result[cyc[enter_dep[h]]] = rest[h]
    return result


def tree_score(scores: np.ndarray, heads: np.ndarray) -> float:
    return float(scores[np.arange(1, len(heads)), heads[1:]].sum())


def decode_mst(scores: np.ndarray) -> np.ndarray:
    """Heads (``heads[0] = -1``) of the best dependency tree with exactly one ROOT child.

    ``scores[d, h]`` is the score of the arc h -> d for words 1..n and ROOT 0 (row 0 is ignored).
    Non-finite scores are treated as forbidden arcs but a tree is always returned."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0]
    if scores.shape != (n, n) or n < 2:
        raise ValueError(f"need an (n+1)x(n+1) score matrix with n >= 1, got {scores.shape}")
    s = np.where(np.isfinite(scores), scores, np.nan)
    # Replace forbidden / non-finite arcs by a score below every real one so that a tree still exists.
    floor = (np.nanmin(s) if np.isfinite(np.nanmin(s)) else 0.0) if not np.all(np.isnan(s)) else 0.0
    span = (np.nanmax(s) - floor) if not np.all(np.isnan(s)) else 0.0
    s = np.where(np.isnan(s), floor - (span + 1.0) * n, s)
    s[0, :] = -np.inf
    np.fill_diagonal(s, -np.inf)
    heads = _chu_liu_edmonds(s)
    root_children = np.flatnonzero(heads[1:] == 0) + 1
    if len(root_children) == 1:
        return heads
    return _best_single_root(s)


def _best_single_root(s: np.ndarray) -> np.ndarray:
    """The best tree with one ROOT child: each word r tried as that child, best score first.

    A word's tree can score at most its root arc plus every other word's best non-ROOT head, so the
    words are tried in order of that bound and the search stops once no bound reaches the best tree
    found: the same tree as trying every word (ties to the lowest r), at a fraction of the cost
    (an untrained parser's trees have many ROOT children)."""
    n = s.shape[0]
    best_head = s[1:, 1:].max(axis=1)  # diagonal is -inf: never a word's own head
    bound = s[1:, 0] + (best_head.sum() - best_head)
    order = np.argsort(-bound, kind="stable") + 1
    # Sums in another order round differently: a bound within this of the best still gets its try.
    slack = 1e-9 * (1.0 + float(np.abs(s[np.isfinite(s)]).sum()))
    best, best_score, best_r = None, -np.inf, n
    for r in order:
        if bound[r - 1] < best_score - slack:
            break
        constrained = s.copy()
        constrained[1:, 0] = -np.inf
        constrained[r, 0] = s[r, 0]
        cand = _chu_liu_edmonds(constrained)
        sc = tree_score(s, cand)
        if sc > best_score or (sc == best_score and r < best_r):
            best, best_score, best_r = cand, sc, r
    assert best is not None  # every candidate's score is finite (n >= 2: there is one)
    return best


def is_tree(heads: np.ndarray) -> bool:
    """True when ``heads`` (``heads[0]`` ignored) is a tree over 1..n with exactly one ROOT child."""
    heads = np.asarray(heads)
    n = len(heads)
    if n < 2 or np.any(heads[1:] < 0) or np.any(heads[1:] >= n):
        return False
    if int(np.sum(heads[1:] == 0)) != 1:
        return False
    return _find_cycle(heads) is None
