//! IP addresses as KubeVirt's API types read them.
//!
//! KubeVirt's decoder rewrites DNS nameservers and DHCP NTP servers that parse as IP addresses
//! into their canonical text, and parses them the lenient way Kubernetes keeps for stored
//! data (`k8s.io/utils/net.ParseIPSloppy`, Go's parser before 1.17): IPv4 parts may carry
//! leading zeros (read as decimal), IPv6 groups any number of hex digits up to `ffff`, and an
//! IPv6 address may end in an IPv4 one. Rust's parser is strict, hence this module.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The largest number a part may reach while it is read; longer runs of digits fail.
const BIG: u32 = 0xFF_FFFF;

/// `text` as an IP address, read leniently; `None` when it is not one.
pub fn parse_lenient(text: &str) -> Option<IpAddr> {
    // The first `.` or `:` decides the family.
    match text.bytes().find(|b| *b == b'.' || *b == b':')? {
        b'.' => ipv4(text).map(IpAddr::V4),
        _ => ipv6(text).map(IpAddr::V6),
    }
}

/// `text` as a CIDR (`address/prefix`), read leniently as Kubernetes' `ParseCIDRSloppy` does:
/// the address as IPv4, else as IPv6, and a decimal prefix no longer than the address. The
/// address as written (not masked) and the prefix; `None` when it is not one.
pub fn parse_cidr_lenient(text: &str) -> Option<(IpAddr, u32)> {
    let (address, prefix) = text.split_once('/')?;
    let (ip, bits) = match ipv4(address) {
        Some(v4) => (IpAddr::V4(v4), 32),
        None => (IpAddr::V6(ipv6(address)?), 128),
    };
    let (n, used) = decimal(prefix.as_bytes())?;
    (used == prefix.len() && n <= bits).then_some((ip, n))
}

/// The canonical text KubeVirt's decoder gives a DNS nameserver or NTP server: the address's
/// canonical text when `text` reads as one, else `None` (the text is kept).
pub fn sanitized(text: &str) -> Option<String> {
    parse_lenient(text).map(canonical)
}

/// The canonical text KubeVirt's decoder gives a pod network's `vmNetworkCIDR`: the address's
/// canonical text and the prefix when `text` reads as a CIDR, else `None` (the text is kept).
pub fn sanitized_cidr(text: &str) -> Option<String> {
    parse_cidr_lenient(text).map(|(ip, prefix)| format!("{}/{prefix}", canonical(ip)))
}

/// An address's canonical text, as Go's `IP.String` writes it: an IPv4-mapped IPv6 address as
/// plain IPv4.
pub fn canonical(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}

/// Whether the address is IPv4, plainly or mapped into IPv6 (Go's `To4` is not nil).
pub fn is_v4(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    }
}

