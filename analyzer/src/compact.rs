//! Growth for collections that are short in most associations (a few
//! paths, addresses, events or TSNs in flight): they grow one slot at a
//! time while short, then by doubling as usual. With tens of thousands of
//! associations alive, the default first allocation of four or eight slots
//! is most of their memory.

use std::collections::VecDeque;

/// Length up to which the collections grow one slot at a time.
const SHORT: usize = 8;

/// `v.push(x)`, growing one slot at a time while `v` is short.
#[inline]
pub(crate) fn push<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() && v.len() < SHORT {
        v.reserve_exact(1);
    }
    v.push(x);
}

/// `v.push_back(x)`, growing one slot at a time while `v` is short.
#[inline]
pub(crate) fn push_back<T>(v: &mut VecDeque<T>, x: T) {
    if v.len() == v.capacity() && v.len() < SHORT {
        v.reserve_exact(1);
    }
    v.push_back(x);
}

/// Makes room for `len` elements in all, exactly while `v` is short.
#[inline]
pub(crate) fn reserve_for<T>(v: &mut Vec<T>, len: usize) {
    let additional = len.saturating_sub(v.len());
    if v.len() < SHORT {
        v.reserve_exact(additional);
    } else {
        v.reserve(additional);
    }
}
