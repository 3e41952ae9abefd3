//! Join order by dynamic programming over the subsets of a FROM list's
//! relations (DPsize over bitmasks): the cheapest tree of every subset is
//! built from the cheapest trees of its two halves, for up to
//! [`DP_LIMIT`] relations (the binder orders more greedily).
//!
//! The cost of a tree is the sum of its joins' estimated output rows and
//! of their build sides' rows (a hash join builds on the smaller input,
//! the right one); scans cost the same in every order. Only halves that
//! a join condition connects are joined (no cross products) unless no
//! such tree covers every relation; then a second pass allows them.
//! The estimates come from the caller ([`crate::optimize::estimate`]
//! through the binder's key distinct values).

/// Relations ordered by dynamic programming at most; past it the binder
/// joins greedily (3^n splits).
pub(crate) const DP_LIMIT: usize = 10;

/// A join tree over relations `0..n`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    Leaf(usize),
    /// `right` is the build side (the smaller estimated input).
    Join {
        left: Box<Tree>,
        right: Box<Tree>,
        rows: f64,
    },
}

/// One side of a candidate join: its relations (bit `i`: relation `i`),
/// estimated rows and the largest base table below it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side {
    pub(crate) mask: u32,
    pub(crate) rows: f64,
    pub(crate) base: f64,
}

#[derive(Clone, Copy)]
struct Entry {
    cost: f64,
    rows: f64,
    base: f64,
    /// The build (right) half, 0 for a leaf; the probe half is the rest.
    right: u32,
}

/// The cheapest join tree of `inputs` (each a relation's estimated rows
/// and base rows); `estimate(a, b)` gives the rows of joining `a` and
/// `b`, `None` when no condition connects them. `None` when there are no
/// inputs or more than [`DP_LIMIT`].
pub(crate) fn best_tree(
    inputs: &[(f64, f64)],
    estimate: &dyn Fn(Side, Side) -> Option<f64>,
) -> Option<Tree> {
    let n = inputs.len();
    if n == 0 || n > DP_LIMIT {
        return None;
    }
    let full = (1u32 << n) - 1;
    for cross in [false, true] {
        let table = fill(inputs, estimate, cross);
        if table[full as usize].is_some() {
            return Some(tree_of(&table, full));
        }
    }
    None
}

fn fill(
    inputs: &[(f64, f64)],
    estimate: &dyn Fn(Side, Side) -> Option<f64>,
    cross: bool,
) -> Vec<Option<Entry>> {
    let n = inputs.len();
    let full = (1u32 << n) - 1;
    let mut table: Vec<Option<Entry>> = vec![None; full as usize + 1];
    for (i, &(rows, base)) in inputs.iter().enumerate() {
        table[1 << i] = Some(Entry {
            cost: 0.0,
            rows: rows.max(1.0),
            base,
            right: 0,
        });
    }
    // every subset after its subsets (they are smaller numbers)
    for mask in 1..=full {
        if mask.count_ones() < 2 {
            continue;
        }
        let low = mask & mask.wrapping_neg();
        let mut best: Option<Entry> = None;
        // each unordered split once: the half holding the lowest bit
        let mut sub = (mask - 1) & mask;
        while sub != 0 {
            if sub & low != 0 {
                let other = mask ^ sub;
                if let (Some(a), Some(b)) = (table[sub as usize], table[other as usize]) {
                    let side = |m: u32, e: Entry| Side {
                        mask: m,
                        rows: e.rows,
                        base: e.base,
                    };
                    let rows = match estimate(side(sub, a), side(other, b)) {
                        Some(r) => Some(r),
                        None if cross => Some(a.rows * b.rows),
                        None => None,
                    };
                    if let Some(rows) = rows {
                        let rows = rows.max(1.0);
                        let cost = a.cost + b.cost + rows + a.rows.min(b.rows);
                        // the build side: the smaller half (the one
                        // without the lowest relation on a tie)
                        let right = if a.rows < b.rows { sub } else { other };
                        if best.is_none_or(|e| cost < e.cost) {
                            best = Some(Entry {
                                cost,
                                rows,
                                base: a.base.max(b.base),
                                right,
                            });
                        }
                    }
                }
            }
            sub = (sub - 1) & mask;
        }
        table[mask as usize] = best;
    }
    table
}

fn tree_of(table: &[Option<Entry>], mask: u32) -> Tree {
    let e = table[mask as usize].expect("a planned subset");
    if e.right == 0 {
        return Tree::Leaf(mask.trailing_zeros() as usize);
    }
    Tree::Join {
        left: Box::new(tree_of(table, mask ^ e.right)),
        right: Box::new(tree_of(table, e.right)),
        rows: e.rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain 0 - 1 - 2 - 3 joined on keys: each join keeps the rows of
    /// the larger side scaled by the smaller side's fraction of its base.
    fn chain(inputs: &[(f64, f64)]) -> Option<Tree> {
        best_tree(inputs, &|a, b| {
            let connected = (a.mask << 1) & b.mask != 0 || (b.mask << 1) & a.mask != 0;
            connected.then(|| a.rows * b.rows / a.base.min(b.base).max(1.0))
        })
    }

    fn leaves(t: &Tree, out: &mut Vec<usize>) {
        match t {
            Tree::Leaf(i) => out.push(*i),
            Tree::Join { left, right, .. } => {
                leaves(left, out);
                leaves(right, out);
            }
        }
    }

    #[test]
    fn one_relation_is_a_leaf_and_too_many_are_refused() {
        assert_eq!(chain(&[(5.0, 5.0)]), Some(Tree::Leaf(0)));
        assert_eq!(chain(&[]), None);
        assert_eq!(chain(&[(1.0, 1.0); DP_LIMIT + 1]), None);
    }

    #[test]
    fn the_small_filtered_end_joins_first_and_builds() {
        // 0: big fact table, 1: medium, 2: small dimension, 3: one row
        let t = chain(&[(6e6, 6e6), (1.5e5, 1.5e6), (25.0, 25.0), (1.0, 5.0)]).unwrap();
        // the fact table probes at the top, the rest is built below it
        let Tree::Join { left, right, .. } = &t else {
            panic!("{t:?}")
        };
        assert_eq!(**left, Tree::Leaf(0), "{t:?}");
        let mut built = Vec::new();
        leaves(right, &mut built);
        built.sort();
        assert_eq!(built, vec![1, 2, 3], "{t:?}");
        // 2 and 3 join first (the deepest join)
        let Tree::Join { right: inner, .. } = right.as_ref() else {
            panic!("{t:?}")
        };
        let mut deepest = Vec::new();
        leaves(inner, &mut deepest);
        deepest.sort();
        assert_eq!(deepest, vec![2, 3], "{t:?}");
    }

    #[test]
    fn unconnected_relations_join_by_a_cross_product_only_when_needed() {
        // 0 - 1 connected, 2 alone: a cross product is the only way
        let t = best_tree(&[(10.0, 10.0), (10.0, 10.0), (2.0, 2.0)], &|a, b| {
            (a.mask | b.mask == 0b011).then_some(10.0)
        })
        .unwrap();
        let Tree::Join { left, right, rows } = &t else {
            panic!("{t:?}")
        };
        // the connected pair joins first; the cross product is on top
        let mut l = Vec::new();
        leaves(left, &mut l);
        l.sort();
        assert_eq!(
            (l, right.as_ref(), *rows),
            (vec![0, 1], &Tree::Leaf(2), 20.0)
        );
    }
}