/// Leading decimal digits of `s`: their value and count, `None` when there are none or the
/// value grows too large.
fn decimal(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut count = 0;
    for &b in s.iter().take_while(|b| b.is_ascii_digit()) {
        n = n * 10 + u32::from(b - b'0');
        if n >= BIG {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some((n, count))
}

/// Leading hex digits of `s`, as [`decimal`] does.
fn hex(s: &[u8]) -> Option<(u32, usize)> {
    let mut n = 0u32;
    let mut count = 0;
    for &b in s {
        let Some(d) = (b as char).to_digit(16) else {
            break;
        };
        n = n * 16 + d;
        if n >= BIG {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some((n, count))
}

/// Four decimal parts from 0 to 255 split by `.`, nothing after.
fn ipv4(text: &str) -> Option<Ipv4Addr> {
    let mut s = text.as_bytes();
    let mut octets = [0u8; 4];
    for (i, octet) in octets.iter_mut().enumerate() {
        if i > 0 {
            s = s.strip_prefix(b".")?;
        }
        let (n, used) = decimal(s)?;
        *octet = u8::try_from(n).ok()?;
        s = &s[used..];
    }
    s.is_empty().then(|| Ipv4Addr::from(octets))
}

/// Up to eight hex groups split by `:`, one `::` for a run of zero groups, and possibly an
/// IPv4 address in place of the last two groups.
fn ipv6(text: &str) -> Option<Ipv6Addr> {
    let mut s = text.as_bytes();
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if let Some(rest) = s.strip_prefix(b"::") {
        ellipsis = Some(0);
        s = rest;
        if s.is_empty() {
            return Some(Ipv6Addr::UNSPECIFIED);
        }
    }
    let mut i = 0;
    while i < 16 {
        let (n, used) = hex(s)?;
        if n > 0xFFFF {
            return None;
        }
        if s.get(used) == Some(&b'.') {
            // A trailing IPv4 address, where it fits.
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return None;
            }
            let v4 = ipv4(std::str::from_utf8(s).ok()?)?;
            ip[i..i + 4].copy_from_slice(&v4.octets());
            s = &[];
            i += 4;
            break;
        }
        ip[i] = (n >> 8) as u8;
        ip[i + 1] = n as u8;
        i += 2;
        s = &s[used..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    match ellipsis {
        Some(at) if i < 16 => {
            // Move the groups after the ellipsis to the end, zeros in between.
            let gap = 16 - i;
            ip.copy_within(at..i, at + gap);
            ip[at..at + gap].fill(0);
        }
        None if i < 16 => return None,
        // An ellipsis stands for at least one zero group.
        Some(_) => return None,
        None => {}
    }
    Some(Ipv6Addr::from(ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<String> {
        sanitized(text)
    }

    #[test]
    fn cidrs_keep_their_address_unmasked_and_a_plain_prefix() {
        for (given, canonical) in [
            ("10.0.2.0/24", "10.0.2.0/24"),
            ("010.0.2.05/024", "10.0.2.5/24"),
            ("::ffff:10.0.2.0/120", "10.0.2.0/120"),
            ("FD10:0:2::/120", "fd10:0:2::/120"),
        ] {
            assert_eq!(sanitized_cidr(given).as_deref(), Some(canonical), "{given}");
        }
        for bad in [
            "10.0.2.0",
            "10.0.2.0/33",
            "fd10::/129",
            "10.0.2.0/",
            "10.0.2.0/+8",
            "x/8",
        ] {
            assert_eq!(sanitized_cidr(bad), None, "{bad}");
        }
        assert_eq!(sanitized("01.2.3.4").as_deref(), Some("1.2.3.4"));
        assert_eq!(sanitized("ntp.example.com"), None);
    }

    #[test]
    fn ipv4_parts_may_have_leading_zeros_read_as_decimal() {
        assert_eq!(read("01.2.3.4").as_deref(), Some("1.2.3.4"));
        assert_eq!(read("010.0.0.0010").as_deref(), Some("10.0.0.10"));
        assert_eq!(read("1.2.3.4"), Some("1.2.3.4".into()));
    }

    #[test]
    fn ipv4_refuses_what_go_refuses() {
        for bad in [
            "256.1.1.1",
            "1.2.3",
            "1.2.3.4.5",
            "1.2.3.4 ",
            "1..3.4",
            "0x1.2.3.4",
            "99999999.1.1.1",
            "",
            "dns.example.com",
        ] {
            assert_eq!(read(bad), None, "{bad}");
        }
    }

    #[test]
    fn ipv6_is_read_and_written_canonically() {
        assert_eq!(read("::1").as_deref(), Some("::1"));
        assert_eq!(read("::").as_deref(), Some("::"));
        assert_eq!(read("2001:DB8:0:0:0:0:0:1").as_deref(), Some("2001:db8::1"));
        assert_eq!(read("2001:db8::").as_deref(), Some("2001:db8::"));
        assert_eq!(read("00002001:db8::1").as_deref(), Some("2001:db8::1"));
        assert_eq!(read("::ffff:1.2.3.4").as_deref(), Some("1.2.3.4"));
        assert_eq!(read("::ffff:01.2.3.4").as_deref(), Some("1.2.3.4"));
        assert_eq!(read("::ffff:0102:0304").as_deref(), Some("1.2.3.4"));
        assert_eq!(
            read("1:2:3:4:5:6:1.2.3.4").as_deref(),
            Some("1:2:3:4:5:6:102:304")
        );
    }

    #[test]
    fn ipv6_refuses_what_go_refuses() {
        for bad in [
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7",
            "1::2::3",
            "1:2:3:4:5:6:7::8",
            "1:2:3:4:5:1.2.3.4",
            "fe80::1%eth0",
            "10000::1",
            ":1",
            "1:",
            "::1:",
        ] {
            assert_eq!(read(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_plain_and_mapped_ipv4_count_as_ipv4() {
        let v4 = |t: &str| parse_lenient(t).is_some_and(is_v4);
        assert!(v4("1.2.3.4"));
        assert!(v4("::ffff:1.2.3.4"));
        assert!(!v4("::1"));
        assert!(!v4("::1.2.3.4"));
    }
}
