/// Returns the largest value of xs, or None when it is empty.
pub fn largest(xs: &[i64]) -> Option<i64> {
    xs.iter().copied().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_largest() {
        assert_eq!(largest(&[3, 9, 4]), Some(9));
        assert_eq!(largest(&[]), None);
    }
}
