//! The valid name a misspelled key most likely meant.
//!
//! In order: the attribute whose API (wire) name the key is (a YAML manifest's camelCase
//! spelling, or an explicitly named API field); the attribute the key's snake_case form is
//! (`expireAfter` → `expire_after`); one equal but for case, `_` and `-`; else the closest by
//! edit distance (optimal string alignment, so a swapped pair of letters is one edit), if it
//! is close enough to be a typo of it.

use crate::terraform::framework::schema::snake_case;

/// A candidate: the attribute's name and its API field name, if it has one.
pub(super) struct Candidate<'n> {
    pub name: &'n str,
    pub wire: Option<String>,
}

pub(super) fn nearest<'n>(key: &str, candidates: &[Candidate<'n>]) -> Option<&'n str> {
    if let Some(c) = candidates.iter().find(|c| c.wire.as_deref() == Some(key)) {
        return Some(c.name);
    }
    let snake = snake_case(key);
    if let Some(c) = candidates.iter().find(|c| c.name == snake) {
        return Some(c.name);
    }
    let normal = normalize(key);
    if let Some(c) = candidates.iter().find(|c| normalize(c.name) == normal) {
        return Some(c.name);
    }
    let limit = 1 + normal.chars().count() / 5;
    candidates
        .iter()
        .map(|c| (distance(&normal, &normalize(c.name)), c.name))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each cost one.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, row) in d.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> Candidate<'_> {
        Candidate {
            name,
            wire: Some(crate::terraform::framework::schema::camel_case(name)),
        }
    }

    #[test]
    fn camel_case_names_its_attribute_exactly() {
        let names = [
            c("expire_after"),
            c("termination_grace_period"),
            c("node_class_ref"),
        ];
        assert_eq!(nearest("expireAfter", &names), Some("expire_after"));
        assert_eq!(nearest("nodeClassRef", &names), Some("node_class_ref"));
        assert_eq!(nearest("NodeClassRef", &names), Some("node_class_ref"));
        assert_eq!(nearest("expire_afterr", &names), Some("expire_after"));
        assert_eq!(nearest("expire_atfer", &names), Some("expire_after"));
        assert_eq!(nearest("replicas", &names), None);
    }

    #[test]
    fn explicit_wire_names_and_acronyms() {
        let names = [
            Candidate {
                name: "ami_selector_terms",
                wire: Some("amiSelectorTerms".into()),
            },
            Candidate {
                name: "kms_key_id",
                wire: Some("kmsKeyID".into()),
            },
            c("http_tokens"),
        ];
        assert_eq!(nearest("kmsKeyID", &names), Some("kms_key_id"));
        assert_eq!(nearest("HTTPTokens", &names), Some("http_tokens"));
        assert_eq!(snake_case("HTTPTokens"), "http_tokens");
        assert_eq!(
            snake_case("httpPutResponseHopLimit"),
            "http_put_response_hop_limit"
        );
        assert_eq!(snake_case("ipv4PrefixSize"), "ipv4_prefix_size");
    }

    #[test]
    fn distance_counts_a_swap_as_one() {
        assert_eq!(distance("after", "atfer"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
