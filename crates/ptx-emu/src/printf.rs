//! Device `printf` formatting: the format string and the argument buffer that NVRTC packs
//! for `vprintf` (each argument at the next offset aligned to its size; floats are promoted
//! to double, `char`/`short` to int, pointers and strings are 8 bytes).
//!
//! Hand-written rather than a crate: the crates that format printf-style either need C
//! varargs or Rust's own format syntax; this needs C's conversions over a byte buffer.

/// Where the arguments come from: `read(offset, bytes)` returns the little-endian bits.
pub trait ArgSource {
    fn read(&self, offset: u64, bytes: u32) -> Option<u64>;
    /// The NUL-terminated string at a device address (for `%s`).
    fn string(&self, address: u64) -> Option<String>;
}

/// The formatted text and the number of arguments used (printf's return value).
pub fn format(fmt: &str, args: &dyn ArgSource) -> (String, u32) {
    let mut out = String::new();
    let mut offset = 0u64;
    let mut used = 0u32;
    let mut next = |bytes: u32| -> Option<u64> {
        offset = offset.div_ceil(bytes as u64) * bytes as u64;
        let v = args.read(offset, bytes);
        offset += bytes as u64;
        used += 1;
        v
    };
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.get(i) {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                '#' => spec.alt = true,
                _ => break,
            }
            i += 1;
        }
        let number = |i: &mut usize| -> Option<usize> {
            let start = *i;
            while chars.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            (*i > start).then(|| chars[start..*i].iter().collect::<String>().parse().unwrap_or(0))
        };
        if chars.get(i) == Some(&'*') {
            i += 1;
            spec.width = next(4).map(|v| v as i32).map(|w| {
                if w < 0 {
                    spec.left = true;
                }
                w.unsigned_abs() as usize
            });
        } else {
            spec.width = number(&mut i);
        }
        if chars.get(i) == Some(&'.') {
            i += 1;
            if chars.get(i) == Some(&'*') {
                i += 1;
                spec.precision = next(4).map(|v| (v as i32).max(0) as usize);
            } else {
                spec.precision = Some(number(&mut i).unwrap_or(0));
            }
        }
        let mut long = false;
        while let Some(&l) = chars.get(i) {
            match l {
                'l' | 'z' | 'j' | 't' | 'L' | 'q' => long = true,
                'h' => {}
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            out.push('%');
            break;
        };
        i += 1;
        let int_bytes = if long { 8 } else { 4 };
        let text = match conv {
            'd' | 'i' => next(int_bytes).map(|v| {
                let v = if long { v as i64 } else { v as u32 as i32 as i64 };
                spec.signed(v)
            }),
            'u' | 'x' | 'X' | 'o' => next(int_bytes).map(|v| {
                let v = if long { v } else { v & 0xFFFF_FFFF };
                spec.unsigned(v, conv)
            }),
            'c' => next(4).map(|v| spec.pad(((v as u8) as char).to_string(), false)),
            'p' => next(8).map(|v| spec.pad(format!("{v:#x}"), false)),
            's' => next(8).map(|v| {
                let s = if v == 0 {
                    "(null)".to_string()
                } else {
                    args.string(v).unwrap_or_else(|| "<bad string pointer>".into())
                };
                let s = match spec.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                };
                spec.pad(s, false)
            }),
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => next(8).map(|v| spec.float(f64::from_bits(v), conv)),
            other => Some(format!("%{other}")),
        };
        out.push_str(&text.unwrap_or_else(|| "<missing argument>".into()));
    }
    (out, used)
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

