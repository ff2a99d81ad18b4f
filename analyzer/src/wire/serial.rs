//! Serial number arithmetic (RFC 1982 §3.2) on 32-bit numbers, as SCTP
//! compares TSNs and ASCONF serial numbers (RFC 9260 §1.6, RFC 5061 §5.1):
//! `a` is before `b` when `b − a`, modulo 2³², is below 2³¹. The one
//! definition the tracker and the handover analysis compare with.
//!
//! RFC 1982 leaves two numbers exactly 2³¹ apart unordered; here the
//! difference is read as a signed 32-bit number, so of such a pair the one
//! subtracted from is before (`serial_lt(a, a + 2³¹)` and
//! `serial_lt(a + 2³¹, a)` both hold). A capture never compares numbers
//! that far apart: a sender may have at most 2³¹ − 1 TSNs outstanding.

/// `a` is before `b`.
pub fn serial_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a` is before `b` or equal to it.
pub fn serial_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// `a` is after `b`.
pub fn serial_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `a` is after `b` or equal to it.
pub fn serial_ge(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_wraps_at_two_to_the_32() {
        // RFC 1982 §3.2's example, in 32 bits: 0xFFFF_FFFF is before 0 and 1.
        assert!(serial_lt(0xFFFF_FFFF, 0));
        assert!(serial_lt(0xFFFF_FFFF, 1));
        assert!(serial_gt(0, 0xFFFF_FFFF));
        assert!(serial_lt(1, 2) && !serial_lt(2, 1) && !serial_lt(5, 5));
        assert!(serial_le(5, 5) && serial_ge(5, 5) && !serial_gt(5, 5));
        // The furthest ahead a number can be and still be after.
        assert!(serial_gt(0x7FFF_FFFF, 0));
        assert!(serial_lt(0x8000_0000, 0));
    }
}
