//! Exact decimal products for the `nbytes_mismatch` message (§8.2 F8), which must name the
//! product even when it exceeds 2^64−1.

use std::fmt::Write as _;

/// The exact product of `factors`, in decimal.
pub(crate) fn product_decimal(factors: &[u64]) -> String {
    // Little-endian base-2^32 limbs.
    let mut limbs: Vec<u64> = vec![1];
    for &factor in factors {
        let (lo, hi) = (factor & 0xffff_ffff, factor >> 32);
        let mut result = vec![0u64; limbs.len() + 2];
        for (part, shift) in [(lo, 0usize), (hi, 1usize)] {
            let mut carry = 0u64;
            for (i, &limb) in limbs.iter().enumerate() {
                let t = limb * part + result[i + shift] + carry;
                result[i + shift] = t & 0xffff_ffff;
                carry = t >> 32;
            }
            let mut i = limbs.len() + shift;
            while carry > 0 {
                let t = result[i] + carry;
                result[i] = t & 0xffff_ffff;
                carry = t >> 32;
                i += 1;
            }
        }
        while result.len() > 1 && result.last() == Some(&0) {
            result.pop();
        }
        limbs = result;
    }
    // Repeated division by 10^9.
    let mut chunks = Vec::new();
    while !(limbs.len() == 1 && limbs[0] == 0) {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | *limb;
            *limb = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem);
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    match chunks.split_last() {
        None => "0".to_owned(),
        Some((top, rest)) => {
            let mut out = top.to_string();
            for chunk in rest.iter().rev() {
                let _ = write!(out, "{chunk:09}");
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::product_decimal;

    #[test]
    fn exact_beyond_u64() {
        assert_eq!(product_decimal(&[]), "1");
        assert_eq!(product_decimal(&[0, 7]), "0");
        assert_eq!(product_decimal(&[6, 7]), "42");
        assert_eq!(
            product_decimal(&[u64::MAX, u64::MAX]),
            (u128::from(u64::MAX) * u128::from(u64::MAX)).to_string()
        );
        assert_eq!(
            product_decimal(&[u64::MAX, u64::MAX, 2]),
            "680564733841876926852962238568698216450"
        );
        assert_eq!(
            product_decimal(&[1 << 40, 1 << 40]),
            (1u128 << 80).to_string()
        );
    }
}
