//! Exact element counts of boxes and tensors, and the one arbitrary-precision number type.
//!
//! A valid fragment's volume always fits in a u64 (its `nbytes` is volume × itemsize,
//! §8.2 F8), so sums of fragment volumes fit in a u128. A tensor's volume is a product of
//! up to ndim u64s and has no bound, so it is an arbitrary-precision [`Natural`]; so is the
//! product that the `nbytes_mismatch` message names (§8.2 F8), which may exceed 2^64−1.

use std::cmp::Ordering;
use std::fmt::Write as _;

/// A natural number of any size: little-endian base-2^32 limbs, no trailing zero limb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Natural {
    limbs: Vec<u32>,
}

impl Natural {
    /// The value of `v`.
    pub(crate) fn from_u128(mut v: u128) -> Natural {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push((v & 0xffff_ffff) as u32);
            v >>= 32;
        }
        Natural { limbs }
    }

    /// The product of `factors` (1 for none).
    pub(crate) fn product(factors: &[u64]) -> Natural {
        let mut n = Natural::from_u128(1);
        for &f in factors {
            n.mul_u64(f);
        }
        n
    }

    fn mul_u64(&mut self, factor: u64) {
        let (lo, hi) = (factor & 0xffff_ffff, factor >> 32);
        let mut result = vec![0u32; self.limbs.len() + 3];
        for (part, shift) in [(lo, 0usize), (hi, 1usize)] {
            let mut carry = 0u64;
            for (i, &limb) in self.limbs.iter().enumerate() {
                let t = u64::from(limb) * part + u64::from(result[i + shift]) + carry;
                result[i + shift] = (t & 0xffff_ffff) as u32;
                carry = t >> 32;
            }
            let mut i = self.limbs.len() + shift;
            while carry > 0 {
                let t = u64::from(result[i]) + carry;
                result[i] = (t & 0xffff_ffff) as u32;
                carry = t >> 32;
                i += 1;
            }
        }
        self.limbs = result;
        self.trim();
    }

    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }

    /// The value as a u128, if it fits.
    pub(crate) fn to_u128(&self) -> Option<u128> {
        if self.limbs.len() > 4 {
            return None;
        }
        Some(
            self.limbs
                .iter()
                .rev()
                .fold(0u128, |acc, &l| (acc << 32) | u128::from(l)),
        )
    }

    /// Compares with a u128.
    pub(crate) fn cmp_u128(&self, other: u128) -> Ordering {
        match self.to_u128() {
            Some(v) => v.cmp(&other),
            None => Ordering::Greater,
        }
    }

    /// `self - other`; `None` when `other` is larger.
    pub(crate) fn checked_sub_u128(&self, other: u128) -> Option<Natural> {
        if self.cmp_u128(other) == Ordering::Less {
            return None;
        }
        let rhs = Natural::from_u128(other);
        let mut limbs = self.limbs.clone();
        let mut borrow = 0i64;
        for (i, limb) in limbs.iter_mut().enumerate() {
            let r = i64::from(rhs.limbs.get(i).copied().unwrap_or(0));
            let mut t = i64::from(*limb) - r - borrow;
            borrow = i64::from(t < 0);
            if t < 0 {
                t += 1 << 32;
            }
            *limb = u32::try_from(t).unwrap_or(0);
        }
        let mut n = Natural { limbs };
        n.trim();
        Some(n)
    }

    /// Decimal digits, no sign, no leading zeros (`0` for zero).
    pub(crate) fn to_decimal(&self) -> String {
        if let Some(v) = self.to_u128() {
            return v.to_string();
        }
        let mut limbs = self.limbs.clone();
        let mut chunks: Vec<u32> = Vec::new();
        while !limbs.is_empty() {
            let mut rem = 0u64;
            for limb in limbs.iter_mut().rev() {
                let cur = (rem << 32) | u64::from(*limb);
                *limb = u32::try_from(cur / 1_000_000_000).unwrap_or(0);
                rem = cur % 1_000_000_000;
            }
            chunks.push(u32::try_from(rem).unwrap_or(0));
            while limbs.last() == Some(&0) {
                limbs.pop();
            }
        }
        let mut text = chunks
            .pop()
            .map_or_else(|| "0".to_owned(), |c| c.to_string());
        for chunk in chunks.iter().rev() {
            let _ = write!(text, "{chunk:09}");
        }
        text
    }
}

/// The product of `factors` as a u128, if it fits.
pub(crate) fn product_u128(factors: &[u64]) -> Option<u128> {
    factors
        .iter()
        .try_fold(1u128, |acc, &f| acc.checked_mul(u128::from(f)))
}

#[cfg(test)]
mod tests {
    use super::{product_u128, Natural};

    #[test]
    fn products_and_differences_are_exact() {
        let n = Natural::product(&[u64::MAX, u64::MAX, 3]);
        // (2^64-1)^2 * 3, computed with Python.
        assert_eq!(n.to_decimal(), "1020847100762815390279443357853047324675");
        assert_eq!(n.to_u128(), None);
        let small = Natural::product(&[4, 6]);
        assert_eq!(small.to_u128(), Some(24));
        assert_eq!(small.checked_sub_u128(24).unwrap().to_decimal(), "0");
        assert_eq!(small.checked_sub_u128(25), None);
        let big = Natural::product(&[1 << 63, 1 << 63]);
        assert_eq!(big.to_decimal(), "85070591730234615865843651857942052864");
        let diff = Natural::product(&[u64::MAX, u64::MAX, u64::MAX])
            .checked_sub_u128(u128::MAX)
            .unwrap();
        assert_eq!(
            diff.to_decimal(),
            "6277101735386680762474659955523912562304197246958090321920"
        );
        assert_eq!(product_u128(&[u64::MAX, 2]), Some(u128::from(u64::MAX) * 2));
        assert_eq!(product_u128(&[u64::MAX, u64::MAX, 2]), None);
    }

    #[test]
    fn decimal_products_are_exact_beyond_u64() {
        let decimal = |factors: &[u64]| Natural::product(factors).to_decimal();
        assert_eq!(decimal(&[]), "1");
        assert_eq!(decimal(&[0, 7]), "0");
        assert_eq!(decimal(&[6, 7]), "42");
        assert_eq!(
            decimal(&[u64::MAX, u64::MAX]),
            (u128::from(u64::MAX) * u128::from(u64::MAX)).to_string()
        );
        assert_eq!(
            decimal(&[u64::MAX, u64::MAX, 2]),
            "680564733841876926852962238568698216450"
        );
        assert_eq!(decimal(&[1 << 40, 1 << 40]), (1u128 << 80).to_string());
    }
}
