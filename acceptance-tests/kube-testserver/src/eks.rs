//! The EKS token mode: accepts bearer tokens shaped like the ones `aws eks get-token` prints
//! (`k8s-aws-v1.` + base64url of a presigned STS GetCallerIdentity URL). Only the shape is
//! checked (there is no STS to forward the URL to): prefix, encoding, STS host, action, signed
//! headers including `x-k8s-aws-id`, expiry, credential scope, and a date within 15 minutes.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;

/// Why `token` is not a well-formed EKS token, or `Ok` with the token's region.
pub fn check_token(token: &str, now: SystemTime) -> Result<String, String> {
    let body = token.strip_prefix("k8s-aws-v1.").ok_or("no k8s-aws-v1. prefix")?;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|e| format!("not base64url without padding: {e}"))?;
    let url = String::from_utf8(url).map_err(|_| "not UTF-8")?;
    let rest = url.strip_prefix("https://").ok_or("not an https URL")?;
    let (host, query) = rest.split_once("/?").ok_or("no path / with a query")?;
    let region = host
        .strip_prefix("sts.")
        .and_then(|h| h.strip_suffix(".amazonaws.com"))
        .filter(|r| !r.is_empty() && !r.contains('.'))
        .ok_or_else(|| format!("host {host} is not sts.<region>.amazonaws.com"))?;
    let mut q = HashMap::new();
    for kv in query.split('&') {
        let (k, v) = kv.split_once('=').ok_or("query pair without =")?;
        q.insert(k.to_string(), percent_decode(v)?);
    }
    let get = |k: &str| q.get(k).map(String::as_str).ok_or_else(|| format!("no {k}"));
    if get("Action")? != "GetCallerIdentity" {
        return Err("Action is not GetCallerIdentity".into());
    }
    if get("X-Amz-Algorithm")? != "AWS4-HMAC-SHA256" {
        return Err("X-Amz-Algorithm is not AWS4-HMAC-SHA256".into());
    }
    let signed: Vec<&str> = get("X-Amz-SignedHeaders")?.split(';').collect();
    if !signed.contains(&"host") || !signed.contains(&"x-k8s-aws-id") {
        return Err(format!(
            "X-Amz-SignedHeaders {signed:?} lacks host or x-k8s-aws-id"
        ));
    }
    let expires: u64 = get("X-Amz-Expires")?
        .parse()
        .map_err(|_| "X-Amz-Expires is not a number")?;
    if expires == 0 || expires > 900 {
        return Err(format!("X-Amz-Expires {expires} is not in 1..=900"));
    }
    let credential = get("X-Amz-Credential")?;
    let scope: Vec<&str> = credential.split('/').collect();
    if scope.len() != 5 || scope[2] != region || scope[3] != "sts" || scope[4] != "aws4_request" {
        return Err(format!(
            "X-Amz-Credential {credential} is not KEY/DATE/{region}/sts/aws4_request"
        ));
    }
    let signature = get("X-Amz-Signature")?;
    if signature.len() != 64 || !signature.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err("X-Amz-Signature is not 64 hex digits".into());
    }
    let signed_at = parse_amz_date(get("X-Amz-Date")?).ok_or("X-Amz-Date is not YYYYMMDDTHHMMSSZ")?;
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if now.abs_diff(signed_at) > 15 * 60 {
        return Err("the token is older than 15 minutes (or from the future)".into());
    }
    Ok(region.to_string())
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or("truncated %-escape")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| "bad %-escape")?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "escaped bytes are not UTF-8".into())
}

/// Seconds since the epoch of `YYYYMMDDTHHMMSSZ`.
fn parse_amz_date(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<u64>().ok();
    let (y, m, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (hh, mm, ss) = (n(9..11)?, n(11..13)?, n(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    // days from civil date (proleptic Gregorian)
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn token_for(url: &str) -> String {
        format!(
            "k8s-aws-v1.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url)
        )
    }

    const GOOD: &str = "https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15\
        &X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20150830%2Feu-west-1%2Fsts%2Faws4_request\
        &X-Amz-Date=20150830T123600Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id\
        &X-Amz-Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn at() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_440_938_160 + 60)
    }

    #[test]
    fn a_well_formed_token_is_accepted() {
        assert_eq!(check_token(&token_for(GOOD), at()), Ok("eu-west-1".to_string()));
    }

    #[test]
    fn malformed_tokens_are_rejected() {
        let cases = [
            GOOD.replace("GetCallerIdentity", "AssumeRole"),
            GOOD.replace("sts.eu-west-1.amazonaws.com", "evil.example.com"),
            GOOD.replace("host%3Bx-k8s-aws-id", "host"),
            GOOD.replace("X-Amz-Expires=60", "X-Amz-Expires=3600"),
            GOOD.replace("%2Fsts%2F", "%2Fs3%2F"),
        ];
        for url in &cases {
            assert!(check_token(&token_for(url), at()).is_err(), "{url}");
        }
        assert!(check_token("plain-token", at()).is_err());
        assert!(check_token(&format!("{}==", token_for(GOOD)), at()).is_err());
        let late = at() + Duration::from_secs(16 * 60);
        assert!(check_token(&token_for(GOOD), late).is_err());
    }
}