impl Spec {
    /// Pads `body` to the width; `numeric` allows zero padding after the sign.
    fn pad(&self, body: String, numeric: bool) -> String {
        let width = self.width.unwrap_or(0);
        let len = body.chars().count();
        if len >= width {
            return body;
        }
        let fill = width - len;
        if self.left {
            format!("{body}{}", " ".repeat(fill))
        } else if self.zero && numeric {
            let sign_len = body
                .char_indices()
                .take_while(|(_, c)| matches!(c, '-' | '+' | ' '))
                .count();
            let prefix_len = if body[sign_len..].starts_with("0x") || body[sign_len..].starts_with("0X") {
                sign_len + 2
            } else {
                sign_len
            };
            format!("{}{}{}", &body[..prefix_len], "0".repeat(fill), &body[prefix_len..])
        } else {
            format!("{}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    fn digits_with_precision(&self, digits: String) -> String {
        match self.precision {
            Some(0) if digits == "0" => String::new(),
            Some(p) if digits.len() < p => format!("{}{digits}", "0".repeat(p - digits.len())),
            _ => digits,
        }
    }

    fn signed(&self, v: i64) -> String {
        let digits = self.digits_with_precision(v.unsigned_abs().to_string());
        let zero_ok = self.precision.is_none();
        self.pad(format!("{}{digits}", self.sign(v < 0)), zero_ok)
    }

    fn unsigned(&self, v: u64, conv: char) -> String {
        let digits = match conv {
            'x' => format!("{v:x}"),
            'X' => format!("{v:X}"),
            'o' => format!("{v:o}"),
            _ => v.to_string(),
        };
        let digits = self.digits_with_precision(digits);
        let prefix = match conv {
            'x' if self.alt && v != 0 => "0x",
            'X' if self.alt && v != 0 => "0X",
            'o' if self.alt && !digits.starts_with('0') => "0",
            _ => "",
        };
        self.pad(format!("{prefix}{digits}"), self.precision.is_none())
    }

    fn float(&self, v: f64, conv: char) -> String {
        let upper = conv.is_ascii_uppercase();
        if !v.is_finite() {
            let s = if v.is_nan() {
                "nan".to_string()
            } else {
                format!("{}inf", self.sign(v < 0.0))
            };
            return self.pad(if upper { s.to_uppercase() } else { s }, false);
        }
        let p = self.precision.unwrap_or(6);
        let negative = v.is_sign_negative();
        let a = v.abs();
        let body = match conv.to_ascii_lowercase() {
            'f' => format!("{a:.p$}"),
            'e' => exponent_form(a, p),
            'a' => format!("{a:e}"),
            _ => {
                // %g: the shorter of %e and %f with p significant digits, trailing zeros cut.
                let p = p.max(1);
                let exp = if a == 0.0 { 0 } else { a.log10().floor() as i32 };
                let exp = {
                    // Rounding can carry into the next power of ten.
                    let e = exponent_form(a, p - 1);
                    e.rsplit('e').next().and_then(|x| x.parse::<i32>().ok()).unwrap_or(exp)
                };
                let s = if exp < -4 || exp >= p as i32 {
                    exponent_form(a, p - 1)
                } else {
                    format!("{a:.*}", (p as i32 - 1 - exp).max(0) as usize)
                };
                if self.alt { s } else { trim_zeros(&s) }
            }
        };
        let body = if upper { body.to_uppercase() } else { body };
        self.pad(format!("{}{body}", self.sign(negative)), true)
    }
}

/// `d.ddde+XX` with `p` digits after the point, as C prints it.
fn exponent_form(a: f64, p: usize) -> String {
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn trim_zeros(s: &str) -> String {
    let (mantissa, exp) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    format!("{mantissa}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf(Vec<u8>);
    impl ArgSource for Buf {
        fn read(&self, offset: u64, bytes: u32) -> Option<u64> {
            let o = offset as usize;
            let mut v = [0u8; 8];
            v[..bytes as usize].copy_from_slice(self.0.get(o..o + bytes as usize)?);
            Some(u64::from_le_bytes(v))
        }
        fn string(&self, address: u64) -> Option<String> {
            (address == 0x1000).then(|| "dbg".to_string())
        }
    }

    /// Packs arguments as NVRTC does: each at the next offset aligned to its size.
    fn pack(args: &[(u64, u32)]) -> Buf {
        let mut b = Vec::new();
        for &(v, bytes) in args {
            while b.len() % bytes as usize != 0 {
                b.push(0);
            }
            b.extend_from_slice(&v.to_le_bytes()[..bytes as usize]);
        }
        Buf(b)
    }

    #[test]
    fn formats_like_c() {
        let args = pack(&[
            (42, 4),
            ((-7i32) as u32 as u64, 4),
            (1.5f64.to_bits(), 8),
            (0x1000, 8),
            (255, 4),
        ]);
        let (s, used) = format("n=%d m=%5d f=%.2f s=%s x=%#x\n", &args);
        assert_eq!(s, "n=42 m=   -7 f=1.50 s=dbg x=0xff\n");
        assert_eq!(used, 5);
    }

    #[test]
    fn floats_and_padding() {
        let one = |v: f64, f: &str| format(f, &pack(&[(v.to_bits(), 8)])).0;
        assert_eq!(one(0.1, "%f"), "0.100000");
        assert_eq!(one(12345.678, "%e"), "1.234568e+04");
        assert_eq!(one(0.0001, "%g"), "0.0001");
        assert_eq!(one(1e-5, "%g"), "1e-05");
        assert_eq!(one(123456789.0, "%g"), "1.23457e+08");
        assert_eq!(one(100.0, "%g"), "100");
        assert_eq!(one(-2.5, "%08.3f"), "-002.500");
        assert_eq!(one(f64::INFINITY, "%f"), "inf");
        let int = |v: u64, f: &str| format(f, &pack(&[(v, 4)])).0;
        assert_eq!(int(5, "%-4d|"), "5   |");
        assert_eq!(int(5, "%04d"), "0005");
        assert_eq!(int(5, "%+d"), "+5");
        assert_eq!(int(65, "%c"), "A");
        assert_eq!(format("100%%", &pack(&[])).0, "100%");
        let long = format("%lld %lu", &pack(&[((-3i64) as u64, 8), (7, 8)])).0;
        assert_eq!(long, "-3 7");
    }
}
